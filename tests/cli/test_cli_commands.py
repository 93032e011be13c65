"""The command line through typer's runner: help, harness commands, lineage/show/diff/export, user errors."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evolve.cli import app
from evolve.harness import Edit, Harness, Section, apply_edits, load_harness, save_harness
from evolve.paths import data_dir
from evolve.store import LineageStore, RolloutRecord

runner = CliRunner()
SEED = Harness(name="seed", system=(Section(name="task", text="Reply with one word."),))
EDIT = Edit(op="add", component="system", target="format", value="Use lowercase letters only.",
            hypothesis="a fixed case makes exact-match scoring stable")


def invoke(*args: str):
    return runner.invoke(app, list(args))


def user_error(*args: str) -> str:
    """Run a command that must fail as a user error; return its one stderr line."""
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    return lines[0]


@pytest.fixture
def db(tmp_path: Path) -> str:
    """A lineage database filled through the Python API: seed -> child (accepted) -> grandchild (rejected)."""
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    store = LineageStore(url)
    store.create_run("run1", {"benchmark": "sentiment-products", "seed": 0}, benchmark="sentiment-products",
                     model="mock", preset="rrsi")
    child = apply_edits(SEED, [EDIT])
    grand = apply_edits(child, [Edit(op="set", component="control", target="samples", value=3,
                                     hypothesis="voting smooths noise")])
    store.add_candidate("run1/seed", "run1", SEED, parent_id=None, round=0, status="seed")
    store.add_candidate("run1/r1/c0", "run1", child, parent_id="run1/seed", round=1, status="accepted", edits=[EDIT])
    store.add_candidate("run1/r2/c0", "run1", grand, parent_id="run1/r1/c0", round=2, status="rejected_acceptance")
    store.update_candidate("run1/r1/c0", val_score=0.8, delta=0.2)
    store.add_decision("run1", "run1/r1/c0", 1, True, "gain 0.20 above the noise band")
    store.add_critique("run1/r2/c0", "llm", "pass", "a reusable mechanism")
    store.add_rollouts([RolloutRecord(run_id="run1", harness_hash=child.version, benchmark="sentiment-products",
                                      split="val", task_id=f"t{i}", reward=float(i % 2)) for i in range(4)])
    store.put_state("run1", "incumbent", "run1/r1/c0")
    store.close()
    return url


# -- help ----------------------------------------------------------------------------------------


def test_help_lists_the_commands() -> None:
    result = invoke("--help")
    assert result.exit_code == 0
    for command in ("harness", "lineage", "show", "diff", "export"):
        assert f" {command} " in result.output, command


def test_no_arguments_shows_help() -> None:
    result = invoke()
    assert "Usage" in result.output and "harness" in result.output


def test_harness_help_lists_subcommands() -> None:
    result = invoke("harness", "--help")
    assert result.exit_code == 0
    for command in ("validate", "diff", "render", "format"):
        assert command in result.output


def _commands(group, path=()):
    for name, command in group.commands.items():
        yield (*path, name), command
        if hasattr(command, "commands"):
            yield from _commands(command, (*path, name))


def test_no_help_text_is_eaten_as_rich_markup() -> None:
    # rich reads "[default: x]" in a help text as a markup tag and drops it from `--help`
    import typer.main

    root = typer.main.get_command(app)
    texts = [(path, p.name, p.help) for path, command in _commands(root) for p in command.params
             if getattr(p, "help", None)]
    assert texts
    tags = [(" ".join(path), name) for path, name, text in texts if re.search(r"(?<!\\)\[[a-z#/@]", text)]
    assert tags == []


# -- harness commands ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["minimal", "structured"])
def test_validate_shipped_harness_by_name(name: str) -> None:
    result = invoke("harness", "validate", name)
    assert result.exit_code == 0, result.output
    version = load_harness(data_dir("harnesses") / name).version
    assert result.stdout.startswith(f"ok {name} version {version}")


def test_validate_folder_path(tmp_path: Path) -> None:
    folder = shutil.copytree(data_dir("harnesses") / "structured", tmp_path / "mine")
    result = invoke("harness", "validate", str(folder))
    assert result.exit_code == 0
    assert "2 sections, 1 skills, 2 examples, 0 tools" in result.stdout


def test_validate_malformed_yaml_is_one_line_naming_file_and_line(tmp_path: Path) -> None:
    folder = shutil.copytree(data_dir("harnesses") / "minimal", tmp_path / "broken")
    (folder / "harness.yaml").write_text("name: x\ncontrol: {samples: 2\n", encoding="utf-8")
    line = user_error("harness", "validate", str(folder))
    assert str(folder / "harness.yaml") in line and "line " in line


def test_validate_unknown_name_lists_shipped_harnesses() -> None:
    line = user_error("harness", "validate", "no-such-harness")
    assert "'no-such-harness'" in line and "minimal" in line and "structured" in line


def test_harness_diff_shows_changed_components() -> None:
    result = invoke("harness", "diff", "minimal", "structured")
    assert result.exit_code == 0
    for component in ("system/task", "system/role", "skill/answer-format", "examples", "control"):
        assert component in result.stdout, component
    assert "-Answer the user's request." in result.stdout


def test_harness_diff_of_identical_harnesses_has_no_component() -> None:
    result = invoke("harness", "diff", "minimal", "minimal")
    assert result.exit_code == 0
    assert "system/" not in result.stdout and "control" not in result.stdout


def test_harness_render_prints_every_message() -> None:
    result = invoke("harness", "render", "structured", "Is 7 odd?")
    assert result.exit_code == 0
    out = result.stdout
    assert out.count("user") >= 3 and "assistant" in out and "system" in out
    assert "You are a careful assistant" in out and out.rstrip().endswith("Is 7 odd?")


def test_harness_format_check_and_rewrite(tmp_path: Path) -> None:
    folder = shutil.copytree(data_dir("harnesses") / "structured", tmp_path / "mine")
    canonical = (folder / "system.md").read_bytes()
    (folder / "system.md").write_bytes(canonical.replace(b"\n\n", b"\n\n\n"))
    result = invoke("harness", "format", "--check", str(folder))
    assert result.exit_code == 1 and "not canonical: system.md" in result.stdout
    assert (folder / "system.md").read_bytes() != canonical
    result = invoke("harness", "format", str(folder))
    assert result.exit_code == 0 and "rewrote system.md" in result.stdout
    assert (folder / "system.md").read_bytes() == canonical
    result = invoke("harness", "format", "--check", str(folder))
    assert result.exit_code == 0 and "canonical" in result.stdout


def test_harness_format_needs_a_folder(tmp_path: Path) -> None:
    assert "not a harness folder" in user_error("harness", "format", str(tmp_path / "absent"))


# -- lineage, show, diff, export on a filled store -----------------------------------------------


def test_lineage_tree(db: str) -> None:
    result = invoke("lineage", "run1", "--db", db)
    assert result.exit_code == 0, result.output
    for cid in ("run1/seed", "run1/r1/c0", "run1/r2/c0"):
        assert cid in result.stdout
    assert "fixed case" in result.stdout


def test_lineage_latest_and_json(db: str) -> None:
    result = invoke("lineage", "--format", "json", "--db", db)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    text = json.dumps(data)
    assert "run1/r2/c0" in text and "rejected_acceptance" in text


@pytest.mark.parametrize("fmt", ["dot", "mermaid"])
def test_lineage_graph_formats(db: str, fmt: str) -> None:
    result = invoke("lineage", "run1", "--format", fmt, "--db", db)
    assert result.exit_code == 0
    assert "r2" in result.stdout


def test_show_candidate(db: str) -> None:
    result = invoke("show", "run1/r1/c0", "--db", db)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "accepted" in out and "a fixed case makes exact-match scoring stable" in out
    assert "gain 0.20 above the noise band" in out and "Use lowercase letters only." in out


def test_show_json_and_best(db: str) -> None:
    result = invoke("show", "best", "--json", "--db", db)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["candidate"]["id"] == "run1/r1/c0"
    assert data["edits"][0]["hypothesis"] == EDIT.hypothesis
    assert Harness.model_validate(data["harness"]) == apply_edits(SEED, [EDIT])


def test_diff_two_candidates(db: str) -> None:
    result = invoke("diff", "run1/seed", "run1/r2/c0", "--db", db)
    assert result.exit_code == 0, result.output
    assert "system/format" in result.stdout and "control" in result.stdout
    assert "+Use lowercase letters only." in result.stdout


@pytest.mark.parametrize(("fmt", "expected"), [
    ("prompt", ["prompt.md"]),
    ("json", ["harness.json"]),
    ("skills", ["system.md"]),
])
def test_export_formats(db: str, tmp_path: Path, fmt: str, expected: list[str]) -> None:
    out = tmp_path / f"export-{fmt}"
    result = invoke("export", "run1/r1/c0", "--format", fmt, "--out", str(out), "--db", db)
    assert result.exit_code == 0, result.output
    for name in expected:
        assert (out / name).is_file(), sorted(p.name for p in out.iterdir())
    text = "".join(p.read_text(encoding="utf-8") for p in out.rglob("*") if p.is_file())
    assert "Use lowercase letters only." in text


def test_export_json_bundle_loads_back(db: str, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    assert invoke("export", "best", "--format", "json", "--out", str(out), "--db", db).exit_code == 0
    assert load_harness(out / "harness.json") == apply_edits(SEED, [EDIT])


# -- user errors ---------------------------------------------------------------------------------


def test_unknown_run_is_a_user_error(db: str) -> None:
    assert "unknown run 'nope'" in user_error("lineage", "nope", "--db", db)


@pytest.mark.parametrize("command", ["show", "export"])
def test_unknown_candidate_is_a_user_error(db: str, command: str) -> None:
    assert "unknown candidate 'nope'" in user_error(command, "nope", "--db", db)


def test_unknown_candidate_in_diff(db: str) -> None:
    assert "unknown candidate 'nope'" in user_error("diff", "run1/seed", "nope", "--db", db)


def test_bad_format_options_list_choices(db: str, tmp_path: Path) -> None:
    line = user_error("lineage", "run1", "--format", "svg", "--db", db)
    assert "tree, json, dot, mermaid" in line
    line = user_error("export", "best", "--format", "zip", "--out", str(tmp_path / "x"), "--db", db)
    assert "skills" in line and "prompt" in line and "json" in line


def test_an_output_path_that_cannot_be_written_is_a_user_error(db: str, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    line = user_error("export", "best", "--format", "skills", "--out", str(blocker / "out"), "--db", db)
    assert line.startswith(f"error: {blocker}") or line.startswith(f"error: {blocker / 'out'}"), line
    line = user_error("report", "run1", "--out", str(blocker / "r" / "report.html"), "--db", db)
    assert str(blocker) in line, line


def test_empty_database_is_a_user_error(tmp_path: Path) -> None:
    missing = tmp_path / "missing" / "typo.db"
    assert "no lineage database" in user_error("lineage", "--db", str(missing))
    assert not missing.parent.exists(), "a reading command must not create a database"
    LineageStore(tmp_path / "empty.db").close()
    assert "no runs" in user_error("lineage", "--db", str(tmp_path / "empty.db"))
    assert "no runs" in user_error("show", "best", "--db", str(tmp_path / "empty.db"))


def test_bad_database_url_is_a_user_error(tmp_path: Path) -> None:
    not_db = tmp_path / "notes.db"
    not_db.write_text("plain text, not SQLite\n" * 40, encoding="utf-8")
    assert "database" in user_error("lineage", "--db", str(not_db))
    assert "database" in user_error("lineage", "--db", "nosuchdialect://x/y")


def test_console_script_prints_one_line_without_traceback(tmp_path: Path) -> None:
    """The real process (not the runner): exit code 2, one stderr line, no traceback."""
    proc = subprocess.run([sys.executable, "-m", "evolve", "show", "nope", "--db", str(tmp_path / "x.db")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert proc.stderr.startswith("error: ") and "Traceback" not in proc.stderr


def test_markup_like_text_is_printed_literally(tmp_path: Path) -> None:
    """Ids, hypotheses and harness text that look like rich markup neither crash nor vanish."""
    url = f"sqlite:///{tmp_path / 'markup.db'}"
    store = LineageStore(url)
    seed = Harness(system=(Section(name="a", text="Say [bold]x[/bold] or [/]."),))
    edit = Edit(op="add", component="system", target="b", value="[red]", hypothesis="[/oops] closes nothing")
    store.create_run("r[/]", {})
    store.add_candidate("s[/]", "r[/]", seed, parent_id=None, round=0, status="seed")
    store.add_candidate("c[/]", "r[/]", apply_edits(seed, [edit]), parent_id="s[/]", round=1, status="accepted",
                        edits=[edit])
    lineage = invoke("lineage", "r[/]", "--db", url)
    assert lineage.exit_code == 0 and "c[/]" in lineage.stdout and "[/oops] closes nothing" in lineage.stdout
    show = invoke("show", "c[/]", "--db", url)
    assert show.exit_code == 0 and "Say [bold]x[/bold] or [/]." in show.stdout
    diff = invoke("diff", "s[/]", "c[/]", "--db", url)
    assert diff.exit_code == 0 and "+[red]" in diff.stdout
    folder = save_harness(seed, tmp_path / "h")
    render = invoke("harness", "render", str(folder), "[/q]")
    assert render.exit_code == 0 and "Say [bold]x[/bold] or [/]." in render.stdout and "[/q]" in render.stdout


def test_validate_json_bundle(tmp_path: Path) -> None:
    bundle = tmp_path / "h.json"
    bundle.write_text(json.dumps({"harness": SEED.model_dump(mode="json")}), encoding="utf-8")
    result = invoke("harness", "validate", str(bundle))
    assert result.exit_code == 0 and f"version {SEED.version}" in result.stdout
