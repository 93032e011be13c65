"""Acceptance-aware early stopping: what a partial evaluation already rules out.

The allocator asks, after every minibatch, whether a candidate can be stopped for good on its own
evidence. The answer comes from the same rules acceptance applies to a full evaluation, with
confidence bounds for the tasks not seen yet (one-sided at the allocator's `confidence`; the
validation split is a fixed, finite set, so the tasks seen count as they are and only the unseen
ones are bounded, by exact binomial bounds: `diff_bounds`, `share_bounds`, `share_lower_bound`;
a normal bound with a shrunk variance is far too sure after a handful of tasks answered alike):

- guards: label collapse when the lower bound of the top label's final share is above the
  collapse limit (an exact one-sided binomial bound for the tasks not seen yet: a normal bound on a
  handful of identical answers is far too sure, e.g. 86% after 8 of 8 where the exact bound is 56%);
  a parse-rate drop or crash-rate rise when the lower bound of the paired
  difference with the incumbent is above the allowed change; too few validation tasks at once;
- regression: the upper bound of ΔS below −δ (δ estimated as z·SE of the paired differences seen);
- floor: the upper bound of S below best-ever − δ (paired: the incumbent's S on every task plus the
  upper bound of ΔS);
- no gain and not cheaper: the upper bound of ΔS at most δ while the candidate is neither cheaper
  nor cost-neutral with structural novelty (the within-band admissions);
- cost rule: a gainer whose token cost exceeds β0 + β1·ΔS even at the upper bound of ΔS;
- neither of the last two while the candidate may still repair an incumbent that fails the collapse
  guard (`acceptance.repair`): it is not confirmed collapsed itself (no relief), the upper bound of
  ΔS is at least 0, and the upper bound of its label-balanced gain is positive and pays for its cost.

When the decision pools the validation tasks with fresh evolve tasks and the allocator asks for it
(`Partial.pooled` of them, `acceptance.pooled_rules`; see `evolve.loop.pooled`), the last three
rules (noise band and objective, cost rule, repair) are the pooled decision's: they are bounded
over the validation and the fresh tasks together, the fresh ones counted as not yet seen, and δ is
the pooled decision's (z·SD/√(validation + fresh)). The guards, the regression and the floor stay
validation rules, as they are in the decision.

A collapse-rejected candidate therefore spends only what was needed to see the collapse. Greedy
acceptance (the unregularized ablation) only stops candidates that cannot gain.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from scipy.stats import beta

from evolve.selection.acceptance import (
    CostAnchor,
    Evaluation,
    cost_change,
    label_weights,
    objective_cost,
    rule_terms,
)
from evolve.selection.config import AcceptanceConfig, SelectionConfig
from evolve.selection.guards import collapse_guard, label_share, label_shares

MIN_SEEN = 8
"""No early verdict on fewer tasks than this (the bounds are not trusted on less)."""


@dataclass(frozen=True)
class Partial:
    """A candidate's and the incumbent's results on the tasks seen so far (in the shared order)."""

    candidate: Evaluation
    incumbent: Evaluation
    seen: Sequence[str]
    """Task ids seen by both, in order."""
    total: Sequence[str]
    """Every task id of the acceptance split."""
    pooled: int = 0
    """Fresh tasks the decision pools with `total` (none of them seen yet): the rules the pooled
    decision takes are bounded over `len(total) + pooled` tasks."""
    anchor: CostAnchor | None = None
    """The cost rule's reference when it is not the incumbent (`AcceptanceConfig.cost_anchor`)."""


def _fpc(n: int, total: int) -> float:
    return max(0.0, (total - n) / max(total - 1, 1))


def mean_bounds(values: np.ndarray, total: int, z: float, prior_var: float = 0.25) -> tuple[float, float, float]:
    """(mean, low, high) of the mean of `values` over `total` items (shrunk variance, finite population)."""
    n = len(values)
    mean = float(values.mean())
    var = (float(((values - mean) ** 2).sum()) + prior_var) / n
    half = z * math.sqrt(var / n * _fpc(n, total))
    return mean, mean - half, mean + half


