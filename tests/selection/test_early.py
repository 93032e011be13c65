"""Acceptance-aware early verdicts on partial evaluations."""

from __future__ import annotations

import numpy as np
import pytest

from evolve.selection.acceptance import CostAnchor, Evaluation
from evolve.selection.config import SelectionConfig
from evolve.selection.early import Partial, early_verdict, noise_band

Z = 2.326
IDS = [f"t{i}" for i in range(100)]
GOLD = {t: ("pos" if i % 2 else "neg") for i, t in enumerate(IDS)}


def ev(cid: str, correct: set[str], preds: dict[str, str], tokens: float = 100.0, novelty: int = 0) -> Evaluation:
    return Evaluation(candidate_id=cid, rewards={t: [1.0 if t in correct else 0.0] for t in IDS},
                      tokens_per_task=tokens, predictions=preds, novelty=novelty,
                      parsed_tasks=dict.fromkeys(IDS, 1.0), crashed_tasks=dict.fromkeys(IDS, 0.0))


INC = ev("inc", {t for i, t in enumerate(IDS) if i % 4 == 0}, {t: "neg" for t in IDS})


def verdict(cand: Evaluation, n: int, cfg: SelectionConfig | None = None, best: float = 0.25) -> str | None:
    return early_verdict(Partial(cand, INC, IDS[:n], IDS), gold=GOLD, best_ever=best, cfg=cfg or SelectionConfig(),
                         z=Z)


def test_collapse_is_seen_early_and_only_when_certain():
    collapsing = ev("c", {t for t in IDS if GOLD[t] == "pos"}, {t: "pos" for t in IDS})
    assert verdict(collapsing, 4) is None, "too few tasks for any verdict"
    stop = next(n for n in range(8, 101, 4) if verdict(collapsing, n))
    assert stop <= 24 and "collapse" in verdict(collapsing, stop)
    balanced = ev("b", set(IDS), dict(GOLD))
    assert all(verdict(balanced, n) is None for n in range(8, 101, 4))


def test_regression_and_no_gain_without_being_cheaper():
    worse = ev("w", set(), {})
    assert "regression" in verdict(worse, 60)
    same = ev("s", {t for t, v in INC.rewards.items() if v[0]}, {})
    why = verdict(same, 100)
    assert why and "cannot gain" in why
    cheaper = ev("c", {t for t, v in INC.rewards.items() if v[0]}, {}, tokens=50.0)
    assert verdict(cheaper, 100) is None, "a cheaper candidate within the band may be admissible"


def test_a_within_band_candidate_that_cannot_pay_for_its_loss_is_stopped():
    base = {t for t, v in INC.rewards.items() if v[0]}
    slightly_cheaper = ev("c", base - set(IDS[:24]), {}, tokens=97.0)
    why = verdict(slightly_cheaper, 40)
    assert why and "cannot beat the incumbent's objective" in why
    off = SelectionConfig.model_validate({"acceptance": {"beat_incumbent": False}})
    assert verdict(slightly_cheaper, 40, off) is None
    much_cheaper = ev("m", base - set(IDS[:4]), {}, tokens=50.0)
    assert verdict(much_cheaper, 40) is None, "a saving may still pay for a loss that small"


def test_cost_rule_and_greedy():
    better = ev("b", {t for i, t in enumerate(IDS) if i % 4 in (0, 1)}, {}, tokens=5000.0)
    assert "cost rule" in verdict(better, 60), "ΔC +49 on the relative scale"
    log = SelectionConfig.model_validate({"acceptance": {"cost_scale": "log"}})
    assert verdict(better, 60, log) is None, "ln 50 = 3.9 is within reach of its ΔS upper bound"
    dearer = ev("d", {t for i, t in enumerate(IDS) if i % 4 in (0, 1)}, {}, tokens=100.0 * 1e6)
    assert "cost rule cannot be met: ΔC +13.82" in verdict(dearer, 60, log)
    greedy = SelectionConfig.model_validate({"acceptance": {"greedy": True, "delta": 0.0}})
    assert verdict(better, 60, greedy) is None
    assert "cannot gain" in verdict(ev("w", set(), {}), 60, greedy)


@pytest.mark.parametrize("size", [5, 19])
def test_too_few_validation_tasks_is_known_at_once(size):
    cand = ev("c", set(IDS), dict(GOLD))
    why = early_verdict(Partial(cand, INC, IDS[:0], IDS[:size]), gold=GOLD, best_ever=0.0, cfg=SelectionConfig(),
                        z=Z)
    assert why and "validation tasks" in why


