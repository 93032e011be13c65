"""The oracle: verified rollouts of a harness on benchmark tasks, stored and reused.

Rollouts are keyed by (run, harness version, benchmark, split, task, trial): a harness evaluated
twice on the same task reuses the stored rollout, so a resumed run repeats no oracle work and
paired comparisons with the incumbent cost nothing extra for the incumbent's side.

The rollouts themselves run on an `Executor` (evolve.executors): in this process by default, or on
Ray workers. Results come back in any order and are keyed, so the executor never changes what is
stored; the oracle, in the coordinating process, is the only writer of the store. Results are
written as they arrive (at most every `flush_s` seconds).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evolve.bench.stats import score_ci, task_rewards
from evolve.errors import BudgetExhausted
from evolve.executors import Executor, LocalExecutor, RolloutBatch
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
    executor: Executor | None = None
    """Where rollouts run (None: in this process, on `backend`)."""
    flush_s: float = 1.0
    """Seconds between writes of the results that arrived while a batch is still running."""
    _memo: dict[tuple, RolloutRecord] = field(default_factory=dict)
    _loaded: set[tuple[str, str, str]] = field(default_factory=set)
    _last_beat: float = 0.0

    def _load(self, version: str, benchmark: str, split: str) -> None:
        if (version, benchmark, split) in self._loaded:
            return
        # the analyst digests evolve-split trajectories (verifier detail, decisive steps): a resumed run
        # must see them as the uninterrupted run did
        for r in self.store.rollouts(self.run_id, harness_hash=version, split=split, benchmark=benchmark,
                                     with_trajectory=split == "evolve"):
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
            batch = RolloutBatch(harness, tuple(todo), benchmark.verifier, trials=self.trials, seed=self.seed)
            new = await self._run(batch, benchmark.name, split, candidate_id)
            if charge:
                self.spent += new
                if self.ledger is not None and new:
                    self.ledger.spend("oracle_rollouts", new)
        return [self._memo[(self.run_id, version, benchmark.name, split, t.id, k)]
                for t in tasks for k in range(self.trials)]

    def _executor(self) -> Executor:
        if self.executor is None:
            self.executor = LocalExecutor(self.backend)
        return self.executor

    async def _run(self, batch: RolloutBatch, benchmark: str, split: str, candidate_id: str | None) -> int:
        """Run `batch` on the executor, writing new results as they arrive (in batch order within a
        write); return how many were new."""
        order = {key: i for i, key in enumerate(batch.keys())}
        pending: list[RolloutRecord] = []
        new, last = 0, time.monotonic()
        async for result in self._executor().run(batch):
            record = result.to_record(run_id=self.run_id, harness_hash=batch.harness.version, benchmark=benchmark,
                                      split=split, candidate_id=candidate_id)
            if record.key in self._memo:
                continue
            self._memo[record.key] = record
            pending.append(record)
            new += 1
            if time.monotonic() - last >= self.flush_s:
                self._store(pending, order)
                pending, last = [], time.monotonic()
        self._store(pending, order)
        return new

    def _store(self, records: list[RolloutRecord], order: dict[tuple[str, int], int]) -> None:
        if records:
            self.store.add_rollouts(sorted(records, key=lambda r: order[(r.task_id, r.trial)]))
            self._heartbeat()


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
