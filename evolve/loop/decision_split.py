"""The validation tasks a run takes its decisions on: the whole split, or a sample sized to the budget.

Every candidate that may be accepted is evaluated on every decision task (plus the fresh evolve
tasks pooled into the decision, `acceptance.fresh_tasks`), and so is the seed once. On a large
validation split that full evaluation is most of a round's share of the oracle budget: with 200
validation tasks and 60 fresh ones, a 1,500-rollout budget pays for two or three rounds instead of
the five asked for, and a run stops after one or two rounds of drafts. `acceptance.validation_tasks`
says how many validation tasks decisions rest on:

- `all`: the whole split;
- a number N: a sample of N tasks;
- `budget`: the largest sample that lets the budget pay, after the seed's evaluation on it, for every
  configured round's analyst batch, the incumbent on the round's fresh tasks and `FULL_PER_ROUND`
  candidates evaluated in full (sample plus fresh tasks). It is never below the guard
  `min_validation_tasks` and never above the split; without an oracle budget it is the whole split.

A sample is drawn once per run, from the run's seed, stratified by gold label on label suites (each
label in about its share of the split), and is the same in every round, so the incumbent's
evaluation carries over from the round that accepted it. The final report scores the whole split.
"""

from __future__ import annotations

import random
from typing import Any

from evolve.bench.task import Task
from evolve.selection import bandit

FULL_PER_ROUND = 2
"""Full evaluations a `budget` sample leaves room for in every round: the candidate that is
accepted and, as much again, the screening of the others (stopped early on a part of the tasks)."""


def fresh_count(benchmark: Any, selection: Any, analyst_batch: int) -> int:
    """How many fresh evolve tasks a round pools into its decisions (0 when it pools none)."""
    acc = selection.acceptance
    if not acc.fresh_tasks or acc.greedy or acc.split != "validation" or "evolve" not in benchmark.splits:
        return 0
    return max(0, min(acc.fresh_tasks, len(benchmark.split("evolve")) - analyst_batch))


def budget_size(total: int, *, budget: int | None, rounds: int, analyst: int, fresh: int, trials: int,
                floor: int) -> int:
    """The largest n with trials·(n + rounds·(analyst + fresh + FULL_PER_ROUND·(n + fresh))) ≤ budget,
    within [floor, total] (`total` without a budget)."""
    if budget is None:
        return total
    fixed = rounds * (analyst + fresh + FULL_PER_ROUND * fresh)
    n = (budget // max(trials, 1) - fixed) // (1 + rounds * FULL_PER_ROUND)
    return max(min(floor, total), min(total, n))


def size(benchmark: Any, selection: Any, config: Any) -> int:
    """How many validation tasks decisions rest on (see the module docstring)."""
    total = len(benchmark.split("validation"))
    setting = selection.acceptance.validation_tasks
    if setting == "all":
        return total
    if setting != "budget":
        return min(setting, total)
    analyst = min(config.evolve_batch, len(benchmark.split("evolve")))
    return budget_size(total, budget=selection.budgets.oracle_rollouts, rounds=config.rounds, analyst=analyst,
                       fresh=fresh_count(benchmark, selection, analyst),
                       trials=selection.allocator.trials_per_task, floor=selection.guards.min_validation_tasks)


def tasks(benchmark: Any, selection: Any, config: Any) -> list[Task]:
    """The validation tasks decisions rest on, in split order: the whole split, or the run's sample."""
    split = benchmark.split("validation")
    n = size(benchmark, selection, config)
    if n >= len(split):
        return split
    strata = {task.id: task.target for task in split} if benchmark.labels else None
    order = bandit.stratified_order([task.id for task in split], strata,
                                    random.Random(f"{config.seed}:validation-sample"))
    chosen = set(order[:n])
    return [task for task in split if task.id in chosen]
