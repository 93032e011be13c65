from __future__ import annotations

import asyncio
import random

import numpy as np
import pytest

from evolve.errors import ConfigError
from evolve.selection.bandit import allocate
from evolve.selection.budget import Budget
from evolve.selection.config import AllocatorConfig, BudgetLimits

ALLOCATORS = ["successive_halving", "ucb", "thompson", "uniform"]


def pool(seed: int, n_cand: int = 8, n_tasks: int = 120, best_gap: float = 0.2):
    """Binary outcomes from a shared task difficulty; c0 is best by `best_gap`, others spread below it."""
    gen = np.random.default_rng(seed)
    difficulty = gen.normal(size=n_tasks)

    def outcomes(p: float) -> np.ndarray:
        latent = -difficulty + 0.5 * gen.normal(size=n_tasks)
        out = np.zeros(n_tasks)
        out[np.argsort(-latent)[:round(p * n_tasks)]] = 1.0
        return out

    table = {"inc": outcomes(0.45), "c0": outcomes(0.55 + best_gap)}
    for k in range(1, n_cand):
        table[f"c{k}"] = outcomes(0.55 - gen.uniform(0.0, 0.2))
    return table


class Oracle:
    def __init__(self, table: dict[str, np.ndarray]) -> None:
        self.table, self.calls = table, []

    async def __call__(self, cid: str, tasks: list[str]) -> dict[str, float]:
        self.calls.append((cid, list(tasks)))
        return {t: float(self.table[cid][int(t[1:])]) for t in tasks}


def run(cfg: AllocatorConfig, table, *, budget=None, known_incumbent=True, seed=0):
    n = len(table["inc"])
    tasks = [f"t{i}" for i in range(n)]
    oracle = Oracle(table)
    known = {"inc": {t: float(table["inc"][i]) for i, t in enumerate(tasks)}} if known_incumbent else None
    budget = budget or Budget(BudgetLimits(oracle_rollouts=None))
    cands = sorted(c for c in table if c != "inc")
    res = asyncio.run(allocate(cfg, cands, "inc", tasks, oracle, budget, random.Random(seed), known=known))
    return res, oracle, budget


@pytest.mark.parametrize("name", ALLOCATORS)
def test_allocators_keep_the_clear_best_and_spend_less_than_uniform(name):
    cfg = AllocatorConfig(name=name, minibatch=8)
    for seed in range(3):
        table = pool(seed)
        res, _, budget = run(cfg, table, seed=seed)
        assert res.survivors[0] == "c0"
        assert res.rollouts == budget.used("oracle_rollouts")
        full = 8 * len(table["inc"])
        if name == "uniform":
            assert res.rollouts == full and not res.stopped_early and len(res.survivors) == 8
        else:
            assert res.rollouts < 0.75 * full
            assert res.stopped_early and res.dropped


def test_hopeless_candidates_stop_after_one_minibatch():
    n = 100
    table = {"inc": np.ones(n), "bad1": np.zeros(n), "bad2": np.zeros(n), "ok": np.ones(n)}
    for name in ("successive_halving", "ucb", "thompson"):
        res, _, _ = run(AllocatorConfig(name=name, minibatch=10, survivors=1), table)
        assert "cannot beat the incumbent" in res.dropped["bad1"]
        assert res.per_candidate["bad1"] <= 20
        assert res.survivors == ["ok"]


def test_comparisons_are_paired_on_the_same_task_order():
    table = pool(1, n_cand=4, n_tasks=60)
    res, oracle, _ = run(AllocatorConfig(name="ucb", minibatch=5), table, known_incumbent=False)
    asked: dict[str, list[str]] = {}
    for cid, tasks in oracle.calls:
        asked.setdefault(cid, []).extend(tasks)
    # the incumbent is asked for every task any candidate saw, and each candidate saw a prefix of one order
    longest = max(asked.values(), key=len)
    for cid, tasks in asked.items():
        assert tasks == longest[:len(tasks)] or cid == "inc"
        assert set(tasks) <= set(asked["inc"])
    assert res.per_candidate["inc"] == len(asked["inc"])


@pytest.mark.parametrize("name", ALLOCATORS)
def test_budget_is_never_overspent(name):
    table = pool(2)
    budget = Budget(BudgetLimits(oracle_rollouts=150))
    res, oracle, _ = run(AllocatorConfig(name=name, minibatch=8, trials_per_task=2), table, budget=budget,
                         known_incumbent=False)
    spent = sum(len(tasks) for _, tasks in oracle.calls) * 2
    assert spent == res.rollouts == budget.used("oracle_rollouts") <= 150
    assert "budget" in res.reason
    assert res.stopped_early


def test_trials_multiply_the_cost_and_results_are_deterministic():
    table = pool(3, n_cand=4, n_tasks=40)
    one, _, _ = run(AllocatorConfig(name="uniform", minibatch=10), table)
    two, _, _ = run(AllocatorConfig(name="uniform", minibatch=10, trials_per_task=3), table)
    assert two.rollouts == 3 * one.rollouts == 3 * 4 * 40
    a, _, _ = run(AllocatorConfig(name="thompson"), pool(4), seed=7)
    b, _, _ = run(AllocatorConfig(name="thompson"), pool(4), seed=7)
    assert (a.rollouts, a.survivors, a.dropped) == (b.rollouts, b.survivors, b.dropped)


