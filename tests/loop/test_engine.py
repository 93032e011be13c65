"""The engine end to end with mock backends: results, determinism, exact resume after SIGKILL."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from engine_mocks import RUN_OPTIONS, backends
from typer.testing import CliRunner

from evolve import api
from evolve.cli import app
from evolve.errors import ConfigError, StoreError
from evolve.store import LineageStore

ROOT = Path(__file__).resolve().parents[2]


def run(db: str, run_id: str = "r1", **extra):
    policy, helper = backends()
    return api.run(db=db, run_id=run_id, policy=policy, helper=helper, **{**RUN_OPTIONS, **extra})


def lineage(db: str, run_id: str) -> dict:
    store = LineageStore(db)
    cands = [(c.id, c.parent_id, c.status, c.harness_hash, c.val_score, c.delta, c.reason)
             for c in store.candidates(run_id)]
    edits = [(e["candidate_id"], e["position"], e["op"], e["component"], e["target"], json.dumps(e["value"]))
             for e in store.run_edits(run_id)]
    decisions = sorted((d["candidate_id"], d["kind"], d["accepted"], d["reason"]) for d in store.decisions(run_id))
    rollouts = sorted(r.key + (r.reward,) for r in store.rollouts(run_id))
    critiques = sorted((c[0], x["kind"], x["verdict"]) for c in cands for x in store.critiques(c[0]))
    summary = store.get_run(run_id)["summary"]
    return {"candidates": cands, "edits": edits, "decisions": decisions, "rollouts": rollouts,
            "critiques": critiques, "summary": {k: summary[k] for k in ("seed", "best", "best_id", "candidates")}}


def test_run_improves_on_mock_policy_and_stores_everything(tmp_path):
    db = str(tmp_path / "a.db")
    summary = run(db)
    assert summary["seed"]["test"]["score"] == pytest.approx(0.5, abs=0.1)
    assert summary["best"]["test"]["score"] > summary["seed"]["test"]["score"] + 0.3
    assert any(e["component"] == "example" for e in summary["accepted_edits"])
    store = LineageStore(db)
    statuses = {c.status for c in store.candidates("r1")}
    assert {"seed", "accepted", "rejected_acceptance"} <= statuses
    assert store.get_run("r1")["status"] == "finished"
    assert store.usage_by_role("r1")["policy"]["calls"] > 0
    best = store.resolve_candidate("best", "r1")
    assert best.id == summary["best_id"] and best.status == "accepted"


def test_run_is_deterministic_for_a_seed(tmp_path):
    run(str(tmp_path / "a.db"))
    run(str(tmp_path / "b.db"))
    assert lineage(str(tmp_path / "a.db"), "r1") == lineage(str(tmp_path / "b.db"), "r1")


def test_unregularized_preset_accepts_on_the_evolve_split(tmp_path):
    db = str(tmp_path / "u.db")
    summary = run(db, preset="unregularized")
    decisions = LineageStore(db).decisions("r1")
    assert decisions and all(d["stats"].get("split") in (None, "evolve") for d in decisions)
    assert summary["best"]["test"]["score"] is not None


def test_invalid_proposer_reply_is_recorded_and_the_run_goes_on(tmp_path):
    from engine_mocks import policy_answer

    from evolve.backends.mock import MockBackend

    db = str(tmp_path / "bad.db")
    summary = api.run(db=db, run_id="bad", policy=MockBackend(policy_answer), helper=MockBackend(default="not json"),
                      **{**RUN_OPTIONS, "rounds": 2})
    invalid = [c for c in LineageStore(db).candidates("bad") if c.status == "rejected_invalid"]
    assert invalid and all(c.reason.startswith("invalid") for c in invalid)
    assert all(c.meta["proposal"]["reply"] for c in invalid if c.origin == "llm")
    assert summary["best"]["test"]["score"] >= summary["seed"]["test"]["score"]


def test_bad_input(tmp_path):
    with pytest.raises(ConfigError, match="rounds"):
        api.run(db=str(tmp_path / "x.db"), rounds=0)
    with pytest.raises(ConfigError, match=r"unknown preset 'nope'.*rrsi"):
        api.run(db=str(tmp_path / "x.db"), preset="nope")
    with pytest.raises(StoreError, match="unknown run"):
        api.resume("missing", db=str(tmp_path / "x.db"))
    db = str(tmp_path / "done.db")
    run(db, run_id="done", rounds=1)
    with pytest.raises(StoreError, match="already finished"):
        api.resume("done", db=db)


def test_cli_run_json_and_errors(tmp_path):
    runner = CliRunner()
    db = str(tmp_path / "cli.db")
    result = runner.invoke(app, ["run", "--model", "mock", "--rounds", "1", "--budget", "300", "--report-limit", "10",
                                 "--run-id", "c1", "--db", db, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["run_id"] == "c1" and "test" in data["seed"] and "test" in data["best"]
    bad = runner.invoke(app, ["run", "--preset", "nope", "--db", db])
    assert bad.exit_code == 2 and "unknown preset" in bad.output and "Traceback" not in bad.output
    again = runner.invoke(app, ["resume", "c1", "--db", db])
    assert again.exit_code == 2 and "already finished" in again.output
    cfg = tmp_path / "run.yaml"
    cfg.write_text("rounds: three\n")
    bad_cfg = runner.invoke(app, ["run", "--config", str(cfg), "--db", db])
    assert bad_cfg.exit_code == 2 and "rounds" in bad_cfg.output


def test_dry_run_calls_no_model(tmp_path):
    result = CliRunner().invoke(app, ["run", "--dry-run", "--model", "mock"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    assert plan["benchmark"] == "extract-city" and plan["estimate"]


def _wait_for_run(db: str, run_id: str, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if Path(db).exists():
            try:
                LineageStore(db, migrate_schema=False).get_run(run_id)
                return
            except Exception:  # the database may still be half created
                pass
        time.sleep(0.05)


KILL_SCRIPT = """
import sys
sys.path.insert(0, {root!r}); sys.path.insert(0, {root!r} + "/tests/loop")
from evolve import api
from engine_mocks import RUN_OPTIONS, backends
policy, helper = backends(delay=0.002)
api.run(db={db!r}, run_id="k", policy=policy, helper=helper, **RUN_OPTIONS)
"""


@pytest.mark.slow
def test_sigkill_at_random_points_then_resume_matches_an_uninterrupted_run(tmp_path):
    reference = str(tmp_path / "ref.db")
    run(reference, run_id="k")
    expected = lineage(reference, "k")
    rng = random.Random(7)
    resumed = 0
    for trial in range(3):
        db = str(tmp_path / f"kill{trial}.db")
        script = KILL_SCRIPT.format(root=str(ROOT), db=db)
        proc = subprocess.Popen([sys.executable, "-c", script], cwd=ROOT, env={**os.environ})
        _wait_for_run(db, "k", proc)
        time.sleep(rng.uniform(0.0, 2.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        store = LineageStore(db)
        if store.list_runs() and store.get_run("k")["status"] == "finished":
            continue  # finished before the kill: nothing to resume
        policy, helper = backends()
        api.resume("k", db=db, policy=policy, helper=helper)
        assert lineage(db, "k") == expected
        resumed += 1
    assert resumed >= 2, "the kills should land mid-run"

