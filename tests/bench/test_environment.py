"""Environments and workspaces: a fresh copy per rollout, workspace tools in the sandbox, verifiers that
check the final workspace, tools and environments registered in benchmark.yaml, limits per rollout."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from evolve.backends.mock import MockBackend
from evolve.bench.benchmark import load_benchmark
from evolve.bench.environment import PlainEnvironment, RolloutLimits, register_environment
from evolve.bench.runtime import evaluate, run_task
from evolve.bench.tools import builtin_tool
from evolve.errors import BenchmarkError
from evolve.harness import Control, Harness

WORKSPACE_TOOLS = tuple(builtin_tool(n) for n in ("read_file", "write_file", "edit_file", "list_files", "search",
                                                  "run_tests"))
AGENT = Harness(tools=WORKSPACE_TOOLS, control=Control(max_turns=6, max_tokens=256))
BUGGY = "def add(a, b):\n    return a - b\n"


def _suite(root: Path, environment: str = "{name: workspace}", verifier: str = "workspace_tests") -> Path:
    repo = root / "repos" / "r1"
    (repo / "src" / "tests").mkdir(parents=True)
    (repo / "src" / "calc.py").write_text(BUGGY, encoding="utf-8")
    (repo / "src" / "tests" / "test_calc.py").write_text(
        "import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n"
        "        self.assertEqual(add(2, 3), 5)\n", encoding="utf-8")
    (repo / "hidden").mkdir()
    (repo / "hidden" / "test_hidden.py").write_text(
        "import unittest\nfrom calc import add\n\nclass H(unittest.TestCase):\n    def test_more(self):\n"
        "        self.assertEqual(add(-1, 1), 0)\n", encoding="utf-8")
    row = {"id": "r1", "input": "Fix calc.py so the tests pass.", "target": "tests pass", "split": "test",
           "workspace": "repos/r1/src", "hidden": "repos/r1/hidden",
           "expect": {"calc.py": {"contains": "a + b"}, "notes.txt": {"absent": True}}}
    (root / "tasks.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    (root / "benchmark.yaml").write_text(f"tasks: tasks.jsonl\nverifier: {verifier}\nenvironment: {environment}\n",
                                         encoding="utf-8")
    return root


def _fixer(request) -> str:
    """Reads calc.py, fixes it, runs the tests, answers."""
    seen = "\n".join(m.get("content") or "" for m in request.messages)
    if "PASSED" in seen:
        return "Fixed: add now adds."
    if "edited calc.py" in seen:
        return '{"tool": "run-tests", "arguments": {}}'
    if "return a - b" in seen:
        return json.dumps({"tool": "edit-file", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}})
    return '{"tool": "read-file", "arguments": {"path": "calc.py"}}'


def test_workspace_rollout_fixes_a_copy_and_hidden_tests_judge_it(tmp_path):
    bench = load_benchmark(str(_suite(tmp_path)))
    [task] = bench.split("test")
    assert Path(task.meta["workspace"]).is_absolute() and bench.info()["environment"] == "workspace"
    [result] = asyncio.run(evaluate(AGENT, [task], MockBackend(_fixer), bench.verifier))
    assert result.reward == 1.0 and result.error is None, result.trajectory
    roles = [s["role"] for s in result.trajectory]
    assert roles[:2] == ["user", "assistant"] and roles.count("tool") == 3
    assert roles[-2:] == ["verifier", "workspace"]
    changes = result.trajectory[-1]["content"]
    assert "-    return a - b" in changes and "+    return a + b" in changes
    assert (tmp_path / "repos/r1/src/calc.py").read_text(encoding="utf-8") == BUGGY  # the source is never changed
    assert not list(Path(task.meta["workspace"]).parent.glob("hidden_tests"))


def test_without_the_fix_the_hidden_tests_fail_with_their_assertion(tmp_path):
    bench = load_benchmark(str(_suite(tmp_path)))
    [result] = asyncio.run(evaluate(AGENT, bench.split("test"), MockBackend(["I think it works."]), bench.verifier))
    assert result.reward == 0.0 and result.parsed
    assert "hidden tests failed" in result.trajectory[-1]["content"] and "AssertionError" in \
        result.trajectory[-1]["content"]


def test_each_rollout_gets_a_fresh_workspace_and_it_is_removed(tmp_path):
    bench = load_benchmark(str(_suite(tmp_path)))
    seen: list[str] = []

    def policy(request) -> str:
        text = "\n".join(m.get("content") or "" for m in request.messages)
        if "wrote" in text:
            return "done"
        if "HOME" in text:
            seen.append(text)
        return '{"tool": "write-file", "arguments": {"path": "notes.txt", "content": "x"}}'

    results = asyncio.run(evaluate(AGENT, bench.split("test"), MockBackend(policy), bench.verifier, trials=3))
    assert len(results) == 3 and all(r.reward == 0.0 for r in results)
    assert not (tmp_path / "repos/r1/src/notes.txt").exists()
    assert not list(Path("/tmp").glob("evolve-ws-*")) or all(
        not p.joinpath("notes.txt").exists() for p in Path("/tmp").glob("evolve-ws-*"))


def test_workspace_files_checks_the_final_state(tmp_path):
    bench = load_benchmark(str(_suite(tmp_path, verifier="workspace_files")))
    [done] = asyncio.run(evaluate(AGENT, bench.split("test"), MockBackend(_fixer), bench.verifier))
    assert done.reward == 1.0, done.trajectory[-2:]
    [bad] = asyncio.run(evaluate(AGENT, bench.split("test"), MockBackend(
        lambda r: "ok" if "wrote" in (r.messages[-1].get("content") or "") else
        '{"tool": "write-file", "arguments": {"path": "notes.txt", "content": "x"}}'), bench.verifier))
    assert bad.reward == 0.0 and "calc.py does not contain 'a + b'" in bad.trajectory[-2]["content"]


def test_user_tools_registered_in_benchmark_yaml_run_in_the_sandbox(tmp_path):
    root = _suite(tmp_path, environment="{name: workspace, tools: [{implementation: 'python:suite_tools:shout', "
                                        "path: tools}]}")
    (root / "tools").mkdir()
    (root / "tools" / "suite_tools.py").write_text("def shout(text):\n    return text.upper()\n", encoding="utf-8")
    bench = load_benchmark(str(root))
    assert bench.verifier.tool_registry.allows("python:suite_tools:shout")
    shout = builtin_tool("word_count").model_copy(update={"name": "shout",
                                                          "implementation": "python:suite_tools:shout"})
    harness = Harness(tools=(shout,), control=Control(max_turns=2))
    backend = MockBackend(lambda r: "ok" if "Result of tool" in (r.messages[-1].get("content") or "") else
                          '{"tool": "shout", "arguments": {"text": "hi"}}')
    asyncio.run(run_task(harness, bench.split("test")[0], backend, bench.verifier))
    assert "Result of tool shout: HI" in backend.history[1].messages[-1]["content"]


@pytest.mark.parametrize(("environment", "message"), [
    ("{name: nowhere}", "field 'environment.name': unknown environment 'nowhere'; valid: plain"),
    ("{tools: ['python:subprocess']}", "field 'environment': field 'tools.0'"),
    ("{limits: {max_turns: 0}}", "field 'environment': field 'limits.max_turns'"),
    ("{colour: red}", "field 'environment'"),
])
def test_bad_environment_blocks_are_one_line_errors(tmp_path, environment, message):
    with pytest.raises(BenchmarkError) as info:
        load_benchmark(str(_suite(tmp_path, environment=environment)))
    assert message in str(info.value) and "benchmark.yaml" in str(info.value) and "\n" not in str(info.value)


def test_user_environments_and_verifiers_can_be_registered(tmp_path):
    register_environment("quiet", lambda spec, tools: PlainEnvironment(tools, spec.sandbox, spec.limits))
    bench = load_benchmark(str(_suite(tmp_path, environment="{name: quiet}", verifier="exact")))
    assert bench.environment.name == "plain" and bench.verifier.environment is bench.environment


def _limited(limits: RolloutLimits):
    return PlainEnvironment(limits=limits)


def test_limits_end_a_rollout_as_their_own_failure_kind(tmp_path):
    bench = load_benchmark(str(_suite(tmp_path)))
    task = bench.split("test")[0]
    loop = MockBackend(lambda r: '{"tool": "list-files", "arguments": {}}')
    by_tokens = asyncio.run(run_task(AGENT, task, loop, bench.verifier, environment=_limited(
        RolloutLimits(max_tokens=150))))
    assert by_tokens.error.startswith("TokenLimit:") and by_tokens.reward == 0.0
    by_turns = asyncio.run(run_task(AGENT, task, loop, bench.verifier, environment=_limited(
        RolloutLimits(max_turns=2))))
    assert by_turns.error == "TurnLimit: still calling tools after 2 turns"
    by_time = asyncio.run(run_task(AGENT, task, loop, bench.verifier, environment=_limited(
        RolloutLimits(max_seconds=0.01))))
    assert by_time.error.startswith("TimeLimit:")
    kinds = {r.error.split(":")[0] for r in (by_tokens, by_turns, by_time)}
    assert kinds == {"TokenLimit", "TurnLimit", "TimeLimit"}
    assert any(s["role"] == "verifier" for s in by_turns.trajectory)  # the verifier's view is kept for the analyst
