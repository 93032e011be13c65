"""Acceptance of candidates against the incumbent (RRSI Algorithm 2, or plain greedy).

All comparisons are paired: candidate and incumbent are scored on the same `task_ids`. The score
S is the mean reward over tasks × trials, where a missing or crashed trial counts 0 with the full
denominator. For each candidate, in order:

1. guards (non-compensatory, see `guards.py`): any message rejects;
2. floor: S < best-ever − δ rejects;
3. ΔS > δ (a gain): admitted when ΔC ≤ β0 + β1·ΔS (the cost rule; ΔC = the change in policy
   tokens per task, relative by default or ln(candidate / incumbent), see `AcceptanceConfig.cost_scale`).
   With a `CostAnchor` (`AcceptanceConfig.cost_anchor: seed`) the rule measures from the seed instead:
   ΔC_seed ≤ β0 + β1·(ΔS + G), ΔC_seed the change from the seed's tokens and G the incumbent's score
   minus the seed's on the same tasks, so that whether a harness pays for its cost does not depend on
   the path of incumbents that led to it; the objective's ΔC is then priced in the seed's tokens,
   (candidate − incumbent) / seed on the relative scale, for the same reason;
4. |ΔS| ≤ δ (within the noise band): admitted when cheaper (ΔC < −tol), or cost-neutral
   (|ΔC| ≤ tol) with structural novelty ν ≥ 1;
5. ΔS < −δ: rejected as a regression;
6. with `beat_incumbent` (default), an otherwise admissible candidate whose objective is not above
   the incumbent's (0) is rejected: on a small split δ is wide, and "within the band and 3% cheaper"
   would otherwise accept an estimated loss of several points. With `band_lower_bound` (default) a
   within-band candidate's objective is taken at the band's low end (`band_half_width`): a swap must
   pay for the loss the band allows, also when it answered every task as the incumbent did.

7. with `repair` (default), when the incumbent itself fails the collapse guard on `task_ids`, a
   candidate refused by 3., 4. or 6. is admissible (rule `repair`) when it passes every guard, answers
   with labels and is not collapsed itself (no relief), ΔS ≥ 0, and its label-balanced gain ΔS_bal
   (paired differences weighted so that each gold label counts alike) is beyond its own band
   (z·SE by the same bootstrap, z = `repair_z`, 1 by default) and pays for its cost:
   ΔC ≤ β0 + β1·ΔS_bal. A collapsed incumbent's plain score is the gold share of its label on
   these tasks, not a measure of skill.

The winner is the admissible candidate with the largest objective w_s·ΔS − w_c·ΔC + w_n·ν.
δ is fixed, or z·SE of ΔS by a paired bootstrap over tasks with the injected rng.
Greedy mode (the unregularized ablation, with δ = 0) admits any ΔS > δ and picks the largest ΔS.
`select` expects full evaluations on `task_ids` (survivors of the allocation): a task a candidate
was not evaluated on counts 0.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from evolve.selection.config import AcceptanceConfig, CostScale, SelectionConfig
from evolve.selection.guards import collapse_guard, normalize_label, run_guards


@dataclass(frozen=True)
class Evaluation:
    """Oracle results of one harness on a split."""

    candidate_id: str
    rewards: dict[str, list[float]]
    """Rewards per task id, one per trial; missing tasks or trials (and NaN) count 0."""
    tokens_per_task: float = 0.0
    """Mean policy tokens (prompt + completion) per task."""
    novelty: int = 0
    """Structural novelty ν: component types never part of an accepted edit."""
    predictions: dict[str, str | None] = field(default_factory=dict)
    """Extracted answer per task id (None when nothing could be parsed)."""
    parse_rate: float = 1.0
    """Share of rollouts whose answer could be parsed."""
    crash_rate: float = 0.0
    """Share of rollouts that failed (backend error, timeout, exception)."""
    parsed_tasks: dict[str, float] | None = None
    """Per task id, the share of its rollouts whose answer could be parsed (for early guards)."""
    crashed_tasks: dict[str, float] | None = None
    """Per task id, the share of its rollouts that failed (for early guards)."""


class Decision(BaseModel):
    """The verdict on one candidate, stored with its statistics."""

    model_config = ConfigDict(extra="forbid")

    candidate_id: str
    """The candidate judged."""
    accepted: bool
    """True only for the winner."""
    admissible: bool
    """Passed every rule; only the best admissible candidate is accepted."""
    reason: str
    """One human-readable line."""
    stats: dict[str, Any]
    """S, S_incumbent, dS, dC, delta, se, floor, ci_dS, ci_S, allowed_dC, guards, objective, novelty, rule..."""


class SelectionResult(BaseModel):
    """Decisions for every candidate, in input order, and the winner (None: keep the incumbent)."""

    model_config = ConfigDict(extra="forbid")

    decisions: list[Decision]
    winner_id: str | None = None


def n_trials(evaluations: Sequence[Evaluation], minimum: int = 1) -> int:
    """Trials per task of the comparison: the most seen in any evaluation (at least `minimum`)."""
    seen = [len(v) for ev in evaluations for v in ev.rewards.values()]
    return max([minimum, *seen])


def task_scores(ev: Evaluation, task_ids: Sequence[str], trials: int) -> np.ndarray:
    """Per-task mean reward with the full denominator `trials` (missing and NaN trials count 0)."""
    out = np.zeros(len(task_ids))
    for i, task in enumerate(task_ids):
        values = [v for v in ev.rewards.get(task, []) if v is not None and not math.isnan(v)]
        out[i] = sum(values[:trials]) / trials
    return out


def score(ev: Evaluation, task_ids: Sequence[str], trials: int | None = None) -> float:
    """S = mean over tasks × trials; missing or crashed trials count 0 with the full denominator."""
    if not task_ids:
        return 0.0
    return float(task_scores(ev, task_ids, trials or n_trials([ev])).mean())


def seed_anchor(seed: Evaluation, incumbent: Evaluation, task_ids: Sequence[str]) -> CostAnchor:
    """The seed as the cost rule's reference: its tokens per task, and the incumbent's score minus the
    seed's on `task_ids`."""
    return CostAnchor(tokens=seed.tokens_per_task, gain=score(incumbent, task_ids) - score(seed, task_ids))


