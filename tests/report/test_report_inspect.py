"""`evolve show`, `evolve diff` and `evolve status` on the fixture lineage."""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime, timedelta

from lineage_fixture import RUN

from evolve.report.status import display_status


def test_show_candidate_with_edits_critiques_decision_and_rollouts(cli):
    out = cli("show", "c2c").output
    assert "rejected_acceptance" in out and "cost rule violated" in out
    assert "Longer answers allow reasoning" in out
    assert "dS=+0.010" in out and "ci_dS=[-0.03, 0.05]" in out  # decision statistics
    best = cli("show", "best", "--run", RUN).output
    assert "candidate c3b" in best and "fixture-bench/test" in best and "skills/yes-no-questions/SKILL.md" in best


def test_show_json(cli):
    data = json.loads(cli("show", "c1b", "--json").output)
    assert data["candidate"]["status"] == "rejected_critic"
    assert data["critiques"][0]["verdict"] == "reject"
    assert data["edits"][0]["value"]["output"].startswith("the capital")


def test_diff_is_per_component(cli):
    out = cli("diff", "c2a", "c3b").output
    assert "system/role (changed)" in out and "skill/yes-no-questions (added)" in out
    assert "-You answer short questions." in out and "+You answer short questions precisely." in out
    assert "edit: replace system role: Precision wording reduces hedging" in out
    assert cli("diff", "c3b", "c3b").output.strip() == "no differences"


def test_status_table_and_json(cli, fx):
    fx.store.create_run("run-live", {"budget": 100, "rounds": 2}, benchmark="b", model="mock", preset="rrsi")
    fx.store.create_run("run-dead", {"budget": 100}, benchmark="b", model="mock", preset="rrsi")
    fx.store.update_run("run-dead", heartbeat_at=datetime.now(UTC) - timedelta(minutes=5))
    out = cli("status").output
    assert "run-fx" in out and "finished" in out and "300/400" in out and "4/4" in out and "rrsi · " in out
    data = {r["id"]: r for r in json.loads(cli("status", "--json").output)}
    assert data["run-live"]["status"] == "running"
    assert data["run-dead"]["status"] == "stale/killed" and data["run-dead"]["stored_status"] == "running"
    assert data["run-fx"]["rollouts"] == 24 and data["run-fx"]["by_status"]["rejected_critic"] == 2


def test_status_of_one_run_shows_rounds_and_usage(cli):
    out = cli("status", RUN).output
    assert "rounds" in out and "c2a" in out and "0.700" in out
    assert "proposer 9 calls" in out and "rejected by critic 2" in out


def test_stale_detection_uses_heartbeat_age():
    now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    run = {"status": "running", "heartbeat_at": now - timedelta(seconds=30)}
    assert display_status(run, now) == "running"
    assert display_status({**run, "heartbeat_at": now - timedelta(seconds=61)}, now) == "stale/killed"
    naive = (now - timedelta(seconds=10)).replace(tzinfo=None)  # SQLite returns naive UTC times
    assert display_status({**run, "heartbeat_at": naive}, now) == "running"
    assert display_status({"status": "failed", "heartbeat_at": None}, now) == "failed"


def test_watch_refreshes_until_the_run_ends(cli, fx):
    fx.store.create_run("run-w", {"budget": 50}, benchmark="b", model="mock", preset="rrsi")

    def finish_later() -> None:
        time.sleep(0.6)
        fx.store.put_state("run-w", "round_scores", [{"round": 0, "incumbent": "x", "val_score": 0.25}])
        fx.store.update_run("run-w", status="finished")

    worker = threading.Thread(target=finish_later)
    worker.start()
    start = time.monotonic()
    result = cli("status", "run-w", "--watch", "--interval", "0.05")
    worker.join()
    assert result.exit_code == 0
    assert 0.5 < time.monotonic() - start < 30
    assert "finished" in result.output


def test_watch_shows_the_end_state_when_a_run_finishes_between_refresh_and_check(cli, fx, monkeypatch):
    import evolve.cli.inspect_cmd as inspect_cmd

    fx.store.create_run("run-e", {"budget": 50}, benchmark="b", model="mock", preset="rrsi")
    checks = []

    def live_then_finished(store, run_id) -> bool:
        checks.append(run_id)
        if len(checks) == 1:
            return True
        fx.store.update_run("run-e", status="finished")  # after the last refresh, before this check
        return False

    monkeypatch.setattr(inspect_cmd, "any_live", live_then_finished)
    result = cli("status", "run-e", "--watch", "--interval", "0.05")
    assert result.exit_code == 0 and len(checks) == 2
    assert "finished" in result.output


def test_status_on_empty_database(tmp_path):
    from typer.testing import CliRunner

    from evolve.cli.app import app
    from evolve.store import LineageStore

    LineageStore(tmp_path / "empty.db").close()
    result = CliRunner().invoke(app, ["status", "--db", str(tmp_path / "empty.db")])
    assert result.exit_code == 0 and "no runs" in result.output
    missing = CliRunner().invoke(app, ["status", "--db", str(tmp_path / "none.db")])
    assert missing.exit_code == 2 and "no lineage database" in missing.output
