from __future__ import annotations

import asyncio
import random
from collections import Counter

from loop_helpers import LABELS, harness, parity_tasks

from evolve.harness import Edit, Example, apply_edits
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


def test_fewshot_draws_label_balanced_sets_from_the_demo_pool_at_several_sizes():
    op = OperatorProposer(DEMO, LABELS, operators=["fewshot"])
    h = harness(examples=(Example(input="Is 2 even or odd?", output="even"),))
    drafts = propose(op, h, n=4, budget=1)
    sets = [d.edits[0] for d in drafts if d.edits[0].op == "set"]
    assert len(sets) >= 3 and len({len(e.value) for e in sets}) >= 3, "one round tries several sizes k"
    demo_inputs = {t.input: t.target for t in DEMO}
    for edit in sets:
        after = apply_edits(h, [edit])
        counts = Counter(e.output for e in after.examples)
        assert abs(counts["even"] - counts["odd"]) <= 1 and len(after.examples) == int(edit.target)
        assert all(demo_inputs[e["input"]] == e["output"] for e in edit.value)
    assert {len(e.value) for e in sets} <= {2, 4, 8, 16}


def test_untried_sizes_come_first_and_each_draw_is_its_own_direction():
    from evolve.loop.state import HistoryEntry

    op = OperatorProposer(DEMO, LABELS, operators=["fewshot"])
    tried = [HistoryEntry(round=0, candidate_id="c", component="example", op="set", target=str(k),
                          verdict="rejected") for k in (8, 2)]
    first = [len(d.edits[0].value) for d in propose(op, harness(), n=2, budget=1, history=tried)]
    assert sorted(first) == [4, 16]
    draws = propose(op, harness(), n=8, budget=1)
    keys = [novelty_key(d.edits[0]) for d in draws]
    assert len(set(keys)) == len(keys)
    banned = propose(op, harness(), n=8, budget=1, banned=[keys[:1]])
    assert keys[0] not in {novelty_key(d.edits[0]) for d in banned}, "a banned draw is not repeated"
    assert len(banned) == len(draws), "another draw of the same size is still allowed"


def test_every_other_draw_moves_the_demonstrations_to_the_other_placement():
    op = OperatorProposer(DEMO, LABELS, operators=["fewshot"])
    drafts = propose(op, harness(), n=4, budget=2)
    moved = [d for d in drafts if len(d.edits) == 2]
    assert len(moved) == 2 and all(apply_edits(harness(), d.edits).control.examples_as == "system" for d in moved)
    assert not any(len(d.edits) == 2 for d in propose(op, harness(), n=4, budget=1)), "needs a budget of 2"


def test_a_rejected_pair_leaves_its_placement_move_to_other_draws():
    from evolve.loop.state import HistoryEntry

    op = OperatorProposer(DEMO, LABELS, operators=["fewshot"])
    rejected = next(d for d in propose(op, harness(), n=4, budget=2) if len(d.edits) == 2)
    history = [HistoryEntry(round=0, candidate_id="r.0.0", component=e.component, op=e.op, target=str(e.target),
                            hypothesis=e.hypothesis, verdict="rejected") for e in rejected.edits]
    later = propose(op, harness(), n=4, budget=2, seed=1, history=history,
                    banned=[[novelty_key(e) for e in rejected.edits]])
    moved = [d for d in later if len(d.edits) == 2]
    assert len(moved) == 2, "the move is still paired with every other draw"
    assert all(novelty_key(d.edits[0]) != novelty_key(rejected.edits[0]) for d in moved)


def test_swaps_keep_the_label_of_the_swapped_example():
    op = OperatorProposer(DEMO, LABELS, operators=["fewshot"])
    h = harness(examples=tuple(Example(input=f"Is {n} even or odd?", output="even") for n in (2, 4, 6)))
    drafts = propose(op, h, n=12, budget=1)
    swaps = [d.edits[0] for d in drafts if d.edits[0].op == "replace"]
    assert swaps and all(e.value["output"] == "even" for e in swaps)