def numpy_rng(rng: random.Random | np.random.Generator | None) -> np.random.Generator:
    """A numpy Generator derived from the injected rng (a seeded default when None)."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng((rng or random.Random(0)).getrandbits(64))


def cost_change(candidate_tokens: float, incumbent_tokens: float, scale: CostScale) -> float:
    """ΔC: change in policy tokens per task, as a log ratio (`log`) or a relative change (`relative`)."""
    if scale == "log":
        return math.log(max(candidate_tokens, 1.0) / max(incumbent_tokens, 1.0))
    return (candidate_tokens - incumbent_tokens) / max(incumbent_tokens, 1.0)


def band_half_width(delta: float, n: int, acc: AcceptanceConfig) -> float:
    """How far below ΔS the low end of the noise band lies, for the within-band rule.

    A fixed δ is used as is. A bootstrap δ = z·SE counts one more task answered differently than
    seen, z·√(SE² + 1/n²): with the same answers on every task the bootstrap SE is 0, which is no
    evidence that a harness never answers differently, only that it did not on these n tasks.
    """
    if not isinstance(acc.delta, str):
        return delta
    return math.hypot(delta, acc.delta_z / max(n, 1))


@dataclass(frozen=True)
class CostAnchor:
    """What the cost rule measures a gainer against instead of the incumbent (see the module docstring)."""

    tokens: float
    """The anchor's (the seed's) policy tokens per task."""
    gain: float
    """The incumbent's score minus the anchor's, on the tasks the decision is on."""


def rule_terms(candidate_tokens: float, incumbent_tokens: float, d_s: float, anchor: CostAnchor | None,
               scale: CostScale) -> tuple[float, float]:
    """(ΔC the cost rule checks, the score gain it pays with): from the incumbent without an anchor,
    from the anchor with one."""
    if anchor is None:
        return cost_change(candidate_tokens, incumbent_tokens, scale), d_s
    return cost_change(candidate_tokens, anchor.tokens, scale), d_s + anchor.gain


def objective_cost(candidate_tokens: float, incumbent_tokens: float, anchor: CostAnchor | None,
                   scale: CostScale) -> float:
    """The objective's ΔC: `cost_change` from the incumbent, or with an anchor on the relative scale
    the change in units of the anchor's tokens, (candidate − incumbent) / anchor (the log scale is
    the same either way)."""
    if anchor is None or scale == "log":
        return cost_change(candidate_tokens, incumbent_tokens, scale)
    return (candidate_tokens - incumbent_tokens) / max(anchor.tokens, 1.0)


@dataclass(frozen=True)
class _Stats:
    s: float
    s_inc: float
    d_s: float
    d_c: float
    delta: float
    se: float
    ci_ds: tuple[float, float]
    ci_s: tuple[float, float]
    rule_dc: float
    """ΔC the cost rule checks (`d_c` unless anchored)."""
    rule_ds: float
    """The gain the cost rule pays with (`d_s` unless anchored)."""
    obj_dc: float
    """The objective's ΔC (`d_c` unless anchored, see `objective_cost`)."""
    anchor: CostAnchor | None = None


