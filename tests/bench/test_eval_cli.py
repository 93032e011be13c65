"""`evolve eval` end to end with the mock backend, and once with the real embedded model."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from evolve.backends.mock import MockBackend
from evolve.bench.benchmark import load_benchmark
from evolve.bench.evaluation import run_eval
from evolve.bench.stats import majority_baseline
from evolve.cli.app import _Group
from evolve.cli.eval_cmd import register
from evolve.harness import load_harness
from evolve.report.export import bundle
from evolve.store import LineageStore


@pytest.fixture
def cli() -> typer.Typer:
    app = typer.Typer(cls=_Group, pretty_exceptions_enable=False)
    register(app)

    @app.command("version")
    def version() -> None:  # a second command keeps `eval` a named subcommand
        """Unused."""

    return app


def write_bbh(path, n=24):
    examples = [{"input": f"not ( {'True' if i % 3 else 'False'} ) is", "target": "False" if i % 3 else "True"}
                for i in range(n)]
    path.write_text(json.dumps({"examples": examples}))
    return path


def test_run_eval_stores_rollouts_under_an_eval_run(tmp_path, db_url):
    bbh = write_bbh(tmp_path / "negation.json")
    report = run_eval("minimal", str(bbh), split="test", limit=5, db=db_url, backend=MockBackend(default="False"))
    assert report["n"] == 5 and report["tasks"] == 5
    assert report["majority_baseline"] is not None and report["best_constant"] in ("True", "False")
    assert report["prediction_distribution"] == {"False": 1.0}
    assert report["parse_rate"] == 1.0
    whole = run_eval("minimal", str(bbh), split="test", db=db_url, backend=MockBackend(default="False"))
    assert whole["majority_baseline"] != 0.5 and whole["balanced"] == 0.5  # one label always: 1/2 whatever the priors
    store = LineageStore(db_url)
    run = store.get_run(report["run_id"])
    assert run["kind"] == "eval" and run["status"] == "done" and run["summary"]["score"] == report["score"]
    rollouts = store.rollouts(report["run_id"], with_trajectory=True)
    assert len(rollouts) == 5 and {r.split for r in rollouts} == {"test"}
    assert sum(r.reward for r in rollouts) / 5 == pytest.approx(report["score"])
    assert store.usage_by_role(report["run_id"])


def test_eval_command_json(cli, tmp_path, db_url):
    bbh = write_bbh(tmp_path / "negation.json")
    result = CliRunner().invoke(cli, ["eval", "harnesses/minimal", "--benchmark", str(bbh), "--model", "mock",
                                      "--split", "evolve", "--trials", "2", "--db", db_url, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    for key in ("score", "ci_low", "ci_high", "n", "policy_tokens", "majority_baseline", "parse_rate",
                "prediction_distribution", "wall_s", "run_id"):
        assert key in report
    assert report["rollouts"] == 2 * report["tasks"] == 2 * report["n"]
    assert report["ci_low"] <= report["score"] <= report["ci_high"]
    assert report["parse_rate"] == 0.0  # the mock's default answer is no label


def test_eval_command_text(cli, tmp_path, db_url):
    bbh = write_bbh(tmp_path / "negation.json")
    result = CliRunner().invoke(cli, ["eval", "minimal", "-b", str(bbh), "--model", "mock", "--db", db_url])
    assert result.exit_code == 0, result.output
    for word in ("score", "95% CI", "majority", "best constant", "parse rate", "predictions", "policy tokens/task"):
        assert word in result.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--split", "train"], "no split 'train'; valid: demo, evolve, validation, test"),
    (["--limit", "0"], "--limit must be at least 1"),
    (["--model", "nonsense-model"], "nonsense-model"),
])
def test_eval_command_bad_input_is_one_line_exit_2(cli, tmp_path, db_url, args, message):
    bbh = write_bbh(tmp_path / "negation.json")
    result = CliRunner().invoke(cli, ["eval", "minimal", "-b", str(bbh), "--db", db_url, *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_eval_command_unknown_benchmark(cli, db_url):
    result = CliRunner().invoke(cli, ["eval", "minimal", "-b", "nope", "--model", "mock", "--db", db_url])
    assert result.exit_code == 2 and "shipped: " in result.output and "extract-city" in result.output


@pytest.mark.embedded
def test_eval_bbh_file_with_the_embedded_model(cli, tmp_path, db_url):
    bbh = write_bbh(tmp_path / "negation.json", n=12)
    test_tasks = load_benchmark(str(bbh)).split("test")
    result = CliRunner().invoke(cli, ["eval", "harnesses/minimal", "--benchmark", str(bbh), "--limit", "20",
                                      "--model", "embedded", "--db", db_url, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["n"] == len(test_tasks) and report["model"] == "embedded"
    assert report["majority_baseline"] == pytest.approx(majority_baseline(test_tasks)[1])
    assert report["policy_tokens"] > 0 and 0.0 <= report["ci_low"] <= report["score"] <= report["ci_high"] <= 1.0
    assert sum(report["prediction_distribution"].values()) == pytest.approx(1.0)
    assert LineageStore(db_url).count_rollouts(report["run_id"]) == len(test_tasks)


def test_eval_of_an_agent_suite_reports_turns_and_tool_calls_and_show_prints_the_trajectory(tmp_path):
    from evolve.cli import app as main_app

    db = str(tmp_path / "agent.db")
    runner = CliRunner()
    result = runner.invoke(main_app, ["eval", "agent", "--benchmark", "repo-fix", "--limit", "2", "--model", "mock",
                                      "--json", "--db", db])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert {"score", "n", "policy_tokens", "turns", "tool_calls"} <= report.keys()
    assert (report["score"], report["n"], report["turns"], report["tool_calls"]) == (0.0, 2, 1.0, 0.0)
    task_id = LineageStore(db).rollouts(report["run_id"])[0].task_id
    shown = runner.invoke(main_app, ["show", report["run_id"], "--rollout", task_id, "--db", db])
    assert shown.exit_code == 0, shown.output
    assert f"rollout {task_id}" in shown.output and "turn 1 · assistant" in shown.output
    assert "hidden tests failed" in shown.output and "mock answer" in shown.output
    missing = runner.invoke(main_app, ["show", report["run_id"], "--rollout", "nope", "--db", db])
    assert missing.exit_code == 2 and "no rollout of task 'nope'" in missing.output


def test_eval_command_reads_a_json_export_folder(cli, tmp_path, db_url):
    folder = tmp_path / "export"
    folder.mkdir()
    harness = load_harness("harnesses/minimal")
    (folder / "harness.json").write_text(json.dumps(bundle(harness, {})), encoding="utf-8")
    assert load_harness(folder) == harness
    bbh = write_bbh(tmp_path / "negation.json")
    result = CliRunner().invoke(cli, ["eval", str(folder), "-b", str(bbh), "--model", "mock", "--db", db_url, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["harness_version"] == harness.version
