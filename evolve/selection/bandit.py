"""Bandit allocation of oracle rollouts: spend rollouts where they decide something.

Every candidate is compared with the incumbent on the same tasks, in paired minibatches taken in
one shuffled task order (so after n tasks every candidate has seen the same first n tasks). Given
`strata` (the gold label of each task), the order is stratified: every prefix holds the labels in
about their shares of the split, so early verdicts (a label collapse after a few tasks, a paired
difference) do not rest on a prefix that happens to hold mostly one label.
Bounds are normal bounds on the mean paired difference over the tasks seen (variance shrunk
toward 0.25, finite-population correction: after all N tasks the difference is exact), at the
one-sided `confidence`.

Two kinds of early stop, and the difference matters:
- **final** stops rest on the candidate alone: the `screen` callback (acceptance-aware: a guard
  such as label collapse is already certain at the confidence, or the candidate can no longer be
  admissible) or, without a screen, "cannot beat the incumbent" (upper bound below 0). A final
  stop spends only what was needed to see it.
- **relative** stops compare with other candidates ("worse than X", halved out, unlikely best).
  A candidate is never lost because it was worse than one that acceptance later rejects: UCB only
  drops candidates confidently worse than a *qualified* leader (fully evaluated and admissible by
  the `qualify` callback); successive halving and Thompson may drop relative to unqualified
  leaders, and when none of the candidates they kept qualifies, the relatively dropped ones are
  taken up again with everything they have seen.

Allocators (`AllocatorConfig.name`):
- `ucb` (default): LUCB best-arm identification. Each step extends the leader (highest mean) and
  the strongest challenger (highest upper bound) among the candidates still open, by a growing
  minibatch, until every candidate is fully evaluated or stopped.
- `successive_halving`: all candidates on rungs of minibatch, minibatch·eta, ... tasks; after each
  rung the best 1/eta are kept, and so is any candidate whose paired bound cannot yet rule out
  beating the leader; `survivors` get the full evaluation.
- `thompson`: top-two Thompson sampling with Beta posteriors on paired outcomes against the
  incumbent (discordance rate and win share), until the `survivors` likeliest best hold a
  posterior probability of being best >= confidence; they get the full evaluation.
- `uniform`: every candidate on every task (no early stopping).
The ledger is never overspent: when it runs out the allocation stops with what it has, and the
candidates left open are reported as cut by the budget (with their partial statistics). The
result ranks the fully evaluated candidates (best mean first) for acceptance.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np

from evolve.errors import ConfigError
from evolve.selection.acceptance import Decision, numpy_rng
from evolve.selection.budget import Budget
from evolve.selection.config import ALLOCATORS, AllocatorConfig, SelectionConfig
from evolve.selection.guards import normalize_label

Evaluate = Callable[[str, list[str]], Awaitable[dict[str, float]]]
"""`evaluate(candidate_id, task_ids)`: reward per task id (trials averaged; a missing task counts 0)."""
Screen = Callable[[str, list[str]], Awaitable[str | None]]
"""`screen(candidate_id, tasks_seen)`: why the candidate can be stopped for good on what it has seen, or None."""
Qualify = Callable[[str], Awaitable[float | None]]
"""`qualify(candidate_id)` for a fully evaluated candidate: its objective when admissible, else None."""
PRIOR_VAR, PRIOR_N = 0.25, 1.0
"""Prior on the variance of a paired difference (shrinks early estimates toward wide bounds)."""


def stratified_order(task_ids: Sequence[str], strata: Mapping[str, str] | None, rng: random.Random) -> list[str]:
    """A random order of `task_ids`; with `strata`, every prefix holds each stratum in about its share.

    Each stratum is shuffled, its i-th task of n gets the position (i + u)/n with one uniform u per
    stratum, and the tasks are sorted by position (ties broken at random): systematic stratified
    sampling. Labels are grouped as the guards count them (`normalize_label`). Tasks without a
    stratum form one of their own. Without `strata` this is a plain shuffle.
    """
    order = list(task_ids)
    if not strata:
        rng.shuffle(order)
        return order
    groups: dict[str, list[str]] = {}
    for task in order:
        groups.setdefault(normalize_label(str(strata.get(task, ""))), []).append(task)
    keyed: list[tuple[float, float, str]] = []
    for label in sorted(groups):
        members = groups[label]
        rng.shuffle(members)
        u = rng.random()
        keyed += [((i + u) / len(members), rng.random(), task) for i, task in enumerate(members)]
    return [task for _, _, task in sorted(keyed)]


@dataclass(frozen=True)
class AllocationResult:
    """What an allocation saw and decided."""

    rewards: dict[str, dict[str, float]]
    """Rewards per task for every candidate and the incumbent (trials averaged)."""
    rollouts: int
    """Oracle rollouts requested by this allocation (tasks × trials, incumbent included)."""
    per_candidate: dict[str, int]
    """Rollouts requested per candidate id (incumbent included)."""
    stopped_early: bool
    """True when the allocation ended before every candidate saw every task."""
    reason: str
    """Why the allocation ended (one line)."""
    dropped: dict[str, str]
    """Candidates stopped before the full evaluation, with the reason (one line each)."""
    survivors: list[str]
    """Fully evaluated candidates, best mean first: the ranked list acceptance walks."""
    estimates: dict[str, dict[str, float]] = field(default_factory=dict)
    """Per candidate: tasks seen `n`, paired mean difference `mean`, bounds `low`/`high`."""
    final: dict[str, str] = field(default_factory=dict)
    """The part of `dropped` stopped on the candidate's own evidence (screen, cannot beat the incumbent)."""
    budget_cut: list[str] = field(default_factory=list)
    """Candidates left partly evaluated because the budget ran out."""
    qualified: dict[str, float] = field(default_factory=dict)
    """Objective of every fully evaluated candidate the `qualify` callback admitted."""
    reopened: list[str] = field(default_factory=list)
    """Candidates dropped relative to a leader that did not qualify, then evaluated further."""

    def dropped_decisions(self) -> list[Decision]:
        """A rejection Decision for every candidate the allocation stopped (store them with the round)."""
        return [Decision(candidate_id=cid, accepted=False, admissible=False, reason=f"stopped early: {why}",
                         stats={"rule": "allocation", **self.estimates.get(cid, {}),
                                "rollouts": self.per_candidate.get(cid, 0)})
                for cid, why in self.dropped.items()]

    def to_dict(self) -> dict[str, Any]:
        """Plain data for storage (rewards left out: they are stored as rollouts)."""
        return {"rollouts": self.rollouts, "per_candidate": self.per_candidate, "stopped_early": self.stopped_early,
                "reason": self.reason, "dropped": self.dropped, "survivors": self.survivors,
                "final": self.final, "budget_cut": self.budget_cut, "qualified": self.qualified,
                "reopened": self.reopened, "estimates": self.estimates}


