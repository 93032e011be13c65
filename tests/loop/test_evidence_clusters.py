"""The analyst's failure clusters, contrast pairs and open problems, within the evidence budget."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import pytest
from loop_helpers import Result, parity_tasks

from evolve.bench.task import Task
from evolve.loop.analyst import digest
from evolve.loop.clusters import cluster_key


@dataclass
class Traced(Result):
    trajectory: Any = None


def label_results():
    tasks = {t.id: t for t in parity_tasks("p", range(20))}
    results = []
    for t in tasks.values():
        if t.target == "odd":  # odd is mostly answered even, once with no label
            pred = "I cannot tell" if t.id == "p-001" else ("even" if t.id != "p-019" else "odd")
        else:
            pred = "even"
        results.append(Result(t.id, float(pred == t.target), pred, parsed=pred in ("even", "odd")))
    return results, tasks


def test_label_failures_cluster_by_gold_and_answer():
    results, tasks = label_results()
    ev = digest(results, tasks, rng=random.Random(0))
    assert [(c.key, c.n) for c in ev.clusters] == [("gold odd → answered even", 8),
                                                   ("gold odd → answered (no valid label)", 1)]
    text = ev.render()
    assert "Failure clusters" in text and "- gold odd → answered even: 8" in text


def test_contrast_pairs_put_a_failure_beside_a_success_of_the_same_gold_answer():
    results, tasks = label_results()
    ev = digest(results, tasks, rng=random.Random(0))
    assert ev.contrasts
    pair = ev.contrasts[0]
    assert pair.failure.expected == pair.success.expected == "odd" and pair.success.reward == 1.0
    assert "Contrast pairs" in ev.render()


def test_other_failures_cluster_by_the_verifier_message_with_numbers_and_quotes_masked():
    tasks = {f"q{i}": Task(id=f"q{i}", input=f"What is {i} + {i}?", target=str(2 * i)) for i in range(6)}
    results = [Traced(f"q{i}", 0.0, "x", trajectory=[{"role": "verifier", "content": f"assert f({i}) == {2 * i}"}])
               for i in range(4)]
    results += [Traced("q4", 0.0, None, parsed=False, trajectory=[{"role": "verifier", "content": "no number"}]),
                Traced("q5", 0.0, None, error="timeout after 30 s")]
    ev = digest(results, tasks, rng=random.Random(0))
    assert [(c.key, c.n) for c in ev.clusters] == [("wrong answer: assert f(#) == #", 4),
                                                   ("error: timeout after # s", 1),
                                                   ("no answer extracted: no number", 1)]
    assert any(s.verifier.startswith("assert f(") for s in ev.failures), "the verifier's detail is shown"


def test_a_label_verifier_message_that_only_restates_the_answer_is_not_repeated():
    task = parity_tasks("p", range(1))[0]
    result = Traced(task.id, 0.0, "odd", trajectory=[{"role": "verifier", "content": "expected 'even'"}])
    ev = digest([result], {task.id: task}, rng=random.Random(0))
    assert ev.failures[0].verifier == "" and cluster_key(result, task, "") == "gold even → answered odd"


def test_open_problems_are_part_of_the_evidence():
    results, tasks = label_results()
    ev = digest(results, tasks, rng=random.Random(0), open_problems=["[label:odd] odd is missed (2 attempt(s))"])
    assert "Open problems: [label:odd] odd is missed (2 attempt(s))" in ev.render()


@pytest.mark.parametrize("budget", [200, 400, 700, 1200, 3000])
def test_the_evidence_stays_within_its_budget_and_keeps_the_clusters_longest(budget):
    tasks = {t.id: t.model_copy(update={"input": t.input + " " + "padding words " * 30})
             for t in parity_tasks("p", range(40))}
    results = [Result(t.id, float(t.target == "even"), "even") for t in tasks.values()]
    ev = digest(results, tasks, n_fail=6, n_success=3, max_chars=budget, rng=random.Random(1),
                open_problems=["[label:odd] odd is missed"])
    text = ev.render()
    assert len(text) <= budget
    full = digest(results, tasks, max_chars=100_000, rng=random.Random(1)).render()
    if len(full) > budget and budget >= 700:
        assert "gold odd → answered even: 20" in text and "Successes" not in text
