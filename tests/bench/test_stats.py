"""Evaluation statistics: confidence intervals, label baselines, prediction distribution, parse rate."""

from __future__ import annotations

import random

import pytest

from evolve.bench.stats import (
    balanced_score,
    best_constant_baseline,
    majority_baseline,
    mean_ci,
    parse_rate,
    prediction_distribution,
    wilson,
)
from evolve.bench.task import Task
from evolve.bench.verifiers import make_verifier


def test_wilson_interval_for_binary_rewards():
    mean, low, high = mean_ci([1.0] * 66 + [0.0] * 34)
    assert mean == pytest.approx(0.66)
    assert (low, high) == pytest.approx(wilson(66, 100))
    assert low == pytest.approx(0.5628, abs=1e-3) and high == pytest.approx(0.7462, abs=1e-3)
    assert mean_ci([1.0, 1.0])[2] == 1.0 and mean_ci([1.0, 1.0])[1] < 1.0
    assert mean_ci([]) == (0.0, 0.0, 0.0)


def test_bootstrap_interval_for_graded_rewards_is_seeded():
    values = [0.5, 0.8, 0.2, 0.9, 0.4, 0.7] * 5
    a = mean_ci(values, random.Random(1))
    assert a == mean_ci(values, random.Random(1))
    assert a[1] < a[0] < a[2]
    assert a[0] == pytest.approx(sum(values) / len(values))


def tasks(targets, labels=("a", "b", "c")):
    return [Task(id=f"t{i}", input="x", target=t, labels=labels) for i, t in enumerate(targets)]


def test_majority_and_best_constant_baselines():
    items = tasks(["a", "a", "a", "b", "c"])
    assert majority_baseline(items) == ("a", 0.6)
    assert best_constant_baseline(items, make_verifier("label")) == ("a", 0.6)
    assert best_constant_baseline(items, make_verifier("label"), ["b", "c"]) == ("b", 0.2)
    assert majority_baseline([]) == (None, 0.0)


def test_balanced_score_weighs_each_gold_label_alike():
    from evolve.store.records import RolloutRecord

    gold = {f"t{i}": ("a" if i < 6 else "b") for i in range(8)}

    def records(answer_of):
        return [RolloutRecord("r", "h", "b", "test", t, float(answer_of(t) == g)) for t, g in gold.items()]

    always_a = records(lambda t: "a")
    assert balanced_score(always_a, gold) == pytest.approx(0.5)  # 0.75 plain: the frequent label's share
    right_on_b_half_on_a = records(lambda t: gold[t] if t in ("t0", "t1", "t2", "t6", "t7") else "b")
    assert balanced_score(right_on_b_half_on_a, gold) == pytest.approx((3 / 6 + 2 / 2) / 2)
    trials = always_a + [RolloutRecord("r", "h", "b", "test", "t6", 1.0, trial=1)]
    assert balanced_score(trials, gold) == pytest.approx((1.0 + (0.5 + 0.0) / 2) / 2)
    assert balanced_score(always_a, {t: "a" for t in gold}) is None


def test_prediction_distribution_and_parse_rate():
    dist = prediction_distribution(["a", "a", None, "b"], [True, True, False, True])
    assert dist == {"a": 0.5, "(unparsed)": 0.25, "b": 0.25}
    top = prediction_distribution(["a", "b", "c", "a"], [True] * 4, top=1)
    assert top == {"a": 0.5, "(other)": 0.5}
    assert parse_rate([True, False, True, True]) == 0.75
    assert parse_rate([]) == 0.0
