from __future__ import annotations

import asyncio
import json
import random

from loop_helpers import Hist, harness

from evolve.backends.base import Completion
from evolve.backends.mock import MockBackend
from evolve.harness import Edit
from evolve.loop.novelty import Directive
from evolve.loop.proposer import (
    LLMProposer,
    Proposer,
    ProposerContext,
    edits_schema,
    render_messages,
    validate_reply,
)
from evolve.loop.pruner import PruneEntry


def _edit(target="verify", text="Re-read the question before answering."):
    return {"op": "add", "component": "system", "target": target, "value": text, "hypothesis": "checking helps"}


def _ctx(**kw):
    base = dict(incumbent=harness(), evidence="score 0.40 on 10 rollouts", budget=2, description="Parity questions",
                labels=("even", "odd"))
    base.update(kw)
    return ProposerContext(**base)


def propose(backend, ctx, n=1, **kw):
    return asyncio.run(LLMProposer(backend, **kw).propose(ctx, n, random.Random(0)))


def test_invalid_json_is_repaired():
    good = json.dumps({"edits": [_edit()]})
    backend = MockBackend(["I would add a section.", f"Here you go:\n```json\n{good}\n```\nThanks"])
    [draft] = propose(backend, _ctx())
    assert draft.error is None and draft.repairs == 1 and draft.origin == "llm"
    assert [e.summary() for e in draft.edits] == ["add system verify"]
    assert "no valid JSON" in backend.history[1].messages[-1]["content"]
    assert backend.history[1].messages[-2] == {"role": "assistant", "content": "I would add a section."}
    first = backend.history[0]
    assert first.role == "proposer" and first.json_schema == edits_schema(2) and first.temperature == 0.7
    assert draft.messages == list(first.messages) and draft.reply.startswith("Here you go")


def test_still_invalid_becomes_a_draft_with_error():
    backend = MockBackend(["nope", "{}", json.dumps({"edits": [{"op": "add", "component": "system"}]})])
    [draft] = propose(backend, _ctx(), max_repairs=2)
    assert draft.edits == [] and draft.repairs == 2
    assert draft.error.startswith("invalid reply after 2 repair(s)") and "target is required" in draft.error
    assert len(backend.history) == 3


def test_edits_that_do_not_apply_get_their_error_fed_back():
    bad = json.dumps({"edits": [{"op": "replace", "component": "system", "target": "nosuch", "value": "x",
                                 "hypothesis": "h"}]})
    good = json.dumps({"edits": [_edit()]})
    backend = MockBackend([bad, good])
    [draft] = propose(backend, _ctx())
    assert draft.error is None and "unknown section 'nosuch'" in backend.history[1].messages[-1]["content"]


def test_truncates_to_budget_and_normalizes():
    reply = json.dumps({"edits": [_edit("a"), _edit("b", "Answer in one word."), _edit("c", "Be brief.")]})
    [draft] = propose(MockBackend([reply]), _ctx(budget=2))
    assert [e.target for e in draft.edits] == ["a", "b"]
    items = [{"op": "remove", "component": "examples", "target": 0, "value": None, "hypothesis": None, "id": "C1"}]
    edits = validate_reply(json.dumps(items), harness(), 3)
    assert edits == [Edit(op="remove", component="example", target="0", origin="llm")]


def test_reserved_slot_must_touch_an_untried_component():
    directive = Directive(untried=["tool", "skill"], reserved_slots=1, text="Stalled. RESERVED: 1 slot")
    skill = {"op": "add", "component": "skill", "target": "plan", "value": {"description": "Plan.", "body": "Plan."},
             "hypothesis": "planning"}
    backend = MockBackend([json.dumps({"edits": [_edit()]}), json.dumps({"edits": [_edit("other")]}),
                           json.dumps({"edits": [skill]})])
    drafts = propose(backend, _ctx(directive=directive), n=2)
    assert drafts[0].edits[0].component == "skill" and drafts[0].repairs == 1
    assert drafts[1].edits[0].target == "other" and drafts[1].repairs == 0
    assert "RESERVED slot" in backend.history[0].messages[1]["content"]
    assert "RESERVED slot" not in backend.history[1].messages[1]["content"]


def test_backend_failure_is_a_draft_with_error():
    class Failing:
        name = "failing"

        async def complete(self, requests):
            return [Completion("", error="connection refused") for _ in requests]

    [draft] = propose(Failing(), _ctx())
    assert draft.edits == [] and "connection refused" in draft.error and draft.repairs == 0


def test_context_is_rendered_into_the_prompt():
    history = [Hist(0, "system", "rejected", -0.05, op="replace", target="format", hypothesis="shorter format")]
    accepted = Edit(op="add", component="skill", target="check", value={"body": "x", "description": "d"})
    prune = [PruneEntry("skill", [accepted], -0.02)]
    ctx = _ctx(history=history, memory="Open problems:\n- [label:odd] wrong", prune=prune,
               banned=[["system:replace:format"]], budget=3)
    backend = MockBackend([json.dumps({"edits": [_edit()]})])
    propose(backend, ctx)
    text = backend.history[0].messages[1]["content"]
    for needle in ("Parity questions", "even, odd", "score 0.40", "at most 3 edit(s)",
                   "falsified hypotheses must not be re-proposed", "round 0: replace system format — shorter format"
                   " → rejected, ΔS -0.050", "[label:odd]", "system:replace:format", "add skill check",
                   "never answers or content of specific tasks", "section `role`", "Is 2 even or odd?"):
        assert needle in text, needle


def test_llm_proposer_is_a_proposer():
    assert isinstance(LLMProposer(MockBackend()), Proposer)


def test_context_shrinks_to_fit_without_cutting_the_harness():
    history = [Hist(r, "system", "rejected", -0.01, op="add", target=f"s{r}", hypothesis="x" * 80) for r in range(40)]
    ctx = _ctx(history=history, memory="m" * 3000, evidence="e" * 5000)
    full = render_messages(ctx, 0)
    small = render_messages(ctx, 0, max_chars=4000)
    size = sum(len(m["content"]) for m in small)
    assert sum(len(m["content"]) for m in full) > 9000 and size <= 4000
    text = small[1]["content"]
    assert "section `role`" in text and "round 39" in text and "round 0:" not in text
    assert "never answers or content of specific tasks" in text