def _upper(count: float, n: int, alpha: float) -> float:
    """Exact one-sided (Clopper–Pearson) upper bound of a share after `count` of `n` (count may be fractional)."""
    return 1.0 if count >= n else float(beta.ppf(1.0 - alpha, count + 1, n - count))


def _lower(count: float, n: int, alpha: float) -> float:
    """Exact one-sided (Clopper–Pearson) lower bound of a share after `count` of `n`."""
    return 0.0 if count <= 0 else float(beta.ppf(alpha, count, n - count + 1))


def diff_bounds(values: np.ndarray, total: int, z: float) -> tuple[float, float, float]:
    """(mean, low, high) of the mean of paired differences in [-1, 1] over `total` items after the
    first `len(values)`.

    The seen items count as they are; the mean of the unseen ones is bounded by exact binomial
    bounds on the shares of gains and of losses (each at half the error rate of the one-sided
    confidence whose normal quantile is `z`). A normal bound is far too sure after a few tasks
    answered alike: 8 ties out of 60 leave ΔS up to +0.14 by a normal bound with a shrunk variance,
    up to +0.42 by this one (the other 52 tasks may still differ in up to 48% of cases).
    """
    n = len(values)
    mean = float(values.mean()) if n else 0.0
    if n == 0 or total <= 0:
        return mean, -1.0, 1.0
    alpha = (1.0 - NormalDist().cdf(z)) / 2
    gains, losses = float(np.clip(values, 0, 1).sum()), float(np.clip(-values, 0, 1).sum())
    unseen = max(total - n, 0)
    high = _upper(gains, n, alpha) - _lower(losses, n, alpha)
    low = _lower(gains, n, alpha) - _upper(losses, n, alpha)
    seen_sum = float(values.sum())
    return mean, (seen_sum + unseen * low) / max(total, n), (seen_sum + unseen * high) / max(total, n)


def share_bounds(values: np.ndarray, total: int, z: float) -> tuple[float, float, float]:
    """(mean, low, high) of the mean of values in [0, 1] over `total` items (exact bounds for the unseen)."""
    n = len(values)
    mean = float(values.mean()) if n else 0.0
    if n == 0 or total <= 0:
        return mean, 0.0, 1.0
    alpha = 1.0 - NormalDist().cdf(z)
    count, unseen = float(np.clip(values, 0, 1).sum()), max(total - n, 0)
    return (mean, (count + unseen * _lower(count, n, alpha)) / max(total, n),
            (count + unseen * _upper(count, n, alpha)) / max(total, n))


def share_lower_bound(count: int, n: int, total: int, z: float) -> float:
    """Lower bound of a label's share over `total` tasks after `count` of the first `n` carried it.

    The `total - n` tasks not seen yet get the exact one-sided Clopper–Pearson bound (at the
    confidence whose one-sided normal quantile is `z`); the seen ones count as they are.
    """
    if n <= 0 or total <= 0:
        return 0.0
    alpha = 1.0 - NormalDist().cdf(z)
    unseen_low = _lower(count, n, alpha)
    return (count + max(total - n, 0) * unseen_low) / total


def _task_means(ev: Evaluation, ids: Sequence[str]) -> np.ndarray:
    out = []
    for t in ids:
        values = [v for v in ev.rewards.get(t, []) if v is not None and not math.isnan(v)]
        out.append(sum(values) / len(values) if values else 0.0)
    return np.array(out, dtype=float)


def _top_share(p: Partial, gold: Mapping[str, str], cfg: SelectionConfig, z: float
               ) -> tuple[str, int, float, float, float] | None:
    """(top label, its count, its lower bound over every task, gold share, collapse limit) so far."""
    g = cfg.guards
    preds = label_shares([p.candidate.predictions.get(t) for t in p.seen])
    if not preds or g.collapse_margin is None:
        return None
    label, count = preds.most_common(1)[0]
    total = len(p.total)
    gold_share = label_shares([gold.get(t) for t in p.total]).get(label, 0) / total
    limit = max(gold_share + g.collapse_margin, g.collapse_min_share)
    return label, count, share_lower_bound(count, len(p.seen), total, z), gold_share, limit


