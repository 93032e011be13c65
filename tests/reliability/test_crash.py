"""Crash safety: SIGKILL at seeded random SQL statements of whole runs, then resume; two runs writing to
one SQLite file at once; `evolve lineage` reading while runs write.

Kill points are statements, not times: a forked copy of the test process runs the engine and kills
itself with SIGKILL just before its N-th SQL statement (N drawn by a seeded RNG over the statements
an uninterrupted run executes), so kills land inside transactions, between them, during migrations,
in the final report: anywhere. The database is then resumed (or, when the kill came before the run
row existed, the run is started again) and every row is compared with an uninterrupted run's.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from engine_mocks import RUN_OPTIONS, backends
from reliability_helpers import faulty_backends, fingerprint
from sqlalchemy import Engine, event
from typer.testing import CliRunner

from evolve import api
from evolve.cli import app
from evolve.store import LineageStore

ROOT = Path(__file__).resolve().parents[2]
OPTIONS = {**RUN_OPTIONS, "rounds": 2}


def make_backends(faulty: bool):
    return faulty_backends(0.3, seed=4) if faulty else backends()


class StatementCounter:
    """Counts SQL statements of every engine of this process; optionally SIGKILLs before statement `kill_at`."""

    def __init__(self, kill_at: int | None = None) -> None:
        self.count = 0
        self.kill_at = kill_at

    def __call__(self, *_args) -> None:
        self.count += 1
        if self.kill_at is not None and self.count >= self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

    def __enter__(self) -> StatementCounter:
        event.listen(Engine, "before_cursor_execute", self)
        return self

    def __exit__(self, *_exc) -> None:
        event.remove(Engine, "before_cursor_execute", self)


def start_or_resume(db: str, faulty: bool) -> None:
    policy, helper = make_backends(faulty)
    store = LineageStore(db)
    exists = any(r["id"] == "k" for r in store.list_runs())
    store.close()
    if exists:
        api.resume("k", db=db, policy=policy, helper=helper)
    else:
        api.run(db=db, run_id="k", policy=policy, helper=helper, **OPTIONS)


def killed_child(db: str, faulty: bool, kill_at: int) -> int:
    """Run (or resume) in a forked process that SIGKILLs itself before SQL statement `kill_at`; its wait status."""
    pid = os.fork()
    if pid == 0:  # the child never returns into pytest
        code = 0
        signal.alarm(300)  # a child stuck on a lock inherited through fork dies instead of hanging the test
        try:
            with StatementCounter(kill_at):
                start_or_resume(db, faulty)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return status


def reference(tmp_path: Path, faulty: bool) -> tuple[dict, int]:
    db = str(tmp_path / f"reference-{faulty}.db")
    with StatementCounter() as counter:
        start_or_resume(db, faulty)
    return fingerprint(db, "k"), counter.count


def kill_and_resume_trials(tmp_path: Path, trials: int, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    expected = {f: reference(tmp_path, f) for f in (False, True)}
    figures = {"trials": 0, "kills": 0, "double_kills": 0, "restarted": 0, "faulty": 0}
    for trial in range(trials):
        faulty = trial % 2 == 1
        want, statements = expected[faulty]
        db = str(tmp_path / f"kill-{trial}.db")
        kills = 2 if trial % 3 == 2 else 1  # every third trial is killed again while resuming
        for attempt in range(kills):
            status = killed_child(db, faulty, rng.randint(1, statements - 5))
            if attempt and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
                break  # a resume does less than a whole run: it may finish before the drawn statement
            assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, status
            figures["kills"] += 1
            figures["double_kills"] += attempt == 1
        store = LineageStore(db)
        runs = {r["id"]: r["status"] for r in store.list_runs()}
        store.close()
        figures["restarted"] += "k" not in runs
        if runs.get("k") != "finished":
            start_or_resume(db, faulty)
        assert fingerprint(db, "k") == want, f"trial {trial}"
        with sqlite3.connect(db) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        figures["trials"] += 1
        figures["faulty"] += faulty
    return figures


def test_sigkill_at_seeded_statements_then_resume_loses_and_duplicates_nothing(tmp_path):
    figures = kill_and_resume_trials(tmp_path, trials=6, seed=11)
    assert figures["trials"] == 6 and figures["kills"] >= 6 and figures["faulty"] == 3


@pytest.mark.slow
def test_sigkill_sweep(tmp_path):
    """The longer sweep (EVOLVE_KILL_TRIALS trials, default 30); prints its figures."""
    trials = int(os.environ.get("EVOLVE_KILL_TRIALS", "30"))
    figures = kill_and_resume_trials(tmp_path, trials=trials, seed=2024)
    print(f"kill sweep: {json.dumps(figures)}")
    assert figures["trials"] == trials


WRITER = """
import sys
sys.path[:0] = [{root!r} + "/tests/loop", {root!r} + "/tests/reliability"]
from engine_mocks import RUN_OPTIONS, backends
from evolve import api
policy, helper = backends(delay=0.001)
api.run(db={db!r}, run_id={run_id!r}, policy=policy, helper=helper, **{{**RUN_OPTIONS, "rounds": 2}})
"""


def read_lineage_until(db: str, run_ids: list[str], procs: list[subprocess.Popen]) -> dict[str, int]:
    """`evolve lineage RUN --format json` in a loop (in-process) while `procs` run; counts reads by outcome."""
    runner = CliRunner()
    counts = {"reads": 0, "candidates": 0}
    while any(p.poll() is None for p in procs):
        for run_id in run_ids:
            store = LineageStore(db)
            started = any(r["id"] == run_id for r in store.list_runs())
            store.close()
            if not started:
                continue
            result = runner.invoke(app, ["lineage", run_id, "--db", db, "--format", "json"])
            assert result.exit_code == 0, result.output
            counts["candidates"] += len(json.loads(result.stdout)["candidates"])
            counts["reads"] += 1
        time.sleep(0.02)
    return counts


def test_two_runs_share_one_sqlite_file_while_readers_read(tmp_path):
    db = str(tmp_path / "shared.db")
    LineageStore(db).close()
    procs = [subprocess.Popen([sys.executable, "-c", WRITER.format(root=str(ROOT), db=db, run_id=r)], cwd=ROOT)
             for r in ("runA", "runB")]
    outputs: list[subprocess.CompletedProcess] = []
    thread = threading.Thread(target=cli_reader, args=(db, "runA", procs, outputs))
    thread.start()
    try:
        counts = read_lineage_until(db, ["runA", "runB"], procs)
    finally:
        for p in procs:
            p.wait(180)
        thread.join(180)
    assert [p.returncode for p in procs] == [0, 0]
    assert counts["reads"] >= 2 and outputs, "the readers should have read during the runs"
    for done in outputs:  # `evolve lineage` as a user runs it, in its own process
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        assert json.loads(done.stdout)["candidates"]
    print(f"concurrent writers: 2 runs, {counts['reads']} in-process and {len(outputs)} subprocess lineage reads")
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    alone = str(tmp_path / "alone.db")
    policy, helper = backends()
    api.run(db=alone, run_id="runA", policy=policy, helper=helper, **OPTIONS)
    expected = renamed(fingerprint(alone, "runA"), "runA")
    assert renamed(fingerprint(db, "runA"), "runA") == expected
    assert renamed(fingerprint(db, "runB"), "runB") == expected


def cli_reader(db: str, run_id: str, procs: list[subprocess.Popen], outputs: list) -> None:
    """`python -m evolve lineage RUN --format json` in a loop while `procs` run."""
    while any(p.poll() is None for p in procs):
        store = LineageStore(db)
        started = any(r["id"] == run_id for r in store.list_runs())
        store.close()
        if started:
            outputs.append(subprocess.run([sys.executable, "-m", "evolve", "lineage", run_id, "--db", db, "--format",
                                           "json"], cwd=ROOT, capture_output=True, text=True, timeout=120))
        time.sleep(0.05)


def renamed(data: dict, run_id: str) -> str:
    """A fingerprint with the run id replaced, so that two runs of the same options compare equal."""
    return json.dumps(data, sort_keys=True, default=str).replace(run_id, "RUN")