def test_a_candidate_moving_away_from_the_incumbents_collapse_is_not_stopped_for_it():
    # INC predicts "neg" everywhere; this one says "neg" on 80% and is right more often
    preds = {t: ("pos" if i % 10 in (1, 3) else "neg") for i, t in enumerate(IDS)}
    relieving = ev("r", {t for t in IDS if preds[t] == GOLD[t]}, preds)
    assert all(verdict(relieving, n) is None or "collapse" not in verdict(relieving, n) for n in range(8, 101, 4))
    strict = SelectionConfig.model_validate({"guards": {"collapse_relief": None}})
    assert any("collapse" in (verdict(relieving, n, strict) or "") for n in range(8, 101, 4))
    same = ev("s", {t for t in IDS if GOLD[t] == "neg"}, {t: "neg" for t in IDS})  # as collapsed as INC
    assert any("collapse" in (verdict(same, n) or "") for n in range(8, 101, 4))


def test_a_few_identical_answers_are_not_yet_a_certain_collapse():
    """8 of 8 answers 'pos' on a 60-task split: the exact bound on the final share is 62%, under the
    75% limit (a normal bound with a shrunk variance claimed 86% and stopped the candidate)."""
    ids = IDS[:60]
    gold = {t: GOLD[t] for t in ids}
    first = [t for t in ids if gold[t] == "pos"][:8]
    cand = ev("c", set(first), {t: "pos" for t in ids})
    inc = ev("inc", set(), {t: "neg" if i % 2 else "pos" for i, t in enumerate(ids)})
    seen = first
    assert early_verdict(Partial(cand, inc, seen, ids), gold=gold, best_ever=0.0, cfg=SelectionConfig(),
                         z=Z) is None
    twenty = [t for t in ids if gold[t] == "pos"][:20]
    why = early_verdict(Partial(cand, inc, twenty, ids), gold=gold, best_ever=0.0, cfg=SelectionConfig(), z=Z)
    assert why and "collapse" in why


def test_share_lower_bound_is_the_exact_binomial_bound():
    from evolve.selection.early import share_lower_bound
    assert share_lower_bound(8, 8, 8, Z) == pytest.approx(1.0)
    assert share_lower_bound(8, 8, 60, Z) == pytest.approx((8 + 52 * 0.01 ** (1 / 8)) / 60, abs=1e-3)
    assert share_lower_bound(0, 8, 60, Z) == 0.0
    assert share_lower_bound(4, 8, 60, Z) < 4 / 8


def test_a_few_ties_are_not_yet_a_certain_cost_rule_failure():
    """An 8-example set 4.7x as long as the incumbent, tied with it on the first 8 of 60 tasks: the
    cost rule asks ΔS >= 0.147, and the other 52 tasks may still differ in up to 48% of cases, so it
    is not stopped (a normal bound with a shrunk variance put ΔS under +0.14 and stopped it)."""
    import numpy as np

    from evolve.selection.early import diff_bounds, mean_bounds

    ids = IDS[:60]
    inc = ev("inc", {t for i, t in enumerate(ids) if i % 2}, {}, tokens=72.0)
    tied = ev("c", {t for i, t in enumerate(ids) if i % 2 and i < 8} | set(ids[8:]), {}, tokens=338.0)
    assert early_verdict(Partial(tied, inc, ids[:8], ids), gold=None, best_ever=0.5, cfg=SelectionConfig(),
                         z=Z) is None
    assert mean_bounds(np.zeros(8), 60, Z)[2] < 0.147 < diff_bounds(np.zeros(8), 60, Z)[2]
    much_dearer = ev("d", set(tied.rewards), {}, tokens=72.0 * 40)  # ΔC +39 needs ΔS >= 1.6: out of reach
    why = early_verdict(Partial(much_dearer, inc, ids[:8], ids), gold=None, best_ever=0.5, cfg=SelectionConfig(),
                        z=Z)
    assert why and "cost rule cannot be met" in why


def test_exact_bounds_hold_the_seen_tasks_and_bound_the_rest():
    import numpy as np

    from evolve.selection.early import diff_bounds, share_bounds

    d = np.array([1.0, -1.0, 0.0, 0.0])
    assert diff_bounds(d, 4, Z)[1:] == pytest.approx((0.0, 0.0)), "all tasks seen: the mean is exact"
    mean, low, high = diff_bounds(np.zeros(8), 60, Z)
    assert mean == 0 and low == pytest.approx(-high) and high == pytest.approx(52 * (1 - 0.005 ** (1 / 8)) / 60,
                                                                             abs=1e-3)
    assert share_bounds(np.ones(10), 10, Z)[1:] == pytest.approx((1.0, 1.0))
    _, low, high = share_bounds(np.array([1.0] * 5 + [0.0] * 5), 100, Z)
    assert 0.1 < low < 0.5 < high < 0.9


