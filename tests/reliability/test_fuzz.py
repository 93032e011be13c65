"""Bad-input corpus, property-based: harness folders, benchmark files, run configs and CLI arguments.

Every case must end in success or a user error: exit code 2 with exactly one `error: ...` line on
stderr (command-line usage errors: click's exit code 2 with its usage text), never a traceback, and
never a partial write: the lineage database and every existing file are byte-identical after a
failed command. EVOLVE_FUZZ_EXAMPLES scales the number of cases per property (default 40).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from contextlib import chdir
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from evolve.cli import app
from evolve.harness import Edit, Harness, Section, apply_edits
from evolve.paths import data_dir
from evolve.store import LineageStore, RolloutRecord

EXAMPLES = int(os.environ.get("EVOLVE_FUZZ_EXAMPLES", "40"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.filter_too_much, HealthCheck.data_too_large])
runner = CliRunner()
CASES: dict[str, dict[str, int]] = {}

text = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
scalars = st.none() | st.booleans() | st.integers(-(10**12), 10**12) | st.floats(allow_nan=True) | text
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
                      max_leaves=8)


def snapshot(*roots: Path) -> dict[str, str]:
    """Every file under `roots` with the hash of its bytes."""
    out = {}
    for root in roots:
        for path in sorted(root.rglob("*")) if root.is_dir() else [root] if root.exists() else []:
            if path.is_file() and not path.name.endswith(("-wal", "-shm")):  # SQLite's journal: see db_dump
                out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def outcome(kind: str, args: list[str], allowed: tuple[int, ...] = (0, 2)) -> int:
    """Invoke the CLI and check the user-error contract; returns the exit code (counted per `kind`)."""
    result = runner.invoke(app, args)
    assert result.exit_code in allowed, (args, result.output, result.exception)
    assert "Traceback" not in result.output, (args, result.output)
    assert result.exception is None or isinstance(result.exception, SystemExit), (args, result.exception)
    usage_error = "Usage:" in result.stderr or "─ Error ─" in result.stderr  # click's own argument parsing
    if result.exit_code == 2 and not usage_error:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (args, result.stderr)
    counts = CASES.setdefault(kind, {"cases": 0, "errors": 0})
    counts["cases"] += 1
    counts["errors"] += result.exit_code == 2
    return result.exit_code


def teardown_module() -> None:
    print("\nfuzz cases: " + json.dumps(CASES, sort_keys=True))


# -- harness folders ---------------------------------------------------------------------------

HARNESS_KEYS = ["name", "description", "system", "control", "examples", "tools", "skills", "version", "extra"]
harness_docs = st.one_of(
    text,
    values.map(lambda v: yaml.safe_dump(v, allow_unicode=True)),
    st.dictionaries(st.sampled_from(HARNESS_KEYS), values, max_size=5).map(
        lambda d: yaml.safe_dump(d, allow_unicode=True)),
    st.sampled_from(["name: x\ncontrol: {samples: 2\n", "- a\n- b\n", "name: [\n", "\ufeffname: x\n", ": :\n",
                     "control:\n  samples: -1\n", "control:\n  temperature: .nan\n", "system: {a: 1}\n"]),
)
skill_docs = st.one_of(text, st.sampled_from(["---\nname: s\n---\nbody", "---\nname: [\n---\n", "---\n---\n",
                                              "no front matter at all"]))


@FUZZ
@given(doc=harness_docs, skill=st.none() | skill_docs, examples=st.none() | text)
def test_harness_folders(tmp_path_factory, doc: str, skill: str | None, examples: str | None):
    folder = shutil.copytree(data_dir("harnesses") / "minimal", tmp_path_factory.mktemp("h") / "h")
    (folder / "harness.yaml").write_text(doc, encoding="utf-8")
    if skill is not None:
        (folder / "skills").mkdir(exist_ok=True)
        (folder / "skills" / "fuzz.md").write_text(skill, encoding="utf-8")
    if examples is not None:
        (folder / "examples.jsonl").write_text(examples, encoding="utf-8")
    before = snapshot(folder)
    for args in (["harness", "validate", str(folder)], ["harness", "format", "--check", str(folder)],
                 ["harness", "render", str(folder)]):
        code = outcome("harness", args, (0, 1, 2) if "--check" in args else (0, 2))  # 1: "not canonical"
        assert snapshot(folder) == before, args
        if code == 2:
            break


# -- benchmark files ---------------------------------------------------------------------------

BENCH_KEYS = ["name", "description", "tasks", "generator", "format", "verifier", "labels", "splits", "seed", "ood",
              "denylist", "input_field", "target_field", "answer_format"]
task_lines = st.one_of(
    text,
    st.lists(st.tuples(text, st.sampled_from(["yes", "no"])), min_size=8, max_size=30).map(
        lambda rows: "\n".join(json.dumps({"input": i, "target": t}) for i, t in rows)),
    st.lists(st.dictionaries(st.sampled_from(["input", "target", "id", "split", "question", "answer", "prompt"]),
                             values, max_size=4), max_size=6).map(
        lambda rows: "\n".join(json.dumps(r, default=str) for r in rows)),
)


@FUZZ
@given(spec=st.dictionaries(st.sampled_from(BENCH_KEYS), values, max_size=6), tasks=task_lines,
       as_file=st.booleans())
def test_benchmark_files(tmp_path_factory, spec: dict, tasks: str, as_file: bool):
    root = tmp_path_factory.mktemp("b")
    if as_file:
        target = root / "tasks.jsonl"
        target.write_text(tasks, encoding="utf-8")
    else:
        target = root / "bench"
        target.mkdir()
        spec.setdefault("tasks", "tasks.jsonl")
        (target / "benchmark.yaml").write_text(yaml.safe_dump(spec, allow_unicode=True), encoding="utf-8")
        (target / "tasks.jsonl").write_text(tasks, encoding="utf-8")
    before = snapshot(root)
    outcome("benchmark", ["run", "--dry-run", "--model", "mock", "--benchmark", str(target)])
    assert snapshot(root) == before


# -- run configs (validated, then a real `evolve run` against a database must not write) ---------

RUN_KEYS = ["benchmark", "harness", "preset", "rounds", "budget", "seed", "evolve_batch", "trials", "concurrency",
            "report_limit", "proposer", "selection", "cache", "ood", "api_base", "tools", "nonsense"]


def filled_db(path: Path) -> str:
    url = f"sqlite:///{path}"
    store = LineageStore(url)
    seed = Harness(name="seed", system=(Section(name="task", text="Reply with one word."),))
    child = apply_edits(seed, [Edit(op="add", component="system", target="format", value="Lowercase only.")])
    store.create_run("old", {"benchmark": "sentiment-products"}, benchmark="sentiment-products", model="mock")
    store.add_candidate("old.seed", "old", seed, parent_id=None, round=0, status="seed")
    store.add_candidate("old.1", "old", child, parent_id="old.seed", round=1, status="accepted")
    store.add_rollouts([RolloutRecord(run_id="old", harness_hash=child.version, benchmark="sentiment-products",
                                      split="validation", task_id=f"t{i}", reward=1.0) for i in range(3)])
    store.update_run("old", status="finished", summary={"best_id": "old.1"})
    store.close()
    return url


def db_dump(path: Path) -> list[str]:
    import sqlite3

    with sqlite3.connect(path) as conn:
        return list(conn.iterdump())


@FUZZ
@given(config=st.one_of(st.dictionaries(st.sampled_from(RUN_KEYS), values, max_size=5), values,
                        st.dictionaries(st.sampled_from(RUN_KEYS), st.integers(-5, 5) | text, max_size=4)))
def test_run_configs(tmp_path_factory, config):
    root = tmp_path_factory.mktemp("c")
    db = root / "lineage.db"
    filled_db(db)
    run_file = root / "run.yaml"
    run_file.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    before, files = db_dump(db), snapshot(root)
    code = outcome("run_config", ["run", "--config", str(run_file), "--model", "mock", "--dry-run"])
    if code == 2:  # the same file for a real run: the same one-line error, and nothing written
        outcome("run_config", ["run", "--config", str(run_file), "--model", "mock", "--db", str(db), "--json"])
        assert db_dump(db) == before
    assert snapshot(root) == files


# -- command-line arguments against a filled database -------------------------------------------

COMMANDS = [["lineage"], ["show"], ["diff"], ["export"], ["status"], ["report"], ["resume"], ["harness", "validate"],
            ["harness", "diff"], ["harness", "render"], ["models"]]
OPTIONS = ["--format", "--run", "--out", "--json", "--limit", "--depth", "--check", "--preset", "--rounds", "--db",
           "--split", "--help", "--nonsense", "-x"]
WORDS = ["old", "old.1", "old.seed", "best", "seed", "minimal", "nope", "json", "tree", "dot", "skills", "-1", "0",
         "99999999999999999999", "", " ", "../..", "a\nb", "é", "\x00x"]
arguments = st.lists(st.one_of(st.sampled_from(OPTIONS), st.sampled_from(WORDS), text), max_size=5)


@FUZZ
@given(command=st.sampled_from(COMMANDS), args=arguments)
def test_cli_arguments(tmp_path_factory, command: list[str], args: list[str]):
    root = tmp_path_factory.mktemp("a")
    db = root / "lineage.db"
    filled_db(db)
    out = root / "out"
    args = [str(out) if a == "../.." else a for a in args]
    if "--db" not in args:
        args = [*args, "--db", str(db)]
    before = db_dump(db)
    work = root / "cwd"  # where default outputs (report.html, export/) of successful commands go
    work.mkdir()
    with chdir(work):
        code = outcome("cli", [*command, *[a.replace("\x00", "") for a in args]])
    assert db_dump(db) == before  # reading commands never write; failing ones never do
    if code == 2:
        assert not out.exists() or not any(out.rglob("*")), "a failed command left files behind"
        assert not any(work.iterdir()), "a failed command left files behind"
