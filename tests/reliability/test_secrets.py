"""Planted secrets (API keys in the environment, credentials inside --api-base) never reach the lineage
store, exports, reports, command output or logs; exports and reports carry no evolve-split answers."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import pytest
from engine_mocks import RUN_OPTIONS, backends
from fake_openai import FakeOpenAI
from typer.testing import CliRunner

from evolve import api
from evolve.backends.retry import RetryPolicy
from evolve.bench.benchmark import load_benchmark
from evolve.cli import app
from evolve.harness import Example, apply_edits
from evolve.harness.edits import Edit
from evolve.report.export import EXPORT_FORMATS
from evolve.store import LineageStore

KEY = "sk-plantedkey-0123456789abcdefXYZ"
PASSWORD = "Pl4ntedPassw0rd"
TOKEN = "plantedtoken-9876543210"
SECRETS = (KEY, PASSWORD, TOKEN)
runner = CliRunner()


def everything_in(db: Path) -> str:
    """Every value of every row of a SQLite lineage database, as text."""
    with sqlite3.connect(db) as conn:
        return "\n".join(conn.iterdump())


def files_text(root: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in sorted(root.rglob("*")) if p.is_file())


def assert_clean(where: str, text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{where} contains a planted secret"


@pytest.fixture
def planted(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("EVOLVE_SERVICE_TOKEN", TOKEN)


def test_no_secret_reaches_store_exports_reports_output_or_logs(planted, tmp_path, caplog, monkeypatch):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setattr(RetryPolicy, "delay", lambda self, attempt, rng: 0.0)  # retries without backoff waits
    db = tmp_path / "secret.db"
    outputs = []
    small = tmp_path / "small.yaml"
    small.write_text("evolve_batch: 4\n", encoding="utf-8")
    with FakeOpenAI(default="positive") as server:
        server.script = [500, 500, 401, 0.01] * 5  # failures whose messages are stored with rollouts
        for run_id, api_base in (("s", server.api_base),
                                 ("u", server.api_base.replace("http://", f"http://evolveuser:{PASSWORD}@"))):
            run = runner.invoke(app, ["run", "--model", "openai/fake-model", "--api-base", api_base, "--rounds", "1",
                                      "--budget", "240", "--report-limit", "3", "--run-id", run_id, "--db", str(db),
                                      "--config", str(small), "--no-cache", "--json"])
            outputs.append(run.output)
            assert run.exit_code == 0, run.output
        assert server.chat_requests, "the run should have called the server"
    store = LineageStore(db)
    stored = store.get_run("u")["config"]["api_base"]
    assert "***@127.0.0.1" in stored and PASSWORD not in stored
    errors = [r.error for r in store.rollouts("s") + store.rollouts("u") if r.error]
    assert any("500" in e for e in errors) and any("***@" in e for e in errors), errors[:3]
    store.close()
    assert_clean("the lineage store", everything_in(db))
    for fmt in EXPORT_FORMATS:
        out = tmp_path / f"export-{fmt}"
        result = runner.invoke(app, ["export", "best", "--run", "s", "--format", fmt, "--out", str(out),
                                     "--db", str(db)])
        outputs.append(result.output)
        assert result.exit_code == 0, result.output
        assert_clean(f"the {fmt} export", files_text(out))
    report = tmp_path / "report.html"
    result = runner.invoke(app, ["report", "s", "--out", str(report), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert_clean("the HTML report", report.read_text(encoding="utf-8"))
    for args in (["status", "--db", str(db)], ["lineage", "s", "--format", "json", "--db", str(db)],
                 ["show", "best", "--run", "s", "--db", str(db)], ["show", "best", "--run", "s", "--json", "--db",
                                                                 str(db)]):
        result = runner.invoke(app, args)
        outputs.append(result.output)
        assert result.exit_code == 0, (args, result.output)
    assert_clean("command output", "\n".join(outputs))
    assert_clean("the logs", caplog.text)


def test_failing_commands_do_not_echo_credentials(planted, tmp_path):
    db = f"postgresql+psycopg://evolveuser:{PASSWORD}@127.0.0.1:1/evolve"
    for args in (["status", "--db", db], ["lineage", "x", "--db", db],
                 ["run", "--model", "nosuch:thing", "--api-base", f"https://u:{PASSWORD}@h/v1"],
                 ["run", "--model", "embedded", "--api-base", f"https://u:{PASSWORD}@h/v1"]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert_clean(f"`evolve {args[0]}` errors", result.output)


def test_exports_and_reports_carry_no_evolve_split_answers(tmp_path):
    db = str(tmp_path / "leak.db")
    policy, helper = backends()
    api.run(db=db, run_id="r", policy=policy, helper=helper, **{**RUN_OPTIONS, "rounds": 2})
    stored = LineageStore(db).get_state("r", "splits")
    by_id = {t.id: t for tasks in load_benchmark("sentiment-products").splits.values() for t in tasks}
    evolve_tasks = [by_id[i] for i in stored["evolve"]]
    inputs = [t.input for t in evolve_tasks]

    def leaked(text: str) -> list[str]:
        return [i for i in inputs if i in text]

    for fmt in EXPORT_FORMATS:
        out = tmp_path / f"export-{fmt}"
        result = runner.invoke(app, ["export", "best", "--run", "r", "--format", fmt, "--out", str(out), "--db", db])
        assert result.exit_code == 0, result.output
        assert not leaked(files_text(out)), fmt
    report = tmp_path / "report.html"
    assert runner.invoke(app, ["report", "r", "--out", str(report), "--db", db]).exit_code == 0
    assert not leaked(report.read_text(encoding="utf-8"))
    # a candidate that memorized an evolve-split task is refused, and nothing is written
    store = LineageStore(db)
    best = store.resolve_candidate("best", "r")
    task = evolve_tasks[0]
    cheat = apply_edits(store.get_harness(best.harness_hash), [Edit(
        op="add", component="example", value=Example(input=task.input, output=task.target).model_dump())])
    store.add_candidate("r.cheat", "r", cheat, parent_id=best.id, round=9, status="rejected_acceptance")
    store.close()
    out = tmp_path / "export-cheat"
    result = runner.invoke(app, ["export", "r.cheat", "--format", "json", "--out", str(out), "--db", db])
    assert result.exit_code == 2 and "leak" in result.output.lower(), result.output
    assert not out.exists() or not any(out.iterdir())
    assert json.dumps([task.input]) not in result.output
