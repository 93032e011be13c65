"""The oracle: verified rollouts of a harness on benchmark tasks, stored and reused.

Rollouts are keyed by (run, harness version, benchmark, split, task, trial): a harness evaluated
twice on the same task reuses the stored rollout, so a resumed run repeats no oracle work and
paired comparisons with the incumbent cost nothing extra for the incumbent's side.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evolve.bench.runtime import evaluate as run_evaluate
from evolve.bench.stats import score_ci, task_rewards
from evolve.errors import BudgetExhausted
from evolve.harness import Harness
from evolve.selection.budget import Budget
from evolve.store import LineageStore, RolloutRecord


@dataclass
class Oracle:
    """Evaluates harnesses on tasks through the policy backend, storing every rollout."""

    store: LineageStore
    run_id: str
    backend: Any
    trials: int = 1
    seed: int = 0
    ledger: Budget | None = None
    """The run's budget ledger: rollouts run with `charge=True` are spent from its `oracle_rollouts`
    (None: unlimited). Reporting calls pass charge=False."""
    spent: int = 0
    _memo: dict[tuple, RolloutRecord] = field(default_factory=dict)
    _loaded: set[tuple[str, str, str]] = field(default_factory=set)
    _last_beat: float = 0.0

    def _load(self, version: str, benchmark: str, split: str) -> None:
        if (version, benchmark, split) in self._loaded:
            return
        for r in self.store.rollouts(self.run_id, harness_hash=version, split=split, benchmark=benchmark):
            self._memo[r.key] = r
        self._loaded.add((version, benchmark, split))

    def _heartbeat(self) -> None:
        """Mark the run alive (at most every 10 s) so readers can tell a running run from a killed one."""
        now = time.monotonic()
        if now - self._last_beat >= 10.0:
            self.store.heartbeat(self.run_id)
            self._last_beat = now

    def missing(self, harness: Harness, benchmark: Any, split: str, tasks: Sequence[Any]) -> int:
        """Rollouts an evaluation of `harness` on `tasks` would still have to run (tasks × trials)."""
        version = harness.version
        self._load(version, benchmark.name, split)
        return sum(1 for t in tasks for k in range(self.trials)
                   if (self.run_id, version, benchmark.name, split, t.id, k) not in self._memo)

    async def evaluate(self, harness: Harness, benchmark: Any, split: str, tasks: Sequence[Any], *,
                       candidate_id: str | None = None, charge: bool = True) -> list[RolloutRecord]:
        """Rollouts of `harness` on `tasks` (tasks × trials, in order), running only the missing ones."""
        version = harness.version
        self._load(version, benchmark.name, split)
        todo = [t for t in tasks if any(
            (self.run_id, version, benchmark.name, split, t.id, k) not in self._memo for k in range(self.trials))]
        if todo:
            cost = len(todo) * self.trials
            left = self.budget_left
            if charge and left is not None and cost > left:
                raise BudgetExhausted(f"oracle budget: {cost} rollouts needed, {left} left")
            results = await run_evaluate(harness, todo, self.backend, benchmark.verifier,
                                         trials=self.trials, seed=self.seed)
            records = [r.to_record(run_id=self.run_id, harness_hash=version, benchmark=benchmark.name,
                                   split=split, candidate_id=candidate_id) for r in results]
            records = [r for r in records if r.key not in self._memo]
            self.store.add_rollouts(records)
            self._heartbeat()
            for r in records:
                self._memo[r.key] = r
            if charge:
                self.spent += len(records)
                if self.ledger is not None and len(records):
                    self.ledger.spend("oracle_rollouts", len(records))
        return [self._memo[(self.run_id, version, benchmark.name, split, t.id, k)]
                for t in tasks for k in range(self.trials)]


    @property
    def budget_left(self) -> int | None:
        """Oracle rollouts the evolution may still spend (None: unlimited)."""
        if self.ledger is None:
            return None
        left = self.ledger.remaining("oracle_rollouts")
        return None if left == math.inf else int(left)


def rewards_by_task(records: Sequence[RolloutRecord]) -> dict[str, list[float]]:
    """Rewards per task id, one per trial (a failed rollout counts 0)."""
    return task_rewards(records)


def summarize(records: Sequence[RolloutRecord]) -> dict[str, Any]:
    """Score with 95% CI, parse and crash rates and policy tokens per task of a set of rollouts."""
    if not records:
        return {"score": None, "ci_low": None, "ci_high": None, "n": 0, "policy_tokens": None}
    score, low, high, n = score_ci(records)
    tokens = sum(r.tokens_in + r.tokens_out for r in records) / n
    return {
        "score": score, "ci_low": low, "ci_high": high, "n": n, "policy_tokens": tokens,
        "parse_rate": sum(r.parsed for r in records) / len(records),
        "crash_rate": sum(r.error is not None for r in records) / len(records),
    }