def _collapse(p: Partial, gold: Mapping[str, str] | None, cfg: SelectionConfig, z: float) -> str | None:
    g = cfg.guards
    top = _top_share(p, gold, cfg, z) if gold else None
    if top is None:
        return None
    label, count, low, gold_share, limit = top
    n = len(p.seen)
    mean = count / n
    inherited = label_share(p.incumbent.predictions, label, p.seen)
    if g.collapse_relief is not None and inherited - mean >= g.collapse_relief:
        return None  # it moves away from the incumbent's collapse: the final guard judges it on every task
    if low > limit:
        return (f"guard: collapse: predicts {label!r} on {mean:.0%} of {n} tasks seen (lower bound {low:.0%}) vs "
                f"{gold_share:.0%} in the gold answers (limit {limit:.0%})")
    return None


def _rate_change(p: Partial, cfg: SelectionConfig, z: float) -> str | None:
    """Parse-rate drop or crash-rate rise, judged on per-task indicators of the rollouts seen."""
    g = cfg.guards
    checks = (("parse rate drop", g.max_parse_drop, p.incumbent.parsed_tasks, p.candidate.parsed_tasks),
              ("crash rate rise", g.max_crash_rise, p.candidate.crashed_tasks, p.incumbent.crashed_tasks))
    for name, limit, worse, better in checks:
        if limit is None or worse is None or better is None:
            continue
        d = np.array([float(worse.get(t, 0.0)) - float(better.get(t, 0.0)) for t in p.seen])
        mean, low, _ = diff_bounds(d, len(p.total), z)
        if low > limit:
            return f"guard: {name} of {mean:.0%} after {len(p.seen)} tasks (lower bound {low:.0%} > {limit:g})"
    return None


def noise_band(d: np.ndarray, total: int, acc: AcceptanceConfig) -> float:
    """The noise band δ of a decision on `total` tasks (z·SD/√total of the paired differences seen,
    or the configured constant)."""
    if not isinstance(acc.delta, str):
        return float(acc.delta)
    sd = float(d.std(ddof=1)) if len(d) > 1 else 0.0
    return acc.delta_z * sd / math.sqrt(total)


def may_repair(p: Partial, *, gold: Mapping[str, str] | None, cfg: SelectionConfig, z: float, high: float,
               dc: float) -> bool:
    """Whether the candidate may still repair an incumbent that fails the collapse guard on every task
    (see `AcceptanceConfig.repair`), on what it has seen: it answers with labels and is not confirmed
    collapsed, its ΔS upper bound is ≥ 0, and the upper bound of its label-balanced gain is positive
    and pays for its cost (β0 + β1·bound; the weighted differences are bounded as differences scaled
    by the largest label weight)."""
    g, acc = cfg.guards, cfg.acceptance
    if not (acc.repair and not acc.greedy and g.enabled and g.collapse_margin is not None and gold) or high < 0:
        return False
    if collapse_guard(p.incumbent.predictions, gold, p.total, margin=g.collapse_margin,
                      min_share=g.collapse_min_share) is None:
        return False
    weights = dict(zip(p.total, label_weights(p.total, gold), strict=True))
    heaviest = max(weights.values())
    w = np.array([weights[t] for t in p.seen])
    d = w * (_task_means(p.candidate, p.seen) - _task_means(p.incumbent, p.seen)) / heaviest
    high_bal = heaviest * diff_bounds(d, len(p.total) + p.pooled, z)[2]
    if high_bal <= 0 or (acc.cost_rule and dc > acc.beta0 + acc.beta1 * high_bal + 1e-12):
        return False
    top = _top_share(p, gold, cfg, z)
    return top is not None and top[2] <= top[4]


