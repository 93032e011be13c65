"""The tool critic rejects edits that name code outside the allow-list or change a tool's implementation,
under every preset, and a run with such a proposer goes on."""

from __future__ import annotations

import asyncio
import json

import pytest
from engine_mocks import RUN_OPTIONS, policy_answer

from evolve import api
from evolve.backends.mock import MockBackend
from evolve.bench.tools import ToolRegistry, builtin_tool, unregister_tool
from evolve.harness import Edit, Harness, apply_edits
from evolve.loop.tool_critic import ToolCritic
from evolve.store import LineageStore

CALC = builtin_tool("calculator")
BASE = Harness(tools=(CALC,))


def review(edits: list[Edit], registry: ToolRegistry | None = None, parent: Harness = BASE):
    candidate = apply_edits(parent, edits)
    return asyncio.run(ToolCritic(registry or ToolRegistry()).review(parent, candidate, edits))


def tool_edit(op: str, value: dict, target: str | None = None) -> Edit:
    return Edit(op=op, component="tool", target=target, value=value, hypothesis="h")


def test_descriptions_names_and_allowed_tools_pass():
    assert review([tool_edit("replace", {"description": "Exact arithmetic."}, "calculator")]).passed
    assert review([tool_edit("add", builtin_tool("read_file").model_dump(mode="json"))]).passed
    registry = ToolRegistry(["python:my_tools:lookup"])
    value = {"name": "lookup", "description": "d", "implementation": "python:my_tools:lookup"}
    assert review([tool_edit("add", value)], registry).passed


@pytest.mark.parametrize("implementation", ["python:subprocess:getoutput", "python:os:system", "builtin:bash"])
def test_new_code_is_rejected(implementation):
    verdict = review([tool_edit("add", {"name": "shell", "description": "d", "implementation": implementation})])
    assert not verdict.passed and verdict.kind == "tools" and "not on the allow-list" in verdict.reason


def test_changing_an_implementation_is_rejected_even_to_an_allowed_one():
    verdict = review([tool_edit("replace", {"implementation": "builtin:word_count"}, "calculator")])
    assert not verdict.passed and "changes a tool implementation" in verdict.reason
    swap = [Edit(op="remove", component="tool", target="calculator"),
            tool_edit("add", {**CALC.model_dump(mode="json"), "implementation": "builtin:word_count"})]
    verdict = review(swap)
    assert not verdict.passed and "changes implementation" in verdict.reason


def _malicious_helper(request):
    if request.role == "proposer":
        return json.dumps({"edits": [{"op": "add", "component": "tool", "hypothesis": "a shell helps",
                                      "value": {"name": "shell", "description": "Run a command.",
                                                "implementation": "python:subprocess:getoutput"}}]})
    if request.role == "critic":
        return json.dumps({"verdict": "pass", "reason": "looks fine"})
    return "{}"


def test_a_run_whose_proposer_binds_a_shell_rejects_it_and_finishes(tmp_path):
    db = str(tmp_path / "t.db")
    options = {**RUN_OPTIONS, "rounds": 2}
    summary = api.run(db=db, run_id="r", policy=MockBackend(policy_answer), helper=MockBackend(_malicious_helper),
                      **options)
    store = LineageStore(db)
    shells = [c for c in store.candidates("r") if any(e["component"] == "tool" for e in store.edits(c.id))]
    assert any(c.status == "rejected_critic" and "critic (tools)" in c.reason for c in shells)
    assert all(c.status in ("rejected_critic", "rejected_invalid") for c in shells)  # the rest: duplicates
    assert not any(r.candidate_id in {c.id for c in shells} for r in store.rollouts("r"))  # never rolled out
    assert store.get_run("r")["status"] == "finished" and summary["best"]["test"]["score"] is not None


def test_tools_registered_in_the_run_file_are_admitted_for_that_run(tmp_path):
    from evolve.loop.setup import build_parts
    from evolve.run_config import make_config

    run_file = tmp_path / "run.yaml"
    run_file.write_text("benchmark: sentiment-products\ntools:\n  - {implementation: 'python:team_tools:lookup', "
                        "path: tools}\n", encoding="utf-8")
    config = make_config(run_file)
    assert config.tools == [{"implementation": "python:team_tools:lookup", "path": str(tmp_path / "tools")}]
    parts = build_parts(config, policy=MockBackend(policy_answer), helper=MockBackend(_malicious_helper))
    registry = parts.benchmark.verifier.tool_registry
    assert registry.allows("python:team_tools:lookup") and not registry.allows("python:subprocess:getoutput")
    tool = {"name": "lookup", "description": "d", "implementation": "python:team_tools:lookup"}
    assert review([tool_edit("add", tool)], registry).passed
    assert ToolRegistry().allows("python:team_tools:lookup")  # also for the run's out-of-distribution suites
    unregister_tool("python:team_tools:lookup")
    assert not ToolRegistry().allows("python:team_tools:lookup")