def test_format_operator_names_the_labels_once():
    op = OperatorProposer([], LABELS, operators=["format"])
    [draft] = propose(op, harness(), n=3, budget=1)
    after = apply_edits(harness(), draft.edits)
    assert all(label in after.section("answer-format").text for label in LABELS)
    assert propose(op, after, n=3, budget=1) == []


def test_open_answer_tasks_and_empty_pool():
    tasks = [t.model_copy(update={"labels": None}) for t in DEMO]
    [draft] = propose(OperatorProposer(tasks, (), operators=["fewshot"]), harness(), n=1, budget=2)
    [edit] = draft.edits
    assert edit.op == "set" and len(edit.value) in (2, 4, 8, 16)
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
    again = propose(op, h, n=5, budget=1, banned=[[novelty_key(first)]])
    assert [d.edits[0].target for d in again] == [t for t in ("format", "role") if t != first.target]


def test_deterministic_for_a_seed():
    op = OperatorProposer(DEMO, LABELS)
    a = propose(op, harness(), seed=7)
    b = propose(op, harness(), seed=7)
    assert a == b
    assert isinstance(op, Proposer)


def test_agent_operators_propose_typed_edits_only_for_agent_harnesses():
    import random as _random

    from evolve.bench.tools import builtin_tool
    from evolve.harness import Control, Harness, Skill, apply_edits
    from evolve.loop.agent_operators import AGENT_OPERATORS
    from evolve.loop.novelty import STRUCTURAL, edit_kind, structural_novelty
    from evolve.loop.proposer import ProposerContext

    def context(h):
        return ProposerContext(incumbent=h, evidence="", history=[], memory="", directive=None, prune=[], budget=2,
                               description="", labels=(), banned=[])

    single = Harness(skills=(Skill(name="s", description="d", body="b"),))
    assert all(list(gen(context(single), _random.Random(0))) == [] for gen in AGENT_OPERATORS.values())
    agent = Harness(tools=(builtin_tool("run_tests"),), skills=single.skills, control=Control(max_turns=8))
    for name, gen in AGENT_OPERATORS.items():
        proposals = list(gen(context(agent), _random.Random(0)))
        assert proposals, name
        for edits in proposals:
            changed = apply_edits(agent, edits)
            assert changed.version != agent.version and all(e.origin == name and e.hypothesis for e in edits)
            assert {edit_kind(e) for e in edits} <= set(STRUCTURAL)
            assert structural_novelty(edits, {}) == 1
    verify = next(e for p in AGENT_OPERATORS["flow"](context(agent), _random.Random(0)) for e in p
                  if e.target == "flow.verify_before_answer")
    assert verify.value is True and apply_edits(agent, [verify]).control.flow.verify_before_answer


def test_agent_operators_leave_single_turn_draws_unchanged():
    import asyncio as _asyncio
    import random as _random

    from evolve.harness import Harness, Section
    from evolve.loop.operators import OperatorProposer
    from evolve.loop.proposer import ProposerContext

    h = Harness(system=(Section(name="a", text="x"), Section(name="b", text="y")))
    ctx = ProposerContext(incumbent=h, evidence="", history=[], memory="", directive=None, prune=[], budget=2,
                          description="", labels=(), banned=[])
    old = OperatorProposer([], operators=["fewshot", "format", "control", "section_removal", "skill_merge"])
    new = OperatorProposer([])
    drafts = [_asyncio.run(p.propose(ctx, 4, _random.Random(7))) for p in (old, new)]
    assert [[e.key() for e in d.edits] for d in drafts[0]] == [[e.key() for e in d.edits] for d in drafts[1]]


