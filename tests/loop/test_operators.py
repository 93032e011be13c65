from __future__ import annotations

import asyncio
import random
from collections import Counter

from loop_helpers import LABELS, harness, parity_tasks

from evolve.harness import Example, apply_edits
from evolve.loop.novelty import novelty_key
from evolve.loop.operators import OperatorProposer
from evolve.loop.proposer import Proposer, ProposerContext

DEMO = parity_tasks("demo", range(100, 140))


def propose(op, h, n=4, budget=3, seed=0, **kw):
    ctx = ProposerContext(incumbent=h, budget=budget, **kw)
    return asyncio.run(op.propose(ctx, n, random.Random(seed)))


def test_drafts_are_valid_within_budget_and_distinct():
    op = OperatorProposer(DEMO, LABELS)
    h = harness()
    for budget in (1, 2, 3):
        drafts = propose(op, h, n=4, budget=budget)
        assert len(drafts) == 4
        versions = set()
        for d in drafts:
            assert 1 <= len(d.edits) <= budget and d.error is None
            assert all(e.origin == d.origin and e.hypothesis for e in d.edits)
            versions.add(apply_edits(h, d.edits).version)
        assert len(versions) == 4 and h.version not in versions
    assert drafts[0].origin == "fewshot" and len({d.origin for d in drafts}) >= 3


def test_fewshot_is_label_balanced_and_from_the_demo_pool():
    op = OperatorProposer(DEMO, LABELS, operators=["fewshot"])
    h = harness(examples=(Example(input="Is 2 even or odd?", output="even"),))
    [draft] = propose(op, h, n=1, budget=3)
    after = apply_edits(h, draft.edits)
    counts = Counter(e.output for e in after.examples)
    assert abs(counts["even"] - counts["odd"]) <= 1 and sum(counts.values()) == 4
    demo_inputs = {t.input: t.target for t in DEMO}
    assert all(demo_inputs[e.value["input"]] == e.value["output"] for e in draft.edits)


def test_fewshot_replaces_an_over_represented_label():
    op = OperatorProposer(DEMO, LABELS, operators=["fewshot"])
    h = harness(examples=tuple(Example(input=f"Is {n} even or odd?", output="even") for n in (2, 4, 6)))
    [draft] = propose(op, h, n=1, budget=1)
    [edit] = draft.edits
    assert edit.op == "replace" and edit.value["output"] == "odd" and "balance" in edit.hypothesis


def test_open_answer_tasks_and_empty_pool():
    tasks = [t.model_copy(update={"labels": None}) for t in DEMO]
    [draft] = propose(OperatorProposer(tasks, (), operators=["fewshot"]), harness(), n=1, budget=2)
    assert len(draft.edits) == 2
    assert propose(OperatorProposer([], LABELS, operators=["fewshot"]), harness(), n=2) == []


def test_control_merge_and_removal():
    h = harness()
    control = propose(OperatorProposer([], LABELS, operators=["control"]), h, n=20, budget=2)
    fields = {e.target for d in control for e in d.edits}
    assert {"samples", "temperature", "max_tokens", "answer.mode"} <= fields
    vote = next(d for d in control if d.edits[0].target == "samples")
    assert apply_edits(h, vote.edits).control.samples in (3, 5) and "Majority vote" in vote.edits[0].hypothesis
    [merge] = propose(OperatorProposer([], LABELS, operators=["skill_merge"]), h, n=1, budget=2)
    merged = apply_edits(h, merge.edits)
    assert len(merged.skills) == 1 and "Re-read the question." in merged.skills[0].body
    assert "Write one word." in merged.skills[0].body
    assert propose(OperatorProposer([], LABELS, operators=["skill_merge"]), h, n=1, budget=1) == []
    removals = propose(OperatorProposer([], LABELS, operators=["section_removal"]), h, n=5, budget=1)
    assert sorted(d.edits[0].target for d in removals) == ["format", "role"]


def test_banned_and_tried_directions_are_avoided():
    op = OperatorProposer([], LABELS, operators=["section_removal"])
    h = harness()
    first = propose(op, h, n=1, budget=1)[0].edits[0]
    again = propose(op, h, n=5, budget=1, banned=[novelty_key(first)])
    assert [d.edits[0].target for d in again] == [t for t in ("format", "role") if t != first.target]


def test_deterministic_for_a_seed():
    op = OperatorProposer(DEMO, LABELS)
    a = propose(op, harness(), seed=7)
    b = propose(op, harness(), seed=7)
    assert a == b
    assert isinstance(op, Proposer)


def test_fewshot_adds_whole_rounds_of_labels():
    op = OperatorProposer(DEMO, LABELS, operators=["fewshot"])
    [draft] = propose(op, harness(examples=()), n=1, budget=3)
    assert sorted(e.value["output"] for e in draft.edits) == ["even", "odd"]