def _cost_verdict(st: _Stats, cfg: AcceptanceConfig) -> tuple[bool, str, str, float]:
    """(whether the cost rule holds, the refusal's terms, the admission's terms, the allowed ΔC)."""
    allowed = cfg.beta0 + cfg.beta1 * st.rule_ds
    holds = not cfg.cost_rule or st.rule_dc <= allowed + 1e-12
    if st.anchor is None:
        return (holds, f"ΔC={st.d_c:+.2f} > {cfg.beta0:g}+{cfg.beta1:g}·{st.d_s:.3f}={allowed:.2f}",
                f"ΔC={st.d_c:+.2f} (allowed {allowed:.2f})", allowed)
    terms = (f"ΔC from the seed={st.rule_dc:+.2f} {{}} {cfg.beta0:g}+{cfg.beta1:g}·(ΔS {st.d_s:+.3f} + "
             f"the incumbent's gain over the seed {st.anchor.gain:+.3f})={allowed:.2f}")
    return holds, terms.format(">"), f"ΔC={st.d_c:+.2f}, " + terms.format("<="), allowed


def _resampled_se(means: np.ndarray) -> float:
    """Standard error from the bootstrap means (0 for a single resample)."""
    return float(means.std(ddof=1)) if len(means) > 1 else 0.0


def _band(se: float, acc: AcceptanceConfig, z: float | None = None) -> float:
    """δ: z·SE for a bootstrap band (z: `delta_z` unless given), else the fixed value."""
    return (z or acc.delta_z) * se if isinstance(acc.delta, str) else float(acc.delta)


def _bootstrap(cand: np.ndarray, inc: np.ndarray, idx: np.ndarray) -> tuple[float, tuple[float, float],
                                                                              tuple[float, float]]:
    diffs = (cand - inc)[idx].mean(axis=1)
    scores = cand[idx].mean(axis=1)
    se = _resampled_se(diffs)
    lo, hi = np.percentile(diffs, [2.5, 97.5])
    slo, shi = np.percentile(scores, [2.5, 97.5])
    return se, (float(lo), float(hi)), (float(slo), float(shi))


def _judge(st: _Stats, novelty: int, guards: list[str], best_ever: float, cfg: AcceptanceConfig
           ) -> tuple[bool, str, str, float | None]:
    """(admissible, rule, reason, allowed ΔC) for one candidate."""
    ds, dc, delta = st.d_s, st.d_c, st.delta
    if guards:
        return False, "guard", "guard: " + "; ".join(guards), None
    if cfg.greedy:
        if ds > delta:
            return True, "greedy", f"greedy: ΔS={ds:+.3f} > {delta:g}", None
        return False, "no-gain", f"no gain: ΔS={ds:+.3f} (greedy needs > {delta:g})", None
    floor = best_ever - delta
    if cfg.floor and st.s < floor - 1e-12:
        return False, "floor", f"floor: S={st.s:.3f} < best-ever {best_ever:.3f} − δ {delta:.3f} = {floor:.3f}", None
    if ds > delta:
        holds, refused, admitted, allowed = _cost_verdict(st, cfg)
        if not holds:
            return False, "cost", f"cost rule: {refused} for ΔS={ds:+.3f}", allowed
        return True, "gain", f"gain: ΔS={ds:+.3f} > δ={delta:.3f}, {admitted}", allowed
    if ds < -delta:
        return False, "regression", f"regression: ΔS={ds:+.3f} < −δ={-delta:.3f}", None
    band = f"within noise band (ΔS={ds:+.3f}, δ={delta:.3f})"
    if not cfg.within_band:
        return False, "band", band, None
    if dc < -cfg.cost_tolerance:
        return True, "neutral-cheaper", f"{band} and cheaper: ΔC={dc:+.2f}", None
    if abs(dc) <= cfg.cost_tolerance and novelty >= 1:
        return True, "neutral-novel", f"{band}, cost-neutral (ΔC={dc:+.2f}) with novelty ν={novelty}", None
    why = "costlier" if dc > cfg.cost_tolerance else "no structural novelty"
    return False, "band", f"{band}: {why} (ΔC={dc:+.2f}, ν={novelty})", None


