"""Bandit allocation of oracle rollouts: spend rollouts where they decide something.

Every candidate is compared with the incumbent on the same tasks, in paired minibatches taken in
one shuffled task order (so after n tasks every candidate has seen the same first n tasks).
Bounds are normal bounds on the mean paired difference over the tasks seen (variance shrunk
toward 0.25, finite-population correction: after all N tasks the difference is exact), at the
one-sided `confidence`. A candidate is dropped when its upper bound against the incumbent is
below 0 ("cannot beat the incumbent"), or when its paired upper bound against the current leader
(on the tasks both saw) is below 0.

Allocators (`AllocatorConfig.name`):
- `ucb` (default): LUCB best-arm identification. Each step extends whichever of the leader and
  the strongest challenger (highest paired upper bound against the leader) has seen fewer
  tasks, until at most `survivors` candidates remain.
- `successive_halving`: all candidates on rungs of minibatch, minibatch·eta, ... tasks; after each
  rung the best 1/eta are kept, and so is any candidate whose paired bound cannot yet rule out
  beating the leader (plain halving drops the true best too often on close pools).
- `thompson`: top-two Thompson sampling with Beta posteriors on paired outcomes against the
  incumbent (discordance rate and win share), until the `survivors` likeliest best hold a
  posterior probability of being best >= confidence.
- `uniform`: every candidate on every task (no early stopping).
The ledger is charged before each evaluation call and never overspent: when it runs out the
allocation stops with what it has. Survivors (best first) should get full evaluation.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

from evolve.errors import ConfigError
from evolve.selection.acceptance import Decision, numpy_rng
from evolve.selection.budget import Budget
from evolve.selection.config import ALLOCATORS, AllocatorConfig, SelectionConfig

Evaluate = Callable[[str, list[str]], Awaitable[dict[str, float]]]
PRIOR_VAR, PRIOR_N = 0.25, 1.0
"""Prior on the variance of a paired difference (shrinks early estimates toward wide bounds)."""


@dataclass(frozen=True)
class AllocationResult:
    """What an allocation saw and decided."""

    rewards: dict[str, dict[str, float]]
    """Rewards per task for every candidate and the incumbent (trials averaged)."""
    rollouts: int
    """Oracle rollouts spent by this allocation (tasks × trials, incumbent included)."""
    per_candidate: dict[str, int]
    """Rollouts spent per candidate id (incumbent included)."""
    stopped_early: bool
    """True when the allocation ended before every candidate saw every task."""
    reason: str
    """Why the allocation ended (one line)."""
    dropped: dict[str, str]
    """Candidates eliminated, with the reason (one line each)."""
    survivors: list[str]
    """Candidates that should get full evaluation, best first."""
    estimates: dict[str, dict[str, float]] = field(default_factory=dict)
    """Per candidate: tasks seen `n`, paired mean difference `mean`, bounds `low`/`high`."""

    def dropped_decisions(self) -> list[Decision]:
        """A rejection Decision for every candidate the allocation eliminated (store them with the round)."""
        return [Decision(candidate_id=cid, accepted=False, admissible=False, reason=f"stopped early: {why}",
                         stats={"rule": "allocation", **self.estimates.get(cid, {}),
                                "rollouts": self.per_candidate.get(cid, 0)})
                for cid, why in self.dropped.items()]

    def to_dict(self) -> dict[str, Any]:
        """Plain data for storage (rewards left out: they are stored as rollouts)."""
        return {"rollouts": self.rollouts, "per_candidate": self.per_candidate, "stopped_early": self.stopped_early,
                "reason": self.reason, "dropped": self.dropped, "survivors": self.survivors,
                "estimates": self.estimates}


class _Session:
    """Shared state of one allocation: task order, rewards seen, budget charging."""

    def __init__(self, cfg: AllocatorConfig, candidates: list[str], incumbent: str, task_ids: list[str],
                 evaluate: Evaluate, budget: Budget, rng: random.Random,
                 known: dict[str, dict[str, float]] | None) -> None:
        self.cfg, self.candidates, self.incumbent, self.evaluate, self.budget = cfg, candidates, incumbent, \
            evaluate, budget
        self.rewards: dict[str, dict[str, float]] = {c: dict((known or {}).get(c, {}))
                                                     for c in [incumbent, *candidates]}
        self.order = list(task_ids)
        rng.shuffle(self.order)
        self.N = len(self.order)
        self.spent: dict[str, int] = {c: 0 for c in [incumbent, *candidates]}
        self.seen: dict[str, int] = {c: 0 for c in candidates}
        self.out_of_budget = ""

    def _missing(self, cid: str, upto: int) -> list[str]:
        have = self.rewards[cid]
        return [t for t in self.order[:upto] if t not in have]

    def _reserve(self, cid: str, tasks: list[str]) -> list[str]:
        """Charge the ledger for as many of `tasks` as it affords; return those tasks."""
        trials = self.cfg.trials_per_task
        if not self.budget.can_afford("wall_clock_s"):
            self.out_of_budget = "wall-clock budget exhausted"
            return []
        room = self.budget.remaining("oracle_rollouts")
        n = len(tasks) if room == math.inf else min(len(tasks), int(room // trials))
        if n < len(tasks):
            self.out_of_budget = "oracle_rollouts budget exhausted"
        if n:
            self.budget.spend("oracle_rollouts", n * trials)
            self.spent[cid] += n * trials
        return tasks[:n]

    async def extend(self, targets: dict[str, int]) -> None:
        """Bring each candidate (and the incumbent) to its target number of tasks in the shared order."""
        upto = max(targets.values(), default=0)
        calls: list[tuple[str, list[str]]] = []
        inc_tasks = self._reserve(self.incumbent, self._missing(self.incumbent, upto))
        if inc_tasks:
            calls.append((self.incumbent, inc_tasks))
        for cid, target in targets.items():
            tasks = self._reserve(cid, self._missing(cid, target))
            if tasks:
                calls.append((cid, tasks))
        results = await asyncio.gather(*(self.evaluate(cid, tasks) for cid, tasks in calls))
        for (cid, tasks), got in zip(calls, results, strict=True):
            for task in tasks:
                value = got.get(task)
                self.rewards[cid][task] = 0.0 if value is None or math.isnan(value) else float(value)
        for cid in targets:
            self.seen[cid] = self._prefix(cid)

    def _prefix(self, cid: str) -> int:
        n = 0
        inc, have = self.rewards[self.incumbent], self.rewards[cid]
        while n < self.N and self.order[n] in have and self.order[n] in inc:
            n += 1
        return n

    def diffs(self, cid: str) -> np.ndarray:
        tasks = self.order[:self.seen[cid]]
        inc, have = self.rewards[self.incumbent], self.rewards[cid]
        return np.array([have[t] - inc[t] for t in tasks], dtype=float)

    def bounds(self, cid: str, z: float) -> tuple[float, float, float]:
        """(mean, low, high) of the paired difference with the incumbent over all N tasks."""
        return self._bound(self.diffs(cid), z)

    def pair_bounds(self, a: str, b: str, z: float) -> tuple[float, float, float]:
        """(mean, low, high) of r_a − r_b over all N tasks, paired on the tasks both have seen."""
        n = min(self.seen[a], self.seen[b])
        tasks = self.order[:n]
        d = np.array([self.rewards[a][t] - self.rewards[b][t] for t in tasks], dtype=float)
        return self._bound(d, z)

    def _bound(self, d: np.ndarray, z: float) -> tuple[float, float, float]:
        if len(d) == 0:
            return 0.0, -1.0, 1.0
        return _plain_bound(d, self.N, z)

    def done(self, cid: str) -> bool:
        return self.seen[cid] >= self.N

    def next_target(self, cid: str) -> int:
        return min(self.N, self.seen[cid] + self.cfg.minibatch)


def _plain_bound(d: np.ndarray, total: int, z: float) -> tuple[float, float, float]:
    """Normal bound on the mean of `d` over `total` tasks (shrunk variance, finite-population correction)."""
    n = len(d)
    mean = float(d.mean())
    var = (float(((d - mean) ** 2).sum()) + PRIOR_N * PRIOR_VAR) / (n - 1 + PRIOR_N)
    fpc = max(0.0, (total - n) / max(total - 1, 1))
    half = z * math.sqrt(var / n * fpc)
    return mean, max(-1.0, mean - half), min(1.0, mean + half)


def _z(confidence: float) -> float:
    """One-sided z of `confidence`."""
    return NormalDist().inv_cdf(confidence)


def _eliminate(s: _Session, alive: list[str], z: float, dropped: dict[str, str]) -> list[str]:
    """Drop candidates that cannot beat the incumbent, or are confidently worse than the leader (paired)."""
    stats = {c: s.bounds(c, z) for c in alive}
    leader = max(alive, key=lambda c: stats[c][0], default=None)
    keep = []
    for cid in alive:
        mean, _, high = stats[cid]
        vs_leader = s.pair_bounds(cid, leader, z) if leader is not None and cid != leader else None
        if high < 0:
            dropped[cid] = (f"cannot beat the incumbent: upper bound {high:+.3f} < 0 "
                            f"(mean {mean:+.3f} after {s.seen[cid]} tasks)")
        elif vs_leader is not None and vs_leader[2] < 0:
            dropped[cid] = (f"worse than {leader}: paired upper bound {vs_leader[2]:+.3f} < 0 "
                            f"after {s.seen[cid]} tasks")
        else:
            keep.append(cid)
    return keep


async def _successive_halving(s: _Session, dropped: dict[str, str], z: float) -> tuple[list[str], str]:
    cfg, alive = s.cfg, list(s.candidates)
    target = min(cfg.minibatch, s.N)
    while True:
        await s.extend({c: target for c in alive})
        alive = _eliminate(s, alive, z, dropped)
        if s.out_of_budget or not alive:
            return alive, s.out_of_budget or "no candidate can beat the incumbent"
        if target >= s.N:
            return alive, "every remaining candidate saw every task"
        if len(alive) <= cfg.survivors:
            return alive, f"{len(alive)} candidate(s) left"
        keep = max(cfg.survivors, math.ceil(len(alive) / cfg.eta))
        ranked = sorted(alive, key=lambda c: -s.bounds(c, z)[0])
        kept = ranked[:keep]
        for rank, cid in enumerate(ranked[keep:], start=keep + 1):
            if s.pair_bounds(cid, ranked[0], z)[2] >= 0:  # not clearly behind: halving may not drop it
                kept.append(cid)
            else:
                dropped[cid] = f"halved out after {s.seen[cid]} tasks: rank {rank} of {len(ranked)}"
        alive = kept
        target = min(s.N, target * cfg.eta)


async def _ucb(s: _Session, dropped: dict[str, str], z: float) -> tuple[list[str], str]:
    """LUCB until at most `survivors` candidates are left that are not confidently worse than the leader."""
    cfg, alive = s.cfg, list(s.candidates)
    await s.extend({c: s.next_target(c) for c in alive})
    while True:
        alive = _eliminate(s, alive, z, dropped)
        if s.out_of_budget or not alive:
            return alive, s.out_of_budget or "no candidate can beat the incumbent"
        if len(alive) <= cfg.survivors:
            return alive, f"{len(alive)} candidate(s) left at confidence {cfg.confidence:g}"
        stats = {c: s.bounds(c, z) for c in alive}
        ranked = sorted(alive, key=lambda c: -stats[c][0])
        leader, rest = ranked[0], ranked[cfg.survivors:]
        challenger = max(rest, key=lambda c: s.pair_bounds(c, leader, z)[2])
        # paired bounds use the tasks both have seen: only the one behind needs more tasks
        behind = [c for c in (leader, challenger) if s.seen[c] <= min(s.seen[leader], s.seen[challenger])]
        pending = {c: s.next_target(c) for c in behind if not s.done(c)}
        if not pending:
            pending = {c: s.next_target(c) for c in alive if not s.done(c)}
        if not pending:
            return alive, "every remaining candidate saw every task"
        await s.extend(pending)


def _posterior_samples(s: _Session, cid: str, gen: np.random.Generator, m: int) -> np.ndarray:
    """Samples of the full-set mean paired difference: seen part exact, unseen part from Beta posteriors."""
    d = s.diffs(cid)
    n = len(d)
    if n >= s.N:
        return np.full(m, float(d.mean()))
    wins, losses = float(np.clip(d, 0, None).sum()), float(np.clip(-d, 0, None).sum())
    ties = n - wins - losses
    disc = gen.beta(1 + wins + losses, 1 + ties, size=m)
    q = gen.beta(1 + wins, 1 + losses, size=m)
    unseen = disc * (2 * q - 1)
    return (float(d.sum()) + (s.N - n) * unseen) / s.N


def _top_two(alive: list[str], mat: np.ndarray, leader: str, gen: np.random.Generator, rng: random.Random) -> str:
    """Top-two Thompson sampling: the leader, or (half the time) the winner of a fresh draw that differs."""
    if rng.random() < 0.5:
        return leader
    for _ in range(20):
        cand = alive[int(mat[:, int(gen.integers(0, mat.shape[1]))].argmax())]
        if cand != leader:
            return cand
    return leader


async def _thompson(s: _Session, dropped: dict[str, str], gen: np.random.Generator, rng: random.Random,
                    m: int = 1024) -> tuple[list[str], str]:
    """Top-two Thompson sampling until the `survivors` likeliest best hold P(best) >= confidence."""
    cfg, alive = s.cfg, list(s.candidates)
    tail = (1 - cfg.confidence) / len(s.candidates)
    await s.extend({c: s.next_target(c) for c in alive})
    while True:
        samples = {c: _posterior_samples(s, c, gen, m) for c in alive}
        mat = np.stack([samples[c] for c in alive])
        p_best = np.bincount(mat.argmax(axis=0), minlength=len(alive)) / m
        leader = alive[int(p_best.argmax())]
        for i, cid in enumerate(list(alive)):
            p_gain = float((samples[cid] > 0).mean())
            if p_gain < tail:
                dropped[cid] = f"cannot beat the incumbent: P(gain)={p_gain:.3f} after {s.seen[cid]} tasks"
            elif cid != leader and p_best[i] < tail:
                dropped[cid] = f"unlikely to be best: P(best)={p_best[i]:.3f} after {s.seen[cid]} tasks"
        alive = [c for c in alive if c not in dropped]
        if s.out_of_budget or not alive:
            return alive, s.out_of_budget or "no candidate can beat the incumbent"
        keep = {c: float(p_best[i]) for i, c in enumerate(samples) if c in alive}
        top = sorted(keep, key=lambda c: -keep[c])[:cfg.survivors]
        if len(alive) <= cfg.survivors or sum(keep[c] for c in top) >= cfg.confidence:
            for cid in [c for c in alive if c not in top]:
                dropped[cid] = f"unlikely to be best: P(best)={keep[cid]:.3f} after {s.seen[cid]} tasks"
            return top, f"P(best among {len(top)})={sum(keep[c] for c in top):.3f}"
        open_arms = [c for c in alive if not s.done(c)]
        if not open_arms:
            return alive, "every remaining candidate saw every task"
        rows = [list(samples).index(c) for c in alive]
        pick = _top_two(alive, mat[rows], leader if leader in alive else top[0], gen, rng)
        if s.done(pick):
            pick = max(open_arms, key=lambda c: keep[c])
        await s.extend({pick: s.next_target(pick)})


async def _uniform(s: _Session, dropped: dict[str, str]) -> tuple[list[str], str]:
    alive = list(s.candidates)
    while not all(s.done(c) for c in alive):
        await s.extend({c: s.next_target(c) for c in alive})
        if s.out_of_budget:
            return alive, s.out_of_budget
    return alive, "every candidate saw every task"


def _finish(s: _Session, alive: list[str], reason: str, dropped: dict[str, str], z: float,
            cap: int | None) -> AllocationResult:
    ranked = sorted(alive, key=lambda c: -s.bounds(c, z)[0])
    if cap is not None:
        for cid in ranked[cap:]:
            dropped[cid] = f"not among the {cap} best after {s.seen[cid]} tasks"
        ranked = ranked[:cap]
    estimates = {}
    for cid in s.candidates:
        mean, low, high = s.bounds(cid, z)
        estimates[cid] = {"n": float(s.seen[cid]), "mean": mean, "low": low, "high": high}
    early = any(s.seen[c] < s.N for c in s.candidates)
    return AllocationResult(rewards=s.rewards, rollouts=sum(s.spent.values()), per_candidate=dict(s.spent),
                            stopped_early=early, reason=reason, dropped=dict(dropped), survivors=ranked,
                            estimates=estimates)


async def allocate(cfg: SelectionConfig | AllocatorConfig, candidates: list[str], incumbent: str,
                   task_ids: Sequence[str], evaluate: Evaluate, budget: Budget,
                   rng: random.Random | None = None, *,
                   known: dict[str, dict[str, float]] | None = None) -> AllocationResult:
    """Spread oracle rollouts over `candidates` (paired with `incumbent` on the same tasks).

    `evaluate(candidate_id, task_ids)` returns the reward per task id (trials averaged; a missing
    task counts 0). `known` holds rewards already measured (e.g. the incumbent's cached
    validation results): they are reused and not charged. The ledger is charged
    `len(tasks) × trials_per_task` before every call.
    """
    acfg = cfg.allocator if isinstance(cfg, SelectionConfig) else cfg
    if acfg.name not in ALLOCATORS:
        raise ConfigError(f"unknown allocator {acfg.name!r}; valid: {', '.join(ALLOCATORS)}")
    rng = rng or random.Random(0)
    s = _Session(acfg, list(dict.fromkeys(candidates)), incumbent, list(task_ids), evaluate, budget, rng, known)
    dropped: dict[str, str] = {}
    if not s.candidates or not s.N:
        return _finish(s, s.candidates, "nothing to evaluate", dropped, 0.0, None)
    z = _z(acfg.confidence)
    if acfg.name == "successive_halving":
        alive, reason = await _successive_halving(s, dropped, z)
    elif acfg.name == "ucb":
        alive, reason = await _ucb(s, dropped, z)
    elif acfg.name == "thompson":
        alive, reason = await _thompson(s, dropped, numpy_rng(rng), rng)
    else:
        alive, reason = await _uniform(s, dropped)
    cap = None if acfg.name == "uniform" else acfg.survivors
    return _finish(s, alive, reason, dropped, z, cap)