def test_choice_proposes_calibrated_label_scoring_from_the_demo_pool_only_where_the_model_scores():
    h = harness(examples=())
    assert propose(OperatorProposer(DEMO, LABELS, operators=["choice"]), h) == [], "the backend cannot score"
    op = OperatorProposer(DEMO, LABELS, operators=["choice"], scores_choices=True)
    drafts = propose(op, h, n=4, budget=1)
    assert [d.origin for d in drafts] == ["choice"] * 3
    values = [d.edits[0].value for d in drafts]
    assert all(v["labels"] == list(LABELS) for v in values)
    calibrated = [v["calibration"] for v in values if v["calibration"]]
    assert len(calibrated) == 2 and calibrated[0] != calibrated[1], "two different draws"
    demo_inputs = {t.input for t in DEMO}
    for inputs in calibrated:
        assert set(inputs) <= demo_inputs and len(inputs) == 8
        assert Counter(int(i.split()[3]) % 2 for i in inputs) == {0: 4, 1: 4}, "label-balanced"
    on = apply_edits(h, drafts[0].edits)
    assert on.control.choice.calibration
    later = [d.edits[0].value for d in propose(op, on, n=4, budget=1)]
    assert any(v["calibration"] == [] for v in later) and all(v["calibration"] != values[0]["calibration"]
                                                              for v in later)
    assert propose(OperatorProposer(DEMO, (), operators=["choice"], scores_choices=True), h) == [], "open answers"


def test_calibrated_fewshot_pairs_a_draw_with_calibrated_choice_only_for_a_generating_harness():
    h = harness(examples=())
    op = OperatorProposer(DEMO, LABELS, operators=["calibrated_fewshot"], scores_choices=True)
    drafts = propose(op, h, n=4, budget=2)
    assert len(drafts) == 4 and {d.origin for d in drafts} == {"calibrated_fewshot"}
    demo = {t.input: t.target for t in DEMO}
    sizes = []
    for d in drafts:
        examples, choice = d.edits
        assert (examples.component, examples.op, choice.component, choice.target) == ("example", "set", "control",
                                                                                     "choice")
        assert all(demo[e["input"]] == e["output"] for e in examples.value), "demonstrations from the demo pool"
        assert Counter(e["output"] for e in examples.value) == Counter({lab: len(examples.value) // 2
                                                                        for lab in LABELS}), "label-balanced"
        assert set(choice.value["calibration"]) <= set(demo) and choice.value["labels"] == list(LABELS)
        sizes.append(len(examples.value))
        after = apply_edits(h, d.edits)
        assert len(after.examples) == len(examples.value) and after.control.choice.calibration
    assert len(set(sizes)) == 4, "the few-shot operator's sizes"
    assert len({tuple(d.edits[1].value["calibration"]) for d in drafts}) == 4, "a calibration draw per draft"
    assert propose(op, h, n=4, budget=1) == [], "two edits do not fit a budget of one"
    assert propose(OperatorProposer(DEMO, LABELS, operators=["calibrated_fewshot"]), h, budget=2) == [], \
        "the backend cannot score"
    chooser = apply_edits(h, drafts[0].edits)
    assert propose(op, chooser, n=4, budget=2) == [], "a harness that answers by choice keeps it with plain draws"


def test_a_new_draw_of_calibration_inputs_is_not_taken_for_a_draw_already_tried():
    from evolve.loop.state import HistoryEntry

    h = harness(examples=())
    op = OperatorProposer(DEMO, LABELS, operators=["choice"], scores_choices=True)
    first = propose(op, h, n=1, budget=1, seed=0)[0].edits[0]
    tried = [HistoryEntry(round=0, candidate_id="r.0.1", component="control", op="set", target="choice",
                          hypothesis=first.hypothesis, delta=0.0, verdict="rejected")]
    again = propose(op, h, n=1, budget=1, seed=1, history=tried)[0].edits[0]
    assert again.value["calibration"] and again.value["calibration"] != first.value["calibration"]


def test_control_proposes_no_decoding_settings_to_a_harness_that_answers_by_choice():
    h = harness(examples=(Example(input="Is 2 even or odd?", output="even"),))
    chooser = apply_edits(h, [Edit(op="set", component="control", target="choice", value={"labels": list(LABELS)})])
    op = OperatorProposer(DEMO, LABELS, operators=["control"])
    targets = {e.target for d in propose(op, chooser, n=8) for e in d.edits}
    assert targets == {"examples_as"}
    assert {"samples", "max_tokens"} <= {e.target for d in propose(op, h, n=8) for e in d.edits}