def _objective(st: _Stats, novelty: int, cfg: AcceptanceConfig) -> float:
    if cfg.greedy:
        return st.d_s
    return cfg.w_s * st.d_s - cfg.w_c * st.obj_dc + cfg.w_n * novelty


def _clean(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    return value


def _candidate_stats(cand: Evaluation, inc_scores: np.ndarray, inc: Evaluation, task_ids: Sequence[str],
                     trials: int, idx: np.ndarray, cfg: AcceptanceConfig, anchor: CostAnchor | None) -> _Stats:
    c = task_scores(cand, task_ids, trials)
    se, ci_ds, ci_s = _bootstrap(c, inc_scores, idx)
    delta = _band(se, cfg)
    s, s_inc = float(c.mean()), float(inc_scores.mean())
    d_c = cost_change(cand.tokens_per_task, inc.tokens_per_task, cfg.cost_scale)
    rule_dc, rule_ds = rule_terms(cand.tokens_per_task, inc.tokens_per_task, s - s_inc, anchor, cfg.cost_scale)
    obj_dc = objective_cost(cand.tokens_per_task, inc.tokens_per_task, anchor, cfg.cost_scale)
    return _Stats(s, s_inc, s - s_inc, d_c, delta, se, ci_ds, ci_s, rule_dc, rule_ds, obj_dc, anchor)


@dataclass(frozen=True)
class _Row:
    cand: Evaluation
    st: _Stats
    admissible: bool
    rule: str
    reason: str
    allowed: float | None
    guards: list[str]


def _assess(cand: Evaluation, incumbent: Evaluation, inc_scores: np.ndarray, *, task_ids: Sequence[str],
            gold: dict[str, str] | None, best_ever: float, trials: int, idx: np.ndarray,
            cfg: SelectionConfig, anchor: CostAnchor | None = None) -> _Row:
    acc = cfg.acceptance
    if task_ids:
        st = _candidate_stats(cand, inc_scores, incumbent, task_ids, trials, idx, acc, anchor)
    else:
        dc = cost_change(cand.tokens_per_task, incumbent.tokens_per_task, acc.cost_scale)
        rule_dc, rule_ds = rule_terms(cand.tokens_per_task, incumbent.tokens_per_task, 0.0, anchor, acc.cost_scale)
        obj_dc = objective_cost(cand.tokens_per_task, incumbent.tokens_per_task, anchor, acc.cost_scale)
        st = _Stats(0.0, 0.0, 0.0, dc, 0.0, 0.0, (0.0, 0.0), (0.0, 0.0), rule_dc, rule_ds, obj_dc, anchor)
    guards = run_guards(cfg.guards, predictions=cand.predictions, gold=gold, task_ids=task_ids,
                        parse_rate=cand.parse_rate, incumbent_parse_rate=incumbent.parse_rate,
                        crash_rate=cand.crash_rate, incumbent_crash_rate=incumbent.crash_rate,
                        incumbent_predictions=incumbent.predictions)
    admissible, rule, reason, allowed = _judge(st, cand.novelty, guards, best_ever, acc)
    admissible, rule, reason = _beat_incumbent(admissible, rule, reason, st, cand, len(task_ids), acc)
    if not admissible and rule in REPAIRABLE:
        repaired = _repair(cand, incumbent, inc_scores, st, task_ids=task_ids, gold=gold, idx=idx, cfg=cfg)
        if repaired is not None:
            admissible, rule, reason, allowed = True, "repair", repaired[0], repaired[1]
    return _Row(cand, st, admissible, rule, reason, allowed, guards)


REPAIRABLE = ("band", "cost", "objective")
"""Rules a repair of a collapsed incumbent may overturn (never a guard, the floor or a regression)."""


def label_weights(task_ids: Sequence[str], gold: Mapping[str, str]) -> np.ndarray:
    """Per-task weights (mean 1) under which every gold label counts alike."""
    labels = [normalize_label(gold.get(t, "")) for t in task_ids]
    counts = {label: labels.count(label) for label in set(labels)}
    return np.array([len(labels) / (len(counts) * counts[label]) for label in labels])


def balanced_diffs(cand: np.ndarray, inc: np.ndarray, task_ids: Sequence[str], gold: Mapping[str, str]
                   ) -> np.ndarray:
    """Per-task paired differences weighted so that every gold label counts alike (their mean is the
    label-balanced ΔS)."""
    return label_weights(task_ids, gold) * (cand - inc)


def _repair(cand: Evaluation, incumbent: Evaluation, inc_scores: np.ndarray, st: _Stats, *,
            task_ids: Sequence[str], gold: dict[str, str] | None, idx: np.ndarray, cfg: SelectionConfig
            ) -> tuple[str, float] | None:
    """(reason, allowed ΔC) when `cand` repairs an incumbent that fails the collapse guard, else None."""
    acc, g = cfg.acceptance, cfg.guards
    if not (acc.repair and not acc.greedy and g.enabled and g.collapse_margin is not None and gold and task_ids):
        return None
    limits = {"margin": g.collapse_margin, "min_share": g.collapse_min_share}
    broken = collapse_guard(incumbent.predictions, gold, task_ids, **limits)
    answers = any(cand.predictions.get(t) for t in task_ids)
    if broken is None or not answers or collapse_guard(cand.predictions, gold, task_ids, **limits) is not None:
        return None
    trials = n_trials([cand, incumbent], cfg.allocator.trials_per_task)
    diffs = balanced_diffs(task_scores(cand, task_ids, trials), inc_scores, task_ids, gold)
    balanced = float(diffs.mean())
    delta = _band(_resampled_se(diffs[idx].mean(axis=1)), acc, acc.repair_z)
    allowed = acc.beta0 + acc.beta1 * balanced
    if st.d_s < 0 or balanced <= delta or (acc.cost_rule and st.d_c > allowed + 1e-12):
        return None
    return (f"repair: the incumbent fails the guard ({broken}); this candidate passes every guard with a "
            f"label-balanced gain ΔS_bal={balanced:+.3f} > δ_bal={delta:.3f}, ΔS={st.d_s:+.3f}, "
            f"ΔC={st.d_c:+.2f} (allowed {acc.beta0:g}+{acc.beta1:g}·ΔS_bal={allowed:.2f})"), allowed


def _beat_incumbent(admissible: bool, rule: str, reason: str, st: _Stats, cand: Evaluation, n: int,
                    acc: AcceptanceConfig) -> tuple[bool, str, str]:
    """Rule 6: an admissible candidate must beat the incumbent's objective (at the band's low end
    for a within-band one)."""
    if admissible and acc.beat_incumbent and not acc.greedy:
        objective = _objective(st, cand.novelty, acc)
        if objective <= 0:
            admissible, rule = False, "objective"
            reason = f"{reason}, but objective {objective:.2f} <= 0 (the incumbent's): not worth its score change"
        elif rule.startswith("neutral") and acc.band_lower_bound:
            low_ds = st.d_s - band_half_width(st.delta, n, acc)
            low = _objective(replace(st, d_s=low_ds), cand.novelty, acc)
            if low <= 0:
                admissible, rule = False, "objective"
                reason = (f"{reason}, but objective {low:.2f} <= 0 (the incumbent's) at the band's low end "
                          f"ΔS = {low_ds:+.3f}: the saving does not pay for a loss the band allows")
    return admissible, rule, reason


def _decision(row: _Row, winner: str | None, best_obj: float | None, best_ever: float, n: int, trials: int,
              incumbent: Evaluation, acc: AcceptanceConfig) -> Decision:
    st, cand = row.st, row.cand
    objective = _objective(st, cand.novelty, acc) if row.admissible else None
    accepted = cand.candidate_id == winner
    reason = row.reason
    if accepted:
        reason = f"accepted: {reason}; objective {objective:.2f}"
    elif row.admissible:
        reason = f"admissible but not best: objective {objective:.2f} < {best_obj:.2f} ({winner}); {reason}"
    stats = {
        "rule": row.rule, "S": st.s, "S_incumbent": st.s_inc, "dS": st.d_s, "dC": st.d_c, "delta": st.delta,
        "se": st.se, "floor": (best_ever - st.delta) if acc.floor and not acc.greedy else None,
        "best_ever": best_ever, "ci_dS": list(st.ci_ds), "ci_S": list(st.ci_s), "allowed_dC": row.allowed,
        "guards": row.guards, "objective": objective, "novelty": cand.novelty,
        "tokens_per_task": cand.tokens_per_task, "tokens_incumbent": incumbent.tokens_per_task,
        "n_tasks": n, "trials": trials, "split": acc.split,
    }
    if st.anchor is not None:
        stats |= {"dC_seed": st.rule_dc, "seed_gain": st.anchor.gain, "tokens_seed": st.anchor.tokens,
                  "dC_objective": st.obj_dc}
    return Decision(candidate_id=cand.candidate_id, accepted=accepted, admissible=row.admissible,
                    reason=reason, stats={k: _clean(v) for k, v in stats.items()})


def assess(candidate: Evaluation, incumbent: Evaluation, *, task_ids: list[str], gold: dict[str, str] | None,
           best_ever: float, cfg: SelectionConfig, rng: random.Random | np.random.Generator | None = None,
           anchor: CostAnchor | None = None) -> tuple[float | None, str, str]:
    """One candidate alone: (objective when admissible else None, the reason line, the rule that
    decided: `gain`, `neutral-cheaper`, `floor`, `guard`, ...). `select` with the same arguments and
    rng gives the same verdict for it."""
    acc = cfg.acceptance
    trials = n_trials([candidate, incumbent], cfg.allocator.trials_per_task)
    n = len(task_ids)
    idx = numpy_rng(rng).integers(0, max(n, 1), size=(acc.bootstrap_reps, max(n, 1)))
    row = _assess(candidate, incumbent, task_scores(incumbent, task_ids, trials), task_ids=task_ids, gold=gold,
                  best_ever=best_ever, trials=trials, idx=idx, cfg=cfg, anchor=anchor)
    return (_objective(row.st, candidate.novelty, acc) if row.admissible else None), row.reason, row.rule


def select(candidates: list[Evaluation], incumbent: Evaluation, *, task_ids: list[str],
           gold: dict[str, str] | None, best_ever: float, cfg: SelectionConfig,
           rng: random.Random | np.random.Generator | None = None, anchor: CostAnchor | None = None
           ) -> SelectionResult:
    """Judge every candidate against the incumbent on `task_ids` and pick at most one winner.

    `best_ever` is the best validation score any incumbent reached so far (the floor's reference).
    `anchor`: the cost rule's reference when it is not the incumbent (see `CostAnchor`).
    Every candidate gets a Decision (input order); only the winner has `accepted=True`.
    """
    acc = cfg.acceptance
    trials = n_trials([*candidates, incumbent], cfg.allocator.trials_per_task)
    n = len(task_ids)
    idx = numpy_rng(rng).integers(0, max(n, 1), size=(acc.bootstrap_reps, max(n, 1)))
    inc_scores = task_scores(incumbent, task_ids, trials)
    rows = [_assess(c, incumbent, inc_scores, task_ids=task_ids, gold=gold, best_ever=best_ever, trials=trials,
                    idx=idx, cfg=cfg, anchor=anchor) for c in candidates]
    ranked = sorted((r for r in rows if r.admissible),
                    key=lambda r: (-_objective(r.st, r.cand.novelty, acc), -r.st.d_s, r.st.obj_dc))
    winner = ranked[0].cand.candidate_id if ranked else None
    best_obj = _objective(ranked[0].st, ranked[0].cand.novelty, acc) if ranked else None
    decisions = [_decision(r, winner, best_obj, best_ever, n, trials, incumbent, acc) for r in rows]
    return SelectionResult(decisions=decisions, winner_id=winner)
