"""`evolve run` refuses a wrong suite, harness or database before it stores or evaluates anything."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from evolve.cli import app
from evolve.paths import data_dir
from evolve.store import LineageStore

runner = CliRunner()
MOCK = ["--model", "mock", "--proposer-model", "none", "--rounds", "1", "--budget", "300"]


def run_error(*args: str) -> str:
    """`evolve run` that must fail as a user error: its error line, which starts a line of its own."""
    result = runner.invoke(app, ["run", *MOCK, *args])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    last = result.stderr.rstrip().splitlines()[-1]
    assert last.startswith("error: "), result.stderr
    return last


def test_an_unknown_ood_suite_fails_before_the_run_starts(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    line = run_error("--ood", "no-such-suite", "--db", str(db))
    assert "run option 'ood': 'no-such-suite' is neither a path nor a shipped benchmark" in line
    assert LineageStore(db).list_runs() == [], "nothing stored, nothing evaluated"


def test_a_benchmarks_own_missing_ood_sibling_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    shutil.copytree(data_dir("benchmarks") / "sentiment-products", folder)
    spec = folder / "benchmark.yaml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("ood: [sentiment-restaurants]", "ood: [gone]"),
                    encoding="utf-8")
    line = run_error("--benchmark", str(folder), "--db", str(tmp_path / "r.db"))
    assert "benchmark 'sentiment-products', field 'ood': 'gone' is neither a path" in line


def test_dry_run_checks_the_ood_suites_and_the_harness(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "--dry-run", "--benchmark", "sentiment-products"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["ood"] == {"sentiment-restaurants": 260}
    for args, what in ((["--ood", "nope"], "run option 'ood'"), (["--harness", "nope"], "shipped harness")):
        bad = runner.invoke(app, ["run", "--dry-run", *args])
        assert bad.exit_code == 2 and bad.stderr.startswith("error: ") and what in bad.stderr, bad.output


def test_a_database_folder_that_cannot_be_made_is_a_user_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    line = run_error("--db", str(blocker / "sub" / "r.db"))
    assert line.startswith(f"error: database {blocker / 'sub' / 'r.db'}: cannot create its folder")


def test_a_validation_split_below_the_guards_minimum_is_refused_up_front(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    line = run_error("--benchmark", "repo-fix", "--db", str(db))
    assert ("decisions need at least 20 tasks (selection guards.min_validation_tasks) and its validation "
            "split has 6") in line and "guards.min_validation_tasks: 6" in line
    assert LineageStore(db).list_runs() == []
    run_file = tmp_path / "run.yaml"
    run_file.write_text("benchmark: repo-fix\nselection:\n  guards.min_validation_tasks: 6\n", encoding="utf-8")
    plan = runner.invoke(app, ["run", "--dry-run", "--config", str(run_file)])
    assert plan.exit_code == 0 and json.loads(plan.stdout)["splits"]["validation"] == 6, plan.output


def test_a_setup_error_prints_its_line_alone_without_a_status_table(tmp_path: Path) -> None:
    tasks = tmp_path / "bad.jsonl"
    tasks.write_text('{"input": "a", "target": "b"}\n{not json\n', encoding="utf-8")
    result = runner.invoke(app, ["run", *MOCK, "--benchmark", str(tasks), "--db", str(tmp_path / "r.db")])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert lines == [f"error: {tasks}: line 2: invalid JSON: Expecting property name enclosed in double quotes"], lines
    assert not (tmp_path / "r.db").exists() or LineageStore(tmp_path / "r.db").list_runs() == []
