"""The proposer's reasoning fields (failure cluster, expected effect, specificity risk) and tool
parameters in the edit schema."""

from __future__ import annotations

import asyncio
import json
import random

import pytest
from loop_helpers import harness
from scripted import CompetentProposer, scripted_run
from typer.testing import CliRunner

from evolve.backends.mock import MockBackend
from evolve.bench.tools import ToolRegistry
from evolve.cli import app
from evolve.errors import EditError
from evolve.harness import apply_edits, load_harness
from evolve.loop.proposer import (
    REASON_FIELDS,
    TOOL_IMPLEMENTATIONS,
    LLMProposer,
    ProposerContext,
    edits_schema,
    render_messages,
    reply_reasoning,
    validate_reply,
)
from evolve.loop.tool_critic import ToolCritic
from evolve.paths import data_dir
from evolve.store import LineageStore

PLAIN = {"op": "add", "component": "system", "target": "verify", "value": "Re-read the question.",
         "hypothesis": "checking helps"}
REASONS = {"target_failure_cluster": "gold odd answered even", "expected_effect": "odd accuracy rises",
           "specificity_risk": "low: no task named"}


def propose(reply: str, ctx: ProposerContext):
    return asyncio.run(LLMProposer(MockBackend([reply])).propose(ctx, 1, random.Random(0)))[0]


def test_the_schema_asks_for_the_reasoning_fields_as_optional():
    item = edits_schema(2)["properties"]["edits"]["items"]
    assert set(REASON_FIELDS) <= set(item["properties"]) and not set(REASON_FIELDS) & set(item["required"])
    text = render_messages(ProposerContext(incumbent=harness()), 0)[1]["content"]
    assert all(name in text for name in REASON_FIELDS)


def test_drafts_without_the_new_fields_still_work_and_drafts_with_them_keep_them():
    ctx = ProposerContext(incumbent=harness(), budget=2)
    old = propose(json.dumps({"edits": [PLAIN]}), ctx)
    assert old.error is None and old.reasoning == [] and reply_reasoning(json.dumps({"edits": [PLAIN]}), 1) == []
    new = propose(json.dumps({"edits": [{**PLAIN, **REASONS}]}), ctx)
    assert new.error is None and new.reasoning[0].model_dump() == REASONS
    assert new.edits[0].hypothesis == "checking helps"


def test_a_tool_edit_carries_its_parameters_and_only_an_allow_listed_implementation():
    agent = load_harness(data_dir("harnesses") / "agent")
    tools = edits_schema(2, True)["properties"]["edits"]["items"]["properties"]["value"]["anyOf"][-1]
    assert tools["properties"]["implementation"]["enum"] == list(TOOL_IMPLEMENTATIONS)
    assert "builtin:bash" not in TOOL_IMPLEMENTATIONS and tools["properties"]["parameters"] == {"type": "object"}
    params = {"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]}
    tool = {"name": "find-text", "description": "Search the workspace for a pattern.", "parameters": params,
            "implementation": "builtin:search"}
    [edit] = validate_reply(json.dumps({"edits": [{"op": "add", "component": "tool", "target": "find-text",
                                                    "value": tool, "hypothesis": "searching is faster"}]}), agent, 1)
    assert edit.value["parameters"] == params
    named = validate_reply(json.dumps({"edits": [{"op": "add", "component": "tool", "target": "x", "hypothesis": "",
                                                  "value": {**tool, "implementation": "python:os:system"}}]}), agent, 1)
    verdict = asyncio.run(ToolCritic(ToolRegistry()).review(agent, apply_edits(agent, named), named))
    assert not verdict.passed and "python:os:system" in verdict.reason, "code the proposer names is rejected"
    with pytest.raises(EditError, match="parameters must be a JSON schema object"):
        validate_reply(json.dumps({"edits": [{"op": "replace", "component": "tool", "target": "read-file",
                                              "hypothesis": "", "value": {"parameters": "path"}}]}), agent, 1)
    backend = MockBackend(["{}"], default="{}")
    asyncio.run(LLMProposer(backend, max_repairs=0).propose(ProposerContext(incumbent=agent), 1, random.Random(0)))
    assert backend.history[0].json_schema == edits_schema(1, True), "tool objects only where tools are editable"


def test_reasoning_is_stored_with_the_candidate_and_shown(tmp_path):
    db = str(tmp_path / "r.db")
    scripted_run(db, CompetentProposer(), rounds=1)
    accepted = [c for c in LineageStore(db).candidates("r") if c.status == "accepted"]
    assert accepted and accepted[0].meta["reasoning"][0]["target_failure_cluster"] == "unparsable answers"
    shown = CliRunner().invoke(app, ["show", accepted[0].id, "--db", db])
    assert shown.exit_code == 0 and "edit reasoning" in shown.output and "unparsable answers" in shown.output
