from __future__ import annotations

import random
from dataclasses import dataclass

from loop_helpers import Result, parity_tasks

from evolve.bench.task import Task
from evolve.loop.analyst import digest


def _results():
    tasks = {t.id: t for t in parity_tasks("ev", range(20))}
    results = []
    for i, t in enumerate(tasks.values()):
        pred = "even" if i % 4 else None
        results.append(Result(t.id, float(pred == t.target), pred, parsed=pred is not None,
                              error="timeout" if i == 7 else None))
    return tasks, results


def test_digest_statistics():
    tasks, results = _results()
    ev = digest(results, tasks, rng=random.Random(1))
    assert ev.n == 20
    assert ev.score == sum(r.reward for r in results) / 20
    assert ev.parse_rate == 15 / 20 and ev.error_rate == 1 / 20
    stats = {s.label: s for s in ev.labels}
    assert stats["odd"].correct == 0 and stats["odd"].predicted_as["even"] > 0
    assert stats["even"].correct == sum(1 for r in results if r.reward == 1.0)
    assert ev.predictions["even"] == 15 and ev.predictions["(nothing)"] == 5
    assert len(ev.failures) == 6 and len(ev.successes) == 3
    assert {s.expected for s in ev.failures} == {"even", "odd"}  # spread over gold answers
    assert all(s.reward < 0.5 for s in ev.failures) and all(s.reward >= 0.5 for s in ev.successes)


def test_digest_is_deterministic_whatever_the_order():
    tasks, results = _results()
    a = digest(results, tasks, rng=random.Random(3))
    b = digest(list(reversed(results)), tasks, rng=random.Random(3))
    assert a == b and a.render() == b.render()


def test_render_is_bounded_and_names_the_numbers():
    long_tasks = {f"t{i}": Task(id=f"t{i}", input="word " * 300, target=f"answer {i}") for i in range(30)}
    results = [Result(f"t{i}", 0.0, "something else entirely " * 20) for i in range(30)]
    ev = digest(results, long_tasks, max_chars=1200, rng=random.Random(0))
    text = ev.render()
    assert len(text) <= 1200 and "score 0.000" in text and "Failures" in text
    assert ev.labels == []  # open answers have no per-label table
    short = digest(*reversed(_results()), rng=random.Random(0)).render()
    assert "Accuracy per gold label" in short and "odd: 0/10" in short


def test_empty_results():
    ev = digest([], {}, rng=random.Random(0))
    assert ev.n == 0 and "0 evolve-split rollouts" in ev.render()


@dataclass
class AgentResult:
    task_id: str
    reward: float
    prediction: str | None
    trajectory: list
    parsed: bool = True
    error: str | None = None
    trial: int = 0


def test_multi_turn_failures_show_decisive_steps_and_the_verifier_output():
    task = Task(id="r1", input="Fix the bug so the tests pass.", target="tests pass")
    trajectory = [
        {"role": "user", "content": task.input},
        {"role": "assistant", "turn": 1, "content": "", "tool_calls": [{"name": "read-file", "arguments": {}}]},
        {"role": "tool", "name": "read-file", "ok": True, "content": "def add(a, b): return a - b"},
        {"role": "assistant", "turn": 2, "content": "", "tool_calls": [{"name": "run-tests", "arguments": {}}]},
        {"role": "tool", "name": "run-tests", "ok": False, "content": "error: the tool ran past its 10s time limit"},
        {"role": "assistant", "turn": 3, "content": "Done, it is fixed.", "tool_calls": []},
        {"role": "verifier", "content": "hidden tests failed: AssertionError: -2 != 0"},
    ]
    evidence = digest([AgentResult("r1", 0.0, "Done, it is fixed.", trajectory)], {"r1": task})
    text = evidence.render()
    assert "verifier: hidden tests failed: AssertionError: -2 != 0" in text
    assert "step: tool run-tests failed: error: the tool ran past its 10s time limit" in text
    assert "step: turn 3: answered Done, it is fixed." in text
    single = digest([AgentResult("r1", 0.0, "no", [{"role": "user", "content": "x"},
                                                  {"role": "assistant", "content": "no"},
                                                  {"role": "verifier", "content": "expected 'yes'"}])],
                    {"r1": task}).render()
    assert "step:" not in single and "verifier:" not in single  # single-turn evidence is unchanged