def test_the_floor_is_judged_paired_with_the_incumbent():
    """A run of hard first tasks, answered alike, does not stop a candidate at the floor: the
    incumbent, at best-ever, would fail the same unpaired test on them."""
    wrong = set(IDS[:4]) | set(IDS[50:56])
    good = ev("g", set(IDS) - wrong, {})
    alike = ev("a", set(IDS) - wrong, {})
    why = early_verdict(Partial(alike, good, IDS[:8], IDS), gold=GOLD, best_ever=0.9, cfg=SelectionConfig(), z=Z)
    assert why is None, why
    weak = ev("w", set(IDS[:50]), {})
    tied = ev("t", set(IDS[:50]), {}, tokens=50.0)
    why = early_verdict(Partial(tied, weak, IDS[:60], IDS), gold=GOLD, best_ever=0.95, cfg=SelectionConfig(), z=Z)
    assert why and why.startswith("floor"), "0.50 + a ΔS bound of +0.03 cannot reach 0.95 − δ"


def test_the_floor_falls_back_to_the_candidates_own_bound_without_the_incumbents_results():
    wrong = set(IDS[:4]) | set(IDS[50:56])
    seen = {t: [float(t not in wrong)] for t in IDS[:8]}
    partial_inc = Evaluation(candidate_id="inc", rewards=seen, tokens_per_task=100.0, predictions={}, novelty=0)
    cand = ev("a", set(IDS) - wrong, {})
    why = early_verdict(Partial(cand, partial_inc, IDS[:8], IDS), gold=GOLD, best_ever=0.9, cfg=SelectionConfig(),
                        z=Z)
    assert why and why.startswith("floor: S upper bound 0.849")


def test_the_rules_of_a_pooled_decision_are_bounded_over_the_pooled_tasks():
    """A decision on 40 validation tasks pooled with 60 fresh ones: the noise band, objective and cost
    rules are the pooled decision's (the fresh tasks not seen yet, δ over 100 tasks), so a candidate
    within the validation band is not ruled out before the fresh tasks are asked; guards and the
    regression stay validation rules."""
    ids = IDS[:40]
    inc = ev("inc", {t for i, t in enumerate(ids) if i % 2}, {}, tokens=100.0)
    gains, losses = {ids[i] for i in (0, 2, 4, 6)}, {ids[i] for i in (1, 3)}
    small = ev("s", ({t for i, t in enumerate(ids) if i % 2} | gains) - losses, {}, tokens=100.0)
    alone = early_verdict(Partial(small, inc, ids, ids), gold=None, best_ever=0.5, cfg=SelectionConfig(), z=Z)
    assert alone and "cannot gain beyond the noise band" in alone
    assert early_verdict(Partial(small, inc, ids, ids, 60), gold=None, best_ever=0.5, cfg=SelectionConfig(),
                         z=Z) is None
    worse = ev("w", set(), {}, tokens=100.0)
    why = early_verdict(Partial(worse, inc, ids[:20], ids, 60), gold=None, best_ever=0.5, cfg=SelectionConfig(), z=Z)
    assert why and why.startswith("regression")
    collapsing = ev("c", {t for t in ids if GOLD[t] == "pos"}, {t: "pos" for t in ids})
    why = early_verdict(Partial(collapsing, INC, ids, ids, 60), gold=GOLD, best_ever=0.0, cfg=SelectionConfig(), z=Z)
    assert why and "collapse" in why


def test_the_noise_band_is_z_sd_over_root_n_or_the_configured_constant():
    d = np.array([1.0, -1.0, 0.0, 0.0])
    bootstrap = SelectionConfig().acceptance
    assert noise_band(d, 16, bootstrap) == pytest.approx(bootstrap.delta_z * float(d.std(ddof=1)) / 4)
    assert noise_band(d, 64, bootstrap) == pytest.approx(noise_band(d, 16, bootstrap) / 2)
    assert noise_band(np.array([0.5]), 16, bootstrap) == 0.0
    fixed = bootstrap.model_copy(update={"delta": 0.07})
    assert noise_band(d, 16, fixed) == 0.07


def test_the_early_cost_rule_takes_the_seed_anchor_when_there_is_one():
    better = ev("b", {t for i, t in enumerate(IDS) if i % 4 in (0, 1)}, {}, tokens=5000.0)
    seen, cfg = IDS[:60], SelectionConfig()
    cheap_start = Partial(better, INC, seen, IDS, anchor=CostAnchor(tokens=1000.0, gain=0.20))
    assert early_verdict(cheap_start, gold=GOLD, best_ever=0.25, cfg=cfg, z=Z) is None, \
        "4.0 over the seed's tokens is within reach of 0.1 + 24.4·(upper bound + 0.20)"
    dear_start = Partial(better, INC, seen, IDS, anchor=CostAnchor(tokens=10.0, gain=0.0))
    why = early_verdict(dear_start, gold=GOLD, best_ever=0.25, cfg=cfg, z=Z)
    assert why.startswith("cost rule cannot be met: ΔC from the seed +499.00")
