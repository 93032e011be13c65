from __future__ import annotations

import random

from loop_helpers import Result, parity_tasks

from evolve.harness import Edit
from evolve.loop.analyst import digest
from evolve.loop.memory import Memory


def _evidence(odd_right: bool, parse_ok: bool = True):
    tasks = {t.id: t for t in parity_tasks("ev", range(12))}
    results = []
    for t in tasks.values():
        right = t.target == "even" or odd_right
        results.append(Result(t.id, 1.0 if right else 0.0, t.target if right else "even", parsed=parse_ok))
    return digest(results, tasks, rng=random.Random(0))


def test_memory_carries_a_problem_across_rounds():
    memory = Memory()
    memory.observe(_evidence(odd_right=False), 0)
    assert [p.label for p in memory.open_problems()] == ["label:odd"]
    tried = [Edit(op="add", component="system", target="odd-rule", value="Numbers ending in 1,3,5,7,9 are odd.",
                  hypothesis="teach the odd rule")]
    assert memory.record(0, "c0", tried, "rejected", -0.02) == ["label:odd"]
    # round 1: the problem is still there, with the failed attempt on record, and rendered for the proposer
    memory.observe(_evidence(odd_right=False), 1)
    problem = memory.get("label:odd")
    assert problem.status == "open" and problem.attempts[0].verdict == "rejected"
    text = memory.render()
    assert "Open problems" in text and "label:odd" in text and "rejected" in text and "-0.020" in text
    # an accepted candidate resolves what it addressed
    memory.record(1, "c1", [Edit(op="add", component="example", value={"input": "Is 3 even or odd?",
                                                                          "output": "odd"}, hypothesis="odd demo")],
                  "accepted", 0.1)
    assert memory.get("label:odd").status == "resolved"
    assert "Resolved problems" in memory.render() and "fixed by" in memory.render()
    # it comes back if the evidence still shows it
    memory.observe(_evidence(odd_right=False), 2)
    assert memory.get("label:odd").status == "open" and memory.get("label:odd").reopened == 1
    # and is resolved when the evidence no longer shows it
    memory.observe(_evidence(odd_right=True), 3)
    assert memory.get("label:odd").status == "resolved"
    assert Memory.from_json(memory.to_json()) == memory


def test_attempts_go_to_named_problems_or_all_open_ones():
    memory = Memory()
    memory.observe(_evidence(odd_right=False, parse_ok=False), 0)
    assert {p.label for p in memory.open_problems()} == {"label:odd", "unparseable"}
    parse_fix = [Edit(op="set", component="control", target="answer.mode", value="last_line")]
    assert memory.record(0, "c0", parse_fix, "rejected") == ["unparseable"]
    generic = [Edit(op="add", component="system", target="care", value="Be careful.")]
    assert sorted(memory.record(0, "c1", generic, "rejected")) == ["label:odd", "unparseable"]


def test_update_from_engine_attempts():
    memory = Memory()
    memory.update(0, _evidence(odd_right=False), [
        {"candidate_id": "c0", "approach": "add a rule about odd numbers", "accepted": False, "delta": -0.01},
    ])
    problem = memory.get("label:odd")
    assert problem.status == "open" and problem.attempts[0].approach == "add a rule about odd numbers"
    memory.update(1, _evidence(odd_right=False), [{"candidate_id": "c1", "approach": "odd demo", "accepted": True}])
    assert memory.get("label:odd").status == "resolved"