def _score_high(p: Partial, cand: np.ndarray, d_high: float, z: float) -> float:
    """Upper bound of the candidate's S over every task, for the floor.

    Paired when the incumbent has results on every task: its S there plus the ΔS upper bound. The
    candidate's own bound is far looser on a few tasks, and every candidate of a round is judged on
    the same first tasks, so a run of hard ones would stop each of them (the incumbent itself would
    fail that test). Without the incumbent's full results, the candidate's own exact bound.
    """
    if all(p.incumbent.rewards.get(t) for t in p.total):
        return min(1.0, float(_task_means(p.incumbent, p.total).mean()) + d_high)
    return share_bounds(cand, len(p.total), z)[2]


def early_verdict(p: Partial, *, gold: Mapping[str, str] | None, best_ever: float, cfg: SelectionConfig,
                  z: float) -> str | None:
    """Why the candidate can be stopped for good on what it has seen (None: keep evaluating)."""
    g, acc = cfg.guards, cfg.acceptance
    if g.enabled and len(p.total) < g.min_validation_tasks:
        return (f"guard: only {len(p.total)} validation tasks; at least {g.min_validation_tasks} needed "
                f"(guards.min_validation_tasks)")
    if len(p.seen) < min(MIN_SEEN, len(p.total)):
        return None
    if g.enabled:
        why = _collapse(p, gold, cfg, z) or _rate_change(p, cfg, z)
        if why:
            return why
    cand, inc = _task_means(p.candidate, p.seen), _task_means(p.incumbent, p.seen)
    d = cand - inc
    total = len(p.total)
    mean, _, high = diff_bounds(d, total, z)
    delta = noise_band(d, total, acc)
    n = len(p.seen)
    if acc.greedy:
        return f"cannot gain: ΔS upper bound {high:+.3f} <= δ {delta:.3f} after {n} tasks" if high <= delta else None
    if high < -delta:
        return f"regression: ΔS upper bound {high:+.3f} < −δ {-delta:.3f} after {n} tasks (mean {mean:+.3f})"
    if acc.floor:
        s_high = _score_high(p, cand, high, z)
        if s_high < best_ever - delta:
            return f"floor: S upper bound {s_high:.3f} < best-ever {best_ever:.3f} − δ {delta:.3f} after {n} tasks"
    dc = cost_change(p.candidate.tokens_per_task, p.incumbent.tokens_per_task, acc.cost_scale)
    if p.pooled:  # the rules below are the pooled decision's
        _, _, high = diff_bounds(d, total + p.pooled, z)
        delta = noise_band(d, total + p.pooled, acc)
    if may_repair(p, gold=gold, cfg=cfg, z=z, high=high, dc=dc):
        return None
    if high <= delta:
        cheaper = dc < -acc.cost_tolerance
        novel = abs(dc) <= acc.cost_tolerance and p.candidate.novelty >= 1
        if not acc.within_band or not (cheaper or novel):
            return (f"cannot gain beyond the noise band (ΔS upper bound {high:+.3f} <= δ {delta:.3f} after {n} "
                    f"tasks) and is not cheaper (ΔC {dc:+.2f}, ν {p.candidate.novelty})")
        obj_dc = objective_cost(p.candidate.tokens_per_task, p.incumbent.tokens_per_task, p.anchor, acc.cost_scale)
        best_objective = acc.w_s * high - acc.w_c * obj_dc + acc.w_n * p.candidate.novelty
        if acc.beat_incumbent and best_objective <= 0:
            return (f"cannot beat the incumbent's objective: {best_objective:.2f} <= 0 even at the ΔS upper bound "
                    f"{high:+.3f} after {n} tasks (ΔC {dc:+.2f})")
    else:
        rule_dc, rule_high = rule_terms(p.candidate.tokens_per_task, p.incumbent.tokens_per_task, high, p.anchor,
                                        acc.cost_scale)
        if acc.cost_rule and rule_dc > acc.beta0 + acc.beta1 * rule_high + 1e-12:
            what = "ΔC" if p.anchor is None else "ΔC from the seed"
            return (f"cost rule cannot be met: {what} {rule_dc:+.2f} > {acc.beta0:g}+{acc.beta1:g}·{rule_high:.3f} "
                    f"even at the ΔS upper bound after {n} tasks")
    return None