class _Session:
    """Shared state of one allocation: task order, rewards seen, budget, outcomes."""

    def __init__(self, cfg: AllocatorConfig, candidates: list[str], incumbent: str, task_ids: list[str],
                 evaluate: Evaluate, budget: Budget, rng: random.Random,
                 known: dict[str, dict[str, float]] | None, charge: bool,
                 strata: Mapping[str, str] | None = None) -> None:
        self.cfg, self.candidates, self.incumbent, self.evaluate, self.budget = cfg, candidates, incumbent, \
            evaluate, budget
        self.charge = charge
        self.rewards: dict[str, dict[str, float]] = {c: dict((known or {}).get(c, {}))
                                                     for c in [incumbent, *candidates]}
        self.order = stratified_order(task_ids, strata, rng)
        self.N = len(self.order)
        self.spent: dict[str, int] = {c: 0 for c in [incumbent, *candidates]}
        self.seen: dict[str, int] = {c: self._prefix(c) for c in candidates}
        self.out_of_budget = ""
        self.final: dict[str, str] = {}
        self.relative: dict[str, str] = {}
        self.complete: list[str] = []
        self.qualified: dict[str, float] = {}

    def _missing(self, cid: str, upto: int) -> list[str]:
        have = self.rewards[cid]
        return [t for t in self.order[:upto] if t not in have]

    def _reserve(self, cid: str, tasks: list[str], room: list[float]) -> list[str]:
        """As many of `tasks` as the ledger affords (charged when the session charges); `room` is what
        this batch of calls may still use."""
        trials = self.cfg.trials_per_task
        if not self.budget.can_afford("wall_clock_s"):
            self.out_of_budget = "wall-clock budget exhausted"
            return []
        n = len(tasks) if room[0] == math.inf else min(len(tasks), int(room[0] // trials))
        if n < len(tasks):
            self.out_of_budget = "oracle_rollouts budget exhausted"
        if n:
            room[0] -= n * trials
            if self.charge:
                self.budget.spend("oracle_rollouts", n * trials)
            self.spent[cid] += n * trials
        return tasks[:n]

    async def extend(self, targets: dict[str, int]) -> None:
        """Bring each candidate (and the incumbent) to its target number of tasks in the shared order."""
        upto = max(targets.values(), default=0)
        calls: list[tuple[str, list[str]]] = []
        room = [self.budget.remaining("oracle_rollouts")]
        inc_tasks = self._reserve(self.incumbent, self._missing(self.incumbent, upto), room)
        if inc_tasks:
            calls.append((self.incumbent, inc_tasks))
        for cid, target in targets.items():
            tasks = self._reserve(cid, self._missing(cid, target), room)
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
        return paired_bound(d, self.N, z)

    def done(self, cid: str) -> bool:
        return self.seen[cid] >= self.N

    def next_target(self, cid: str) -> int:
        """A minibatch more, growing with what was seen (fewer, larger calls for long evaluations)."""
        return min(self.N, self.seen[cid] + max(self.cfg.minibatch, self.seen[cid] // 2))

    def open(self, pool: Sequence[str]) -> list[str]:
        """Candidates of `pool` neither stopped nor fully evaluated."""
        return [c for c in pool if c not in self.final and c not in self.relative and c not in self.complete]


def paired_bound(d: np.ndarray, total: int, z: float) -> tuple[float, float, float]:
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


async def _stop_final(s: _Session, alive: list[str], z: float, screen: Screen | None) -> list[str]:
    """Stop, for good, the open candidates whose own evidence rules them out."""
    keep = []
    for cid in alive:
        if s.done(cid):
            keep.append(cid)
            continue
        if screen is not None:
            why = await screen(cid, s.order[:s.seen[cid]])
        else:
            mean, _, high = s.bounds(cid, z)
            why = (f"cannot beat the incumbent: upper bound {high:+.3f} < 0 (mean {mean:+.3f} after "
                   f"{s.seen[cid]} tasks)") if high < 0 else None
        if why:
            s.final[cid] = why
        else:
            keep.append(cid)
    return keep


async def _qualify_done(s: _Session, alive: list[str], qualify: Qualify | None, z: float) -> list[str]:
    """Move fully evaluated candidates out of `alive`; record the objective of those that qualify."""
    still = []
    for cid in alive:
        if not s.done(cid):
            still.append(cid)
            continue
        if cid not in s.complete:
            s.complete.append(cid)
            value = await qualify(cid) if qualify is not None else s.bounds(cid, z)[0]
            if value is not None:
                s.qualified[cid] = value
    return still


def _leader(s: _Session) -> str | None:
    """The qualified candidate with the largest objective."""
    return max(s.qualified, key=lambda c: (s.qualified[c], -s.complete.index(c)), default=None)


def _drop_dominated(s: _Session, alive: list[str], z: float) -> list[str]:
    """Drop open candidates confidently worse than the qualified leader (paired on the tasks both saw)."""
    leader = _leader(s)
    if leader is None:
        return alive
    keep = []
    for cid in alive:
        high = s.pair_bounds(cid, leader, z)[2]
        if high < 0:
            s.relative[cid] = (f"worse than {leader} (fully evaluated and admissible): paired upper bound "
                               f"{high:+.3f} < 0 after {s.seen[cid]} tasks")
        else:
            keep.append(cid)
    return keep


async def _ucb(s: _Session, pool: list[str], z: float, screen: Screen | None,
               qualify: Qualify | None) -> str:
    """LUCB until every candidate of `pool` is fully evaluated or stopped."""
    alive = s.open(pool)
    await s.extend({c: s.next_target(c) for c in alive if not s.done(c)})
    while True:
        alive = await _stop_final(s, alive, z, screen)
        alive = await _qualify_done(s, alive, qualify, z)
        alive = _drop_dominated(s, alive, z)
        if not alive:
            return "every candidate fully evaluated or stopped"
        if s.out_of_budget:
            return s.out_of_budget
        stats = {c: s.bounds(c, z) for c in alive}
        leader = max(alive, key=lambda c: stats[c][0])
        rest = [c for c in alive if c != leader]
        pending = {leader: s.next_target(leader)}
        if rest:
            challenger = max(rest, key=lambda c: stats[c][2])
            pending[challenger] = s.next_target(challenger)
        await s.extend(pending)


async def _successive_halving(s: _Session, pool: list[str], z: float, screen: Screen | None) -> list[str]:
    cfg, alive = s.cfg, s.open(pool)
    target = min(s.N, max([cfg.minibatch, *(s.seen[c] for c in alive)]))
    while True:
        await s.extend({c: target for c in alive})
        alive = await _stop_final(s, alive, z, screen)
        if s.out_of_budget or not alive or target >= s.N or len(alive) <= cfg.survivors:
            return alive
        keep = max(cfg.survivors, math.ceil(len(alive) / cfg.eta))
        ranked = sorted(alive, key=lambda c: -s.bounds(c, z)[0])
        kept = ranked[:keep]
        for rank, cid in enumerate(ranked[keep:], start=keep + 1):
            if s.pair_bounds(cid, ranked[0], z)[2] >= 0:  # not clearly behind: halving may not drop it
                kept.append(cid)
            else:
                s.relative[cid] = f"halved out after {s.seen[cid]} tasks: rank {rank} of {len(ranked)}"
        alive = kept
        target = min(s.N, target * cfg.eta)


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



async def _thompson(s: _Session, pool: list[str], z: float, screen: Screen | None, gen: np.random.Generator,
                    rng: random.Random, m: int = 1024) -> list[str]:
    """Top-two Thompson sampling until the `survivors` likeliest best hold P(best) >= confidence."""
    cfg, alive = s.cfg, s.open(pool)
    tail = (1 - cfg.confidence) / max(len(s.candidates), 1)
    await s.extend({c: s.next_target(c) for c in alive if not s.done(c)})
    while True:
        if screen is not None:
            alive = await _stop_final(s, alive, z, screen)
        samples = {c: _posterior_samples(s, c, gen, m) for c in alive}
        if screen is None:
            for cid in list(alive):
                p_gain = float((samples[cid] > 0).mean())
                if p_gain < tail:
                    s.final[cid] = f"cannot beat the incumbent: P(gain)={p_gain:.3f} after {s.seen[cid]} tasks"
            alive = [c for c in alive if c not in s.final]
        if s.out_of_budget or not alive:
            return alive
        mat = np.stack([samples[c] for c in alive])
        p_best = np.bincount(mat.argmax(axis=0), minlength=len(alive)) / m
        leader = alive[int(p_best.argmax())]
        for i, cid in enumerate(list(alive)):
            if cid != leader and p_best[i] < tail:
                s.relative[cid] = f"unlikely to be best: P(best)={p_best[i]:.3f} after {s.seen[cid]} tasks"
        keep = {c: float(p_best[i]) for i, c in enumerate(alive) if c not in s.relative}
        alive = list(keep)
        top = sorted(keep, key=lambda c: -keep[c])[:cfg.survivors]
        if len(alive) <= cfg.survivors or sum(keep[c] for c in top) >= cfg.confidence:
            for cid in [c for c in alive if c not in top]:
                s.relative[cid] = f"unlikely to be best: P(best)={keep[cid]:.3f} after {s.seen[cid]} tasks"
            return top
        open_arms = [c for c in alive if not s.done(c)]
        if not open_arms:
            return alive
        rows = [i for i, c in enumerate(samples) if c in keep]
        pick = _top_two(alive, mat[rows], leader if leader in alive else top[0], gen, rng)
        if s.done(pick):
            pick = max(open_arms, key=lambda c: keep[c])
        await s.extend({pick: s.next_target(pick)})


async def _complete(s: _Session, kept: list[str], z: float, screen: Screen | None, qualify: Qualify | None,
                    uniform: bool) -> None:
    """Evaluate the kept candidates on every task (stopping any the screen rules out), then qualify them."""
    alive = s.open(kept)
    while alive and not s.out_of_budget:
        open_ = [c for c in alive if not s.done(c)]
        if open_:
            await s.extend({c: s.N if uniform else s.next_target(c) for c in open_})
        if not uniform:
            alive = await _stop_final(s, alive, z, screen)
        alive = await _qualify_done(s, alive, qualify, z)


def _finish(s: _Session, reason: str, reopened: list[str], z: float) -> AllocationResult:
    ranked = sorted(s.complete, key=lambda c: (-s.bounds(c, z)[0], s.complete.index(c)))
    estimates = {}
    for cid in s.candidates:
        mean, low, high = s.bounds(cid, z)
        estimates[cid] = {"n": float(s.seen[cid]), "mean": mean, "low": low, "high": high}
    early = any(s.seen[c] < s.N for c in s.candidates)
    cut = [c for c in s.candidates if c not in s.complete and c not in s.final and c not in s.relative]
    if cut and not s.out_of_budget:
        reason = f"{reason}; {len(cut)} candidate(s) left open"
    return AllocationResult(rewards=s.rewards, rollouts=sum(s.spent.values()), per_candidate=dict(s.spent),
                            stopped_early=early, reason=reason, dropped={**s.final, **s.relative},
                            survivors=ranked, estimates=estimates, final=dict(s.final), budget_cut=cut,
                            qualified=dict(s.qualified), reopened=reopened)


async def allocate(cfg: SelectionConfig | AllocatorConfig, candidates: list[str], incumbent: str,
                   task_ids: Sequence[str], evaluate: Evaluate, budget: Budget,
                   rng: random.Random | None = None, *, known: dict[str, dict[str, float]] | None = None,
                   screen: Screen | None = None, qualify: Qualify | None = None,
                   charge: bool = True, strata: Mapping[str, str] | None = None) -> AllocationResult:
    """Spread oracle rollouts over `candidates` (paired with `incumbent` on the same tasks).

    `evaluate(candidate_id, task_ids)` returns the reward per task id (trials averaged; a missing
    task counts 0). `known` holds rewards already measured (e.g. the incumbent's cached validation
    results): they are reused and not charged. With `charge` the ledger is charged
    `len(tasks) × trials_per_task` before every call; without it `evaluate` charges (the ledger
    only bounds what is asked). `screen` and `qualify` make the allocation acceptance-aware (see
    the module docstring); without them, "cannot beat the incumbent" stops candidates and every
    fully evaluated candidate qualifies with its mean paired difference. `strata` (gold label per
    task id) stratifies the shared task order.
    """
    acfg = cfg.allocator if isinstance(cfg, SelectionConfig) else cfg
    if acfg.name not in ALLOCATORS:
        raise ConfigError(f"unknown allocator {acfg.name!r}; valid: {', '.join(ALLOCATORS)}")
    rng = rng or random.Random(0)
    s = _Session(acfg, list(dict.fromkeys(candidates)), incumbent, list(task_ids), evaluate, budget, rng, known,
                 charge, strata)
    z = _z(acfg.confidence)
    if not s.candidates or not s.N:
        return _finish(s, "nothing to evaluate", [], z)
    gen = numpy_rng(rng)
    pool, reopened, reason = list(s.candidates), [], ""
    while pool:
        if acfg.name == "ucb":
            reason = await _ucb(s, pool, z, screen, qualify)
            kept: list[str] = []
        elif acfg.name == "successive_halving":
            kept = await _successive_halving(s, pool, z, screen)
        elif acfg.name == "thompson":
            kept = await _thompson(s, pool, z, screen, gen, rng)
        else:
            kept = list(pool)
        await _complete(s, kept, z, screen, qualify, acfg.name == "uniform")
        reason = s.out_of_budget or reason or "every candidate fully evaluated or stopped"
        if s.qualified or not s.relative or s.out_of_budget:
            break
        pool = list(s.relative)  # dropped relative to leaders that did not qualify: take them up again
        reopened += pool
        s.relative.clear()
    return _finish(s, reason, reopened, z)
