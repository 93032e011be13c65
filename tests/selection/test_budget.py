from __future__ import annotations

import pytest

from evolve.errors import BudgetExhausted, ConfigError
from evolve.selection.budget import Budget, allocation_cost, estimate
from evolve.selection.config import AllocatorConfig, BudgetLimits


def test_ledger_never_overspends():
    budget = Budget(BudgetLimits(oracle_rollouts=10, surrogate_calls=None))
    budget.spend("oracle_rollouts", 6)
    assert budget.can_afford("oracle_rollouts", 4)
    assert not budget.can_afford("oracle_rollouts", 5)
    with pytest.raises(BudgetExhausted, match="oracle_rollouts"):
        budget.spend("oracle_rollouts", 5)
    assert budget.used("oracle_rollouts") == 6  # the refused spend left no trace
    budget.spend("oracle_rollouts", 4)
    assert budget.remaining("oracle_rollouts") == 0
    assert "oracle_rollouts" in budget.exhausted()
    budget.spend("surrogate_calls", 10**9)  # unlimited
    assert budget.remaining("surrogate_calls") == float("inf")


def test_random_spending_never_exceeds_limits(rng):
    budget = Budget(BudgetLimits(oracle_rollouts=500, surrogate_calls=50, proposer_tokens=10_000))
    for _ in range(2000):
        kind = rng.choice(["oracle_rollouts", "surrogate_calls", "proposer_tokens"])
        amount = rng.randint(0, 40)
        if budget.can_afford(kind, amount):
            budget.spend(kind, amount)
        else:
            with pytest.raises(BudgetExhausted):
                budget.spend(kind, amount)
    assert budget.used("oracle_rollouts") <= 500
    assert budget.used("surrogate_calls") <= 50
    assert budget.used("proposer_tokens") <= 10_000


def test_wall_clock_and_resume():
    now = [100.0]
    budget = Budget(BudgetLimits(wall_clock_s=10), spent={"wall_clock_s": 4, "oracle_rollouts": 7},
                    clock=lambda: now[0])
    assert budget.used("oracle_rollouts") == 7
    assert budget.can_afford("wall_clock_s", 5)
    now[0] += 6.5
    assert not budget.can_afford("wall_clock_s")
    assert budget.snapshot()["wall_clock_s"] == pytest.approx(10.5)
    with pytest.raises(ValueError):
        budget.spend("wall_clock_s", 1)


def test_unknown_budget_kind_lists_valid_ones():
    with pytest.raises(ConfigError, match="valid: oracle_rollouts, surrogate_calls, proposer_tokens, wall_clock_s"):
        Budget().can_afford("gpu_hours", 1)


def test_allocation_cost_bounds():
    uniform = AllocatorConfig(name="uniform")
    assert allocation_cost(uniform, 4, 50) == 200
    sh = AllocatorConfig(name="successive_halving", minibatch=10, eta=2, survivors=2)
    # 8 candidates: 8x10, then 4 more x10 (20), then 2 survivors to 50 (30 more each)
    assert allocation_cost(sh, 8, 50) == 8 * 10 + 4 * 10 + 2 * 30
    assert allocation_cost(sh, 8, 50) < allocation_cost(uniform, 8, 50)
    assert allocation_cost(sh.model_copy(update={"trials_per_task": 3}), 8, 50) == 3 * 180


def test_estimate_reports_the_binding_budget():
    limits = BudgetLimits(oracle_rollouts=1000, surrogate_calls=1000, proposer_tokens=None)
    est = estimate(limits, AllocatorConfig(name="uniform"), rounds=20, drafts_per_round=4, top_k=2,
                   n_validation=50, analyst_batch=10)
    # per round: 10 analyst + 2x50 candidates + 50 incumbent = 160 -> 6 rounds
    assert est.rollouts_per_round == 160
    assert (est.rounds, est.limiting, est.candidates_per_round) == (6, "oracle_rollouts", 2)
    assert est.rollouts_per_candidate == 50
    assert any("rounds affordable: 6" in line for line in est.lines())
    roomy = estimate(BudgetLimits(oracle_rollouts=None, surrogate_calls=None, proposer_tokens=None),
                     AllocatorConfig(), rounds=3, drafts_per_round=4, top_k=4, n_validation=50, analyst_batch=10)
    assert (roomy.rounds, roomy.limiting) == (3, "rounds")
