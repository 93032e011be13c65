"""Typed budgets and a ledger that never overspends, plus a pre-flight estimate for `--dry-run`.

Four kinds: `oracle_rollouts` (verifier-scored policy rollouts), `surrogate_calls` (rubric
generation, judging, revision), `proposer_tokens` and `wall_clock_s`. `Budget.spend` raises
`BudgetExhausted` instead of going over a limit, so callers check `can_afford` (or shrink the
request to `remaining`) first. The ledger's `spent` map is plain data: store it with the run and
pass it back to `Budget(limits, spent=...)` when resuming.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from evolve.errors import BudgetExhausted, ConfigError
from evolve.selection.config import ALLOCATORS, AllocatorConfig, BudgetLimits

BudgetKind = Literal["oracle_rollouts", "surrogate_calls", "proposer_tokens", "wall_clock_s"]
KINDS: tuple[str, ...] = ("oracle_rollouts", "surrogate_calls", "proposer_tokens", "wall_clock_s")


class Budget:
    """A ledger of spending against `BudgetLimits` (None limits are unlimited)."""

    def __init__(self, limits: BudgetLimits | None = None, *, spent: dict[str, float] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits or BudgetLimits()
        self.spent: dict[str, float] = {k: 0.0 for k in KINDS if k != "wall_clock_s"}
        for key, value in (spent or {}).items():
            self.spent[_check_kind(key)] = float(value)
        self._clock = clock
        self._elapsed_before = float((spent or {}).get("wall_clock_s", 0.0))
        self._start = clock()

    def _limit(self, kind: str) -> float | None:
        value = getattr(self.limits, _check_kind(kind))
        return None if value is None else float(value)

    def used(self, kind: str) -> float:
        """Amount of `kind` spent so far (wall clock: seconds elapsed, including before a resume)."""
        if _check_kind(kind) == "wall_clock_s":
            return self._elapsed_before + (self._clock() - self._start)
        return self.spent[kind]

    def remaining(self, kind: str) -> float:
        """What is left of `kind` (math.inf when unlimited; never negative)."""
        limit = self._limit(kind)
        return math.inf if limit is None else max(0.0, limit - self.used(kind))

    def can_afford(self, kind: str, amount: float = 0.0) -> bool:
        """True when spending `amount` of `kind` stays within the limit (wall clock: time left > amount)."""
        if amount < 0:
            raise ValueError("amount must be >= 0")
        if _check_kind(kind) == "wall_clock_s":
            limit = self._limit(kind)
            return limit is None or self.used(kind) + amount < limit
        return amount <= self.remaining(kind) + 1e-9

    def spend(self, kind: str, amount: float) -> None:
        """Record spending; raises BudgetExhausted (and records nothing) when it would overspend."""
        if _check_kind(kind) == "wall_clock_s":
            raise ValueError("wall clock is measured, not spent")
        if not self.can_afford(kind, amount):
            raise BudgetExhausted(
                f"budget '{kind}' exhausted: {self.used(kind):g} of {self._limit(kind):g} used, "
                f"{amount:g} more requested (raise budgets.{kind})"
            )
        self.spent[kind] += amount

    def charge_usage(self, kind: str, amount: float) -> None:
        """Record measured usage (tokens, calls) after the fact; it may go past the limit, after which
        `remaining(kind)` is 0 and spenders of that kind stop."""
        if _check_kind(kind) == "wall_clock_s":
            raise ValueError("wall clock is measured, not spent")
        if amount < 0:
            raise ValueError("amount must be >= 0")
        self.spent[kind] += amount

    def exhausted(self) -> list[str]:
        """Kinds with nothing left (wall clock: time is up)."""
        return [k for k in KINDS if not self.can_afford(k, 0.0) or (k != "wall_clock_s" and self.remaining(k) <= 0)]

    def snapshot(self) -> dict[str, float]:
        """Spending so far, for storage and for resuming (`Budget(limits, spent=snapshot)`)."""
        return {**self.spent, "wall_clock_s": round(self.used("wall_clock_s"), 3)}


def _check_kind(kind: str) -> str:
    if kind not in KINDS:
        raise ConfigError(f"unknown budget {kind!r}; valid: {', '.join(KINDS)}")
    return kind


def allocation_cost(cfg: AllocatorConfig, n_candidates: int, n_tasks: int) -> int:
    """Most oracle rollouts one allocation can spend on candidates (no early stop; incumbent excluded).

    Uniform: every candidate on every task. Successive halving: the rungs' new tasks. UCB and
    Thompson stop on confidence, so their bound is that of uniform evaluation.
    """
    if cfg.name not in ALLOCATORS:
        raise ConfigError(f"unknown allocator {cfg.name!r}; valid: {', '.join(ALLOCATORS)}")
    if n_candidates <= 0 or n_tasks <= 0:
        return 0
    full = n_candidates * n_tasks * cfg.trials_per_task
    if cfg.name != "successive_halving":
        return full
    total, alive, seen = 0, n_candidates, 0
    rung_tasks = min(cfg.minibatch, n_tasks)
    while True:
        total += alive * (rung_tasks - seen)
        seen = rung_tasks
        if seen >= n_tasks or alive <= cfg.survivors:
            break
        alive = max(cfg.survivors, math.ceil(alive / cfg.eta))
        rung_tasks = min(n_tasks, rung_tasks * cfg.eta)
    total += alive * (n_tasks - seen)  # survivors get the full evaluation
    return min(full, total * cfg.trials_per_task)


@dataclass(frozen=True)
class BudgetEstimate:
    """What a budget buys, for `--dry-run`."""

    rounds: int
    """Rounds the budget affords (at most the requested rounds)."""
    candidates_per_round: int
    """Drafts sent to the oracle per round (surrogate top_k, at most the drafts)."""
    rollouts_per_candidate: float
    """Oracle rollouts per candidate at most (allocation plus full evaluation of survivors)."""
    rollouts_per_round: int
    """Oracle rollouts per round at most: analyst batch, candidates, incumbent re-evaluation."""
    limiting: str
    """The budget that binds first (or `rounds` when all budgets outlast the requested rounds)."""
    per_round: dict[str, float]
    """Spending per round at most, by budget kind."""

    def lines(self) -> list[str]:
        """Human-readable summary, one fact per line."""
        spend = ", ".join(f"{k} {v:g}" for k, v in self.per_round.items())
        return [
            f"rounds affordable: {self.rounds} (limited by {self.limiting})",
            f"candidates per round: {self.candidates_per_round}",
            f"oracle rollouts per candidate: <= {self.rollouts_per_candidate:g}",
            f"oracle rollouts per round: <= {self.rollouts_per_round}",
            f"per round at most: {spend}",
        ]


def estimate(limits: BudgetLimits, allocator: AllocatorConfig, *, rounds: int, drafts_per_round: int, top_k: int,
             n_validation: int, analyst_batch: int, proposer_tokens_per_draft: int = 1500,
             surrogate_calls_per_round: int | None = None) -> BudgetEstimate:
    """Pre-flight estimate of what `limits` buys (worst case: no early stopping)."""
    k = max(0, min(top_k, drafts_per_round))
    trials = allocator.trials_per_task
    candidate_rollouts = allocation_cost(allocator, k, n_validation)
    per_round_rollouts = analyst_batch * trials + candidate_rollouts + n_validation * trials
    surrogate = drafts_per_round + 3 if surrogate_calls_per_round is None else surrogate_calls_per_round
    per_round = {
        "oracle_rollouts": float(per_round_rollouts),
        "surrogate_calls": float(surrogate),
        "proposer_tokens": float(drafts_per_round * proposer_tokens_per_draft),
    }
    affordable, limiting = rounds, "rounds"
    for kind, need in per_round.items():
        limit = getattr(limits, kind)
        if limit is None or need <= 0:
            continue
        can = int(limit // need)
        if can < affordable:
            affordable, limiting = can, kind
    return BudgetEstimate(
        rounds=max(0, affordable),
        candidates_per_round=k,
        rollouts_per_candidate=candidate_rollouts / k if k else 0.0,
        rollouts_per_round=per_round_rollouts,
        limiting=limiting,
        per_round=per_round,
    )
