from __future__ import annotations

import math

from loop_helpers import Hist, harness

from evolve.harness import Edit, apply_edits
from evolve.loop.pruner import ablations, prune_set, recent_yield, replay, should_prune


def test_recent_yield_window_and_evaluated_only():
    history = [
        Hist(0, "system", "rejected", 0.30),  # outside the window at t=5, n_prune=4
        Hist(1, "system", "rejected", -0.01),
        Hist(2, "skill", "rejected", -0.02),
        Hist(3, "example", "accepted", 0.05),
        Hist(3, "example", "rejected", 0.01),
        Hist(4, "tool", "critic_reject", None),
        Hist(4, "control", "invalid", None),
        Hist(5, "control", "accepted", 0.2),  # round t itself is excluded
    ]
    y = recent_yield(history, 5, 4)
    assert y["system"] == -0.01 and y["skill"] == -0.02 and y["example"] == 0.05
    assert y["tool"] == -math.inf and y["control"] == -math.inf


def test_prune_set_carries_accepted_machinery():
    history = [Hist(1, "system", "rejected", -0.01), Hist(2, "skill", "rejected", -0.02),
               Hist(2, "example", "accepted", 0.1)]
    accepted = [Edit(op="add", component="system", target="tip", value="x", hypothesis="tips help"),
                Edit(op="add", component="example", value={"input": "a", "output": "b"}),
                Edit(op="set", component="control", target="samples", value=3)]
    entries = {e.component: e for e in prune_set(history, 3, 4, accepted)}
    assert set(entries) == {"system", "skill", "control"}  # example gained; tool: no evidence, nothing accepted
    assert [e.target for e in entries["system"].edits] == ["tip"]
    assert entries["skill"].edits == [] and entries["skill"].yield_ == -0.02
    assert entries["control"].yield_ == -math.inf and "samples" in entries["control"].describe()
    assert "tips help" in entries["system"].describe()


def _chain():
    return [
        [Edit(op="add", component="system", target="tip", value="Check twice.")],
        [Edit(op="set", component="control", target="samples", value=3)],
        [Edit(op="replace", component="system", target="tip", value="Check three times."),
         Edit(op="add", component="example", value={"input": "Is 4 even or odd?", "output": "even"})],
    ]


def test_ablations_leave_one_out_and_skip_what_no_longer_applies():
    seed = harness()
    chain = _chain()
    full, skipped = replay(seed, chain)
    assert skipped == [] and full.section("tip").text == "Check three times."
    abl = {a.index: a for a in ablations(seed, chain)}
    assert abl[1].harness.control.samples == 1 and abl[1].harness.section("tip").text == "Check three times."
    # without candidate 0, the replace of section tip no longer applies: skipped, the example stays
    assert abl[0].harness.section("tip") is None and len(abl[0].harness.examples) == 2
    assert [e.summary() for e in abl[0].skipped] == ["replace system tip"]
    assert abl[2].harness.section("tip").text == "Check twice." and len(abl[2].harness.examples) == 1
    assert all(a.harness.version != full.version for a in abl.values())


def test_pruner_removes_a_useless_edit():
    """An accepted edit whose removal costs nothing (within the noise band) is pruned."""
    seed = harness(examples=())
    useful = [Edit(op="add", component="example", value={"input": "Is 4 even or odd?", "output": "even"})]
    useless = [Edit(op="add", component="system", target="filler", value="Be nice.")]
    chain = [useful, useless]

    def score(h):  # a stand-in oracle: only the example matters
        return 0.4 + 0.3 * len(h.examples)

    incumbent = apply_edits(apply_edits(seed, useful), useless)
    band = 0.05
    pruned = [a.index for a in ablations(seed, chain) if should_prune(score(a.harness) - score(incumbent), band)]
    assert pruned == [1]
