"""Reading commands work while another process writes a run to the same SQLite database (WAL)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

from typer.testing import CliRunner

from evolve.cli.app import app
from evolve.report.data import collect
from evolve.report.status import run_overview
from evolve.report.tree import as_json, load_lineage
from evolve.store import LineageStore

WRITER = textwrap.dedent("""
    import sys
    from evolve.harness import Edit, Harness, Section
    from evolve.store import LineageStore, RolloutRecord
    import pathlib, time
    store = LineageStore(sys.argv[1])
    n = int(sys.argv[2])
    flag = pathlib.Path(sys.argv[3])
    parent = None
    for i in range(n):
        if i == n // 2:  # halfway, give the reader (up to a minute) to see a part-written run
            deadline = time.monotonic() + 60
            while not flag.exists() and time.monotonic() < deadline:
                time.sleep(0.01)
        h = Harness(system=(Section(name="role", text=f"variant {i}"),))
        edit = Edit(op="replace", component="system", target="role", value=f"variant {i}", hypothesis=f"try {i}")
        cid = f"c{i}"
        store.add_candidate(cid, "live", h, parent_id=parent, round=i // 4, status="pending",
                            edits=[edit] if parent else [])
        store.add_rollouts([RolloutRecord("live", h.version, "b", "validation", f"t{k}", 1.0, candidate_id=cid)
                            for k in range(3)])
        store.update_candidate(cid, status="accepted" if i % 3 == 0 else "rejected_acceptance", val_score=i / n)
        if i % 3 == 0:
            parent = cid
            store.put_state("live", "incumbent", cid)
        store.heartbeat("live")
    store.update_run("live", status="finished")
""")


def _consistent(data: dict) -> None:
    ids = {c["id"] for c in data["candidates"]}
    for c in data["candidates"]:
        assert c["parent_id"] is None or c["parent_id"] in ids


def test_readers_during_writes(tmp_path):
    url = f"sqlite:///{tmp_path / 'live.db'}"
    LineageStore(url).create_run("live", {"budget": 1000}, benchmark="b", model="mock", preset="rrsi")
    n = 60
    flag = tmp_path / "seen-mid-run"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, url, str(n), str(flag)], stderr=subprocess.PIPE,
                              text=True)
    reader = LineageStore(url)
    seen: list[int] = []
    cli_reads = 0
    try:
        while writer.poll() is None:
            data = as_json(load_lineage(reader, "live"))
            _consistent(data)
            overview = run_overview(reader, reader.get_run("live"))
            assert overview["rollouts"] >= 3 * (len(data["candidates"]) - 1)
            collect(reader, "live")
            seen.append(len(data["candidates"]))
            if 0 < seen[-1] < n:
                flag.touch()
            if cli_reads < 3:
                result = CliRunner().invoke(app, ["lineage", "live", "--format", "json", "--db", url])
                assert result.exit_code == 0, result.output
                _consistent(json.loads(result.output))
                cli_reads += 1
            time.sleep(0.01)
    finally:
        _, err = writer.communicate(timeout=120)
    assert writer.returncode == 0, err
    assert seen == sorted(seen), "a reader saw the lineage shrink"
    assert any(0 < k < n for k in seen), f"no read happened mid-run: {seen[:5]}..."
    final = as_json(load_lineage(reader, "live"))
    assert len(final["candidates"]) == n and reader.get_run("live")["status"] == "finished"