def test_missing_results_count_as_zero():
    async def flaky(cid: str, tasks: list[str]) -> dict[str, float]:
        return {} if cid == "crashy" else dict.fromkeys(tasks, 1.0)

    res = asyncio.run(allocate(AllocatorConfig(name="uniform"), ["crashy", "fine"], "inc", ["a", "b"], flaky,
                               Budget(), random.Random(0)))
    assert res.rewards["crashy"] == {"a": 0.0, "b": 0.0}
    assert res.survivors == ["fine", "crashy"]


def test_unknown_allocator_lists_valid_ones():
    bad = AllocatorConfig.model_construct(**{**AllocatorConfig().model_dump(), "name": "greedy"})
    with pytest.raises(ConfigError, match="valid: successive_halving, ucb, thompson, uniform"):
        asyncio.run(allocate(bad, ["a"], "inc", ["t"], Oracle({}), Budget(), random.Random(0)))


def test_dropped_candidates_get_storable_rejections():
    res, _, _ = run(AllocatorConfig(name="ucb", minibatch=8), pool(5))
    decisions = res.dropped_decisions()
    assert {d.candidate_id for d in decisions} == set(res.dropped)
    assert all(not d.accepted and d.reason.startswith("stopped early: ") for d in decisions)
    assert all(d.stats["rollouts"] > 0 and "mean" in d.stats for d in decisions)


def test_a_candidate_is_never_lost_to_a_leader_that_acceptance_rejects():
    """The best-scoring candidate is inadmissible (say, it collapses onto one label): the second best,
    which an allocator would stop as "worse than the leader", must still be fully evaluated."""
    n = 120
    gen = np.random.default_rng(0)
    table = {"inc": (gen.random(n) < 0.3).astype(float), "tempting": (gen.random(n) < 0.9).astype(float),
             "good": (gen.random(n) < 0.6).astype(float), "bad": np.zeros(n)}

    async def qualify(cid: str) -> float | None:
        return None if cid == "tempting" else float(table[cid].mean())

    for name in ALLOCATORS:
        cfg = AllocatorConfig(name=name, minibatch=8, survivors=1)
        tasks = [f"t{i}" for i in range(n)]
        known = {"inc": {t: float(table["inc"][i]) for i, t in enumerate(tasks)}}
        res = asyncio.run(allocate(cfg, ["bad", "good", "tempting"], "inc", tasks, Oracle(table), Budget(),
                                   random.Random(1), known=known, qualify=qualify))
        assert "good" in res.survivors and "good" in res.qualified, (name, res.dropped)
        assert "tempting" not in res.qualified
        assert name == "uniform" or res.per_candidate["bad"] < n, name


def test_a_final_screen_stops_a_candidate_on_its_own_evidence():
    n = 100
    table = {"inc": np.zeros(n), "collapsing": np.ones(n), "fine": np.ones(n)}
    seen_at_stop = {}

    async def screen(cid: str, seen: list[str]) -> str | None:
        if cid == "collapsing" and len(seen) >= 12:
            seen_at_stop[cid] = len(seen)
            return "guard: collapse"
        return None

    tasks = [f"t{i}" for i in range(n)]
    known = {"inc": dict.fromkeys(tasks, 0.0)}
    res = asyncio.run(allocate(AllocatorConfig(name="ucb", minibatch=4), ["collapsing", "fine"], "inc", tasks,
                               Oracle(table), Budget(), random.Random(0), known=known, screen=screen))
    assert res.final == {"collapsing": "guard: collapse"} and res.survivors == ["fine"]
    assert res.per_candidate["collapsing"] <= 2 * seen_at_stop["collapsing"]


def test_budget_cut_candidates_are_reported_with_what_they_saw():
    table = pool(6, n_cand=3, n_tasks=80)
    budget = Budget(BudgetLimits(oracle_rollouts=60))
    res, _, _ = run(AllocatorConfig(name="ucb", minibatch=8), table, budget=budget)
    assert res.budget_cut and "budget" in res.reason
    assert all(res.estimates[c]["n"] > 0 for c in res.budget_cut)
    assert not set(res.budget_cut) & set(res.dropped)


def test_stratified_order_keeps_every_prefix_near_the_label_shares():
    import random as _random

    from evolve.selection.bandit import stratified_order
    ids = [f"t{i}" for i in range(60)]
    strata = {t: ("pos" if i < 40 else "neg") for i, t in enumerate(ids)}  # sorted by label: a plain prefix is all pos
    for seed in range(20):
        order = stratified_order(ids, strata, _random.Random(seed))
        assert sorted(order) == sorted(ids)
        for n in (3, 8, 16, 30):
            pos = sum(strata[t] == "pos" for t in order[:n])
            assert abs(pos - n * 2 / 3) <= 1, (seed, n, pos)
    plain = ids[:]
    _random.Random(3).shuffle(plain)
    assert stratified_order(ids, None, _random.Random(3)) == plain


def test_stratified_order_groups_labels_the_way_the_guards_count_them():
    import random as _random

    from evolve.selection.bandit import stratified_order
    ids = [f"t{i}" for i in range(30)]
    clean = {t: ("positive" if i % 3 else "negative") for i, t in enumerate(ids)}
    noisy = {t: (f" {v.title()}." if i % 2 else v) for i, (t, v) in enumerate(clean.items())}
    for seed in range(5):
        assert stratified_order(ids, noisy, _random.Random(seed)) == stratified_order(ids, clean, _random.Random(seed))
