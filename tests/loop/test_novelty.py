from __future__ import annotations

from evolve.harness import Edit
from evolve.loop.novelty import (
    exploration_directive,
    near_duplicate,
    novelty_key,
    stalled,
    structural_novelty,
)


def test_structural_novelty_counts_new_structural_types():
    assert structural_novelty(["tool", "system"], {"system": 1}) == 1
    assert structural_novelty(["skill"], {"skill": 2}) == 0
    assert structural_novelty(["skill", "tool", "skill"], {}) == 2
    assert structural_novelty(["system", "example", "control"], {}) == 0


def test_stall_needs_history_and_uses_window():
    assert not stalled([0.5, 0.5], 3, 0.02)  # t=1 < w
    assert stalled([0.5, 0.5, 0.51, 0.52], 3, 0.02)
    assert not stalled([0.5, 0.5, 0.51, 0.53], 3, 0.02)
    assert stalled([0.2, 0.6, 0.6, 0.6], 2, 0.0)


def test_directive_reserves_slots_for_untried_components():
    quiet = exploration_directive(False, {"system"}, ["system", "skill", "tool"])
    assert quiet.reserved_slots == 0 and quiet.text == ""
    d = exploration_directive(True, {"system", "example"}, ["system", "skill", "example", "tool"], slots=1)
    assert d.untried == ["skill", "tool"] and d.reserved_slots == 1
    assert "RESERVED" in d.text and "skill, tool" in d.text
    everything = exploration_directive(True, {"system"}, ["system"])
    assert everything.reserved_slots == 0 and everything.text


def test_novelty_keys():
    assert novelty_key(Edit(op="set", component="control", target="samples", value=3)) == "control:set:samples=3"
    assert novelty_key(Edit(op="replace", component="system", target="format", value="x")) == "system:replace:format"
    a = Edit(op="add", component="example", value={"input": "q1", "output": "a"})
    b = Edit(op="add", component="example", value={"input": "q2", "output": "a"})
    assert novelty_key(a) != novelty_key(b)
    assert novelty_key(a) == novelty_key(a.model_copy(update={"target": "3"}))


def test_near_duplicate():
    earlier = [Edit(op="add", component="system", target="check",
                    value="Before answering, re-read the question and check the arithmetic step by step.")]
    close = Edit(op="add", component="system", target="verify",
                 value="Before answering, re-read the question and check the arithmetic step by step!")
    other = Edit(op="add", component="system", target="verify", value="Answer in one word.")
    assert "near-duplicate" in near_duplicate(close, earlier, 0.9)
    assert near_duplicate(other, earlier, 0.9) is None
    same = earlier[0].model_copy()
    assert "identical" in near_duplicate(same, earlier, 0.99)
    skill = Edit(op="add", component="skill", target="check", value=earlier[0].value)
    assert near_duplicate(skill, earlier, 0.5) is None  # other component
    c1 = Edit(op="set", component="control", target="max_tokens", value=64)
    assert near_duplicate(Edit(op="set", component="control", target="max_tokens", value=65), [c1], 0.5) is None
