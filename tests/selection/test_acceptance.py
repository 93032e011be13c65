from __future__ import annotations

import math
import random

import numpy as np
import pytest

from evolve.selection.acceptance import CostAnchor, Evaluation, cost_change, score, seed_anchor, select
from evolve.selection.config import SelectionConfig, load_selection_preset

N = 100
TASKS = [f"t{i}" for i in range(N)]


def ev(cid: str, solved: int, *, tokens: float = 100.0, novelty: int = 0, offset: int = 0, **kw) -> Evaluation:
    """Binary rewards: tasks offset..offset+solved-1 (mod N) solved."""
    solved_ids = {TASKS[(offset + i) % N] for i in range(solved)}
    return Evaluation(cid, {t: [1.0 if t in solved_ids else 0.0] for t in TASKS}, tokens_per_task=tokens,
                      novelty=novelty, **kw)


def cfg(**acceptance) -> SelectionConfig:
    base = {"acceptance.delta": 0.05, "guards.min_validation_tasks": 0}
    base.update({f"acceptance.{k}": v for k, v in acceptance.items()})
    return load_selection_preset("rrsi", base)


def decide(cands, inc, *, best_ever=None, config=None, gold=None):
    res = select(cands, inc, task_ids=TASKS, gold=gold, best_ever=best_ever if best_ever is not None else
                 score(inc, TASKS), cfg=config or cfg(), rng=random.Random(0))
    return res, {d.candidate_id: d for d in res.decisions}


def test_score_counts_missing_and_crashed_trials_as_zero_with_full_denominator():
    assert score(Evaluation("x", {"a": [1, 0], "b": [1, 1]}), ["a", "b"]) == 0.75
    assert score(Evaluation("x", {"a": [1], "b": [1, 1]}), ["a", "b"]) == 0.75
    assert score(Evaluation("x", {"a": [1, math.nan], "b": [1, 1]}), ["a", "b"]) == 0.75
    assert score(Evaluation("x", {"a": [1, 1]}), ["a", "b"]) == 0.5
    assert score(Evaluation("x", {"a": [1, 1]}), ["a", "b"], trials=4) == 0.25


def test_floor_relative_to_best_ever():
    # RRSI test case: incumbent 0.5, best-ever 0.55, delta 0.05 -> 0.7 and 0.6 admissible, 0.3 not
    inc = ev("inc", 50)
    res, d = decide([ev("a", 70), ev("b", 60), ev("c", 30)], inc, best_ever=0.55, config=cfg(beta1=40.0))
    assert d["a"].admissible and d["b"].admissible
    assert not d["c"].admissible and d["c"].stats["rule"] == "floor"
    assert d["c"].stats["floor"] == pytest.approx(0.50)
    assert res.winner_id == "a" and d["a"].accepted and not d["b"].accepted
    assert d["b"].reason.startswith("admissible but not best")


def test_floor_rejects_a_within_band_candidate_below_best_ever_minus_delta():
    inc = ev("inc", 50)
    _, d = decide([ev("a", 50, tokens=50)], inc, best_ever=0.60)
    assert d["a"].stats["rule"] == "floor"
    _, d = decide([ev("a", 50, tokens=50)], inc, best_ever=0.55, config=cfg(band_lower_bound=False))
    assert d["a"].stats["rule"] == "neutral-cheaper"


def test_cost_rule_for_gainers():
    # RRSI's test case on its relative scale: dS = 0.05 allows dC up to 0.10 + 40 * 0.05 = 2.10
    config = cfg(delta=0.02, beta0=0.10, beta1=40.0)
    inc = ev("inc", 50, tokens=100)
    _, d = decide([ev("ok", 55, tokens=100 * 3.05), ev("dear", 55, tokens=100 * 3.2)], inc, config=config)
    assert d["ok"].admissible and d["ok"].stats["allowed_dC"] == pytest.approx(2.10)
    assert not d["dear"].admissible and d["dear"].stats["rule"] == "cost"
    assert "2.10" in d["dear"].reason
    _, d = decide([ev("dear", 55, tokens=100 * 3.2)], inc, config=cfg(delta=0.02, beta1=40.0, cost_rule=False))
    assert d["dear"].accepted


def test_within_band_rules():
    inc = ev("inc", 50, tokens=100)
    cands = [ev("cheaper", 50, tokens=80), ev("costlier", 50, tokens=130),
             ev("novel", 50, tokens=100, novelty=1), ev("plain", 50, tokens=100),
             ev("novel_but_costlier", 50, tokens=130, novelty=1)]
    _, d = decide(cands, inc, config=cfg(band_lower_bound=False))
    assert d["cheaper"].admissible and d["cheaper"].stats["rule"] == "neutral-cheaper"
    assert d["novel"].admissible and d["novel"].stats["rule"] == "neutral-novel"
    for name in ("costlier", "plain", "novel_but_costlier"):
        assert not d[name].admissible and d[name].stats["rule"] == "band"
    _, d = decide(cands, inc, config=cfg(within_band=False))
    assert not any(x.admissible for x in d.values())


def test_a_within_band_loss_must_be_paid_for_by_its_saving():
    # delta 0.10: a 5-point loss is within the band. 3% fewer tokens: objective 100*-0.05 - 2*-0.03 < 0.
    inc = ev("inc", 60, tokens=100)
    small_saving = ev("small_saving", 55, tokens=97)
    big_saving = ev("big_saving", 60, tokens=40)
    res, d = decide([small_saving, big_saving], inc, config=cfg(delta=0.10, band_lower_bound=False))
    assert not d["small_saving"].admissible and d["small_saving"].stats["rule"] == "objective"
    assert "objective -4.94 <= 0" in d["small_saving"].reason
    assert d["big_saving"].admissible and res.winner_id == "big_saving"
    res, d = decide([small_saving], inc, config=cfg(delta=0.10))
    assert res.winner_id is None, "the incumbent (objective 0) beats a candidate with a negative objective"
    res, d = decide([small_saving], inc, config=cfg(delta=0.10, beat_incumbent=False))
    assert res.winner_id == "small_saving" and d["small_saving"].stats["rule"] == "neutral-cheaper"


def test_a_within_band_swap_must_pay_for_the_loss_the_band_allows():
    # The same score on 100 tasks, 10 of them answered differently: the band (2 SE of the paired
    # differences) allows a loss of about 6 points, which 42% fewer tokens (0.84 points) do not pay for.
    config = cfg(delta="bootstrap")
    inc = ev("inc", 90, tokens=346)
    swap = ev("swap", 90, tokens=200, offset=5)
    res, d = decide([swap], inc, config=config)
    assert d["swap"].stats["dS"] == pytest.approx(0.0) and d["swap"].stats["delta"] > 0.04
    assert not d["swap"].admissible and d["swap"].stats["rule"] == "objective" and res.winner_id is None
    assert "at the band's low end" in d["swap"].reason
    res, d = decide([swap], inc, config=cfg(delta="bootstrap", band_lower_bound=False))
    assert res.winner_id == "swap" and d["swap"].stats["rule"] == "neutral-cheaper"
    # The same answers on all 100 tasks: the bootstrap band is 0, but the low end counts one more
    # task answered differently (2 SE = 2/100): 100 * -0.02 + 2 * 0.42 < 0, so still refused ...
    res, d = decide([ev("same", 90, tokens=200)], inc, config=config)
    assert d["same"].stats["delta"] == 0 and res.winner_id is None
    assert d["same"].stats["rule"] == "objective" and "ΔS = -0.020" in d["same"].reason
    # ... while on 1,000 tasks (low end -0.002) the same saving pays for it.
    many = [f"u{i}" for i in range(1000)]
    inc_many = Evaluation("inc", {t: [1.0] for t in many}, tokens_per_task=346)
    same_many = Evaluation("same", {t: [1.0] for t in many}, tokens_per_task=200)
    res = select([same_many], inc_many, task_ids=many, gold=None, best_ever=1.0, cfg=config, rng=random.Random(0))
    assert res.winner_id == "same" and res.decisions[0].stats["rule"] == "neutral-cheaper"


def test_regression_is_rejected():
    _, d = decide([ev("worse", 40)], ev("inc", 50), best_ever=0.4)
    assert d["worse"].stats["rule"] == "regression" and not d["worse"].accepted


def test_winner_maximizes_the_objective():
    # w_s=100, w_c=2, w_n=0.5: big = 100*0.2 - 2*1.0 = 18; lean = 100*0.15 - 2*(-0.1) = 15.2; novel 15 + 0.5*2
    inc = ev("inc", 50, tokens=100)
    cands = [ev("big", 70, tokens=200), ev("lean", 65, tokens=90), ev("novel", 65, tokens=100, novelty=2)]
    res, d = decide(cands, inc)
    assert d["big"].stats["objective"] == pytest.approx(18.0)
    assert d["lean"].stats["objective"] == pytest.approx(15.2)
    assert d["novel"].stats["objective"] == pytest.approx(16.0)
    assert res.winner_id == "big"
    res, _ = decide(cands, inc, config=cfg(w_c=10.0))  # cost weighs more: lean wins (15 + 1 = 16 > 10)
    assert res.winner_id == "lean"
    # on the log scale: big = 20 - 2*ln 2 = 18.61, lean = 15 - 2*ln 0.9 = 15.21
    _, d = decide(cands, inc, config=cfg(cost_scale="log"))
    assert d["big"].stats["objective"] == pytest.approx(20 - 2 * math.log(2))
    assert d["lean"].stats["objective"] == pytest.approx(15 - 2 * math.log(0.9))


def test_no_admissible_candidate_keeps_the_incumbent():
    res, d = decide([ev("a", 50), ev("b", 45)], ev("inc", 50), best_ever=0.5)
    assert res.winner_id is None and not any(x.accepted for x in d.values())


def test_guards_are_non_compensatory():
    gold = {t: ("no" if i < 55 else "yes") for i, t in enumerate(TASKS)}
    inc = ev("inc", 50, predictions={t: ("no" if i % 2 else "yes") for i, t in enumerate(TASKS)})
    collapsed = ev("collapsed", 55, offset=0, predictions=dict.fromkeys(TASKS, "No"))
    res, d = decide([collapsed], inc, gold=gold, config=cfg(delta=0.02))
    assert not d["collapsed"].admissible and d["collapsed"].stats["rule"] == "guard"
    assert "collapse" in d["collapsed"].reason and res.winner_id is None
    res, _ = decide([collapsed], inc, gold=gold, config=cfg(delta=0.02, **{}) .model_copy(
        update={"guards": SelectionConfig().guards.model_copy(update={"enabled": False})}))
    assert res.winner_id == "collapsed"


def test_too_few_validation_tasks_blocks_acceptance():
    config = load_selection_preset("rrsi", {"acceptance.delta": 0.05, "guards.min_validation_tasks": 200})
    res, d = decide([ev("a", 90)], ev("inc", 50), config=config)
    assert res.winner_id is None and "at least 200" in d["a"].reason


def test_greedy_unregularized_accepts_any_strict_gain_regardless_of_cost():
    config = load_selection_preset("unregularized")
    inc = ev("inc", 50, tokens=100)
    res, d = decide([ev("tiny_but_6x", 51, tokens=600), ev("same", 50)], inc, config=config, best_ever=0.9)
    assert res.winner_id == "tiny_but_6x"
    assert not d["same"].admissible and d["same"].stats["rule"] == "no-gain"
    # the same candidate fails the RRSI rule: +0.01 is inside the noise band, and costlier
    res, _ = decide([ev("tiny_but_6x", 51, tokens=600)], inc, config=cfg(delta="bootstrap"))
    assert res.winner_id is None


def test_bootstrap_band_is_two_standard_errors_of_the_paired_difference():
    inc = ev("inc", 50)
    # candidate flips 30 tasks: solves 20 the incumbent fails, fails 10 it solves -> dS = +0.10
    rewards = {t: list(v) for t, v in inc.rewards.items()}
    for i in range(50, 70):
        rewards[TASKS[i]] = [1.0]
    for i in range(0, 10):
        rewards[TASKS[i]] = [0.0]
    cand = Evaluation("flip", rewards, tokens_per_task=100.0)
    config = cfg(delta="bootstrap", bootstrap_reps=2000)
    _, d = decide([cand, ev("same", 50)], inc, config=config)
    diffs = np.array([rewards[t][0] - inc.rewards[t][0] for t in TASKS])
    analytic = 2 * diffs.std(ddof=0) / math.sqrt(N)
    assert d["flip"].stats["dS"] == pytest.approx(0.10)
    assert d["flip"].stats["delta"] == pytest.approx(analytic, rel=0.1)
    lo, hi = d["flip"].stats["ci_dS"]
    assert lo < 0.10 < hi
    assert d["same"].stats["delta"] == 0.0 and d["same"].stats["rule"] == "band"
    again = select([cand], inc, task_ids=TASKS, gold=None, best_ever=0.5, cfg=config, rng=random.Random(0))
    assert again.decisions[0].stats["delta"] == d["flip"].stats["delta"]


def test_decisions_are_storable():
    res, _ = decide([ev("a", 70, tokens=0.0)], ev("inc", 50, tokens=0.0))
    dumped = res.model_dump(mode="json")
    assert dumped["winner_id"] == "a"
    assert set(dumped["decisions"][0]["stats"]) >= {"S", "dS", "dC", "delta", "floor", "ci_dS", "guards",
                                                   "objective", "novelty"}


def test_log_cost_scale_lets_a_gain_leave_a_very_cheap_incumbent():
    """62 → 620 tokens per task for +15 points: a relative change of +9.0 exceeds 0.10 + 24.4·0.15 = 3.76,
    its log ratio ln 10 = 2.30 does not. Near the incumbent's size the two scales agree."""
    inc = ev("inc", 50, tokens=62)
    big = ev("big", 65, tokens=620)
    _, d = decide([big], inc, config=cfg(delta=0.05))
    assert d["big"].stats["rule"] == "cost" and d["big"].stats["dC"] == pytest.approx(9.0)
    res, d = decide([big], inc, config=cfg(delta=0.05, cost_scale="log"))
    assert res.winner_id == "big" and d["big"].stats["dC"] == pytest.approx(math.log(10))
    near = ev("near", 65, tokens=62 * 1.1)
    _, rel = decide([near], inc, config=cfg(delta=0.05))
    _, log = decide([near], inc, config=cfg(delta=0.05, cost_scale="log"))
    assert abs(rel["near"].stats["dC"] - log["near"].stats["dC"]) < 0.01


def test_log_cost_adds_up_along_a_path():
    """8× in one step costs what three doublings cost; the relative scale charges the jump 7.0 and the steps 3.0."""
    one_step = cost_change(800.0, 100.0, "log")
    steps = sum(cost_change(100.0 * 2 ** (i + 1), 100.0 * 2 ** i, "log") for i in range(3))
    assert one_step == pytest.approx(steps) == pytest.approx(math.log(8))
    assert cost_change(800.0, 100.0, "relative") == pytest.approx(7.0)
    assert sum(cost_change(100.0 * 2 ** (i + 1), 100.0 * 2 ** i, "relative") for i in range(3)) == pytest.approx(3.0)
    assert cost_change(50.0, 100.0, "log") == pytest.approx(-cost_change(100.0, 50.0, "log"))


def decide_anchored(cands, inc, anchor, config=None):
    res = select(cands, inc, task_ids=TASKS, gold=None, best_ever=score(inc, TASKS), cfg=config or cfg(),
                 rng=random.Random(0), anchor=anchor)
    return {d.candidate_id: d for d in res.decisions}


def test_a_seed_anchor_lets_a_gain_leave_a_cheap_incumbent_that_gained_over_the_seed():
    # the incumbent (50 tokens) already gained 0.30 over the seed (100 tokens); the candidate gains 0.10 more
    # at 400 tokens: 7.0 over the incumbent's tokens, more than 0.1 + 24.4·0.10 = 2.54, but 3.0 over the
    # seed's, within 0.1 + 24.4·(0.10 + 0.30) = 9.86
    inc, cand = ev("inc", 50, tokens=50), ev("c", 60, tokens=400)
    d = decide_anchored([cand], inc, None)["c"]
    assert not d.admissible and d.stats["rule"] == "cost" and "dC_seed" not in d.stats
    d = decide_anchored([cand], inc, CostAnchor(tokens=100, gain=0.30))["c"]
    assert d.accepted and d.stats["rule"] == "gain"
    assert d.stats["dC_seed"] == pytest.approx(3.0) and d.stats["allowed_dC"] == pytest.approx(9.86)
    assert d.stats["seed_gain"] == pytest.approx(0.30) and d.stats["dC"] == pytest.approx(7.0)
    assert "from the seed=+3.00" in d.reason
    # the objective prices the step in the seed's tokens: 100·0.10 − 2·(400 − 50)/100 = 3.0, not 100·0.10 − 2·7.0
    assert d.stats["dC_objective"] == pytest.approx(3.5) and d.stats["objective"] == pytest.approx(3.0)


def test_a_seed_anchor_refuses_tokens_no_gain_over_the_seed_paid_for():
    # the incumbent costs 3× the seed's tokens for no gain over it; a small gain at +33% over the incumbent
    # passes the incumbent-relative rule (0.33 <= 0.1 + 24.4·0.06) but not from the seed (3.0 > 1.56)
    inc, cand = ev("inc", 50, tokens=300), ev("c", 56, tokens=400)
    assert decide_anchored([cand], inc, None)["c"].accepted
    d = decide_anchored([cand], inc, CostAnchor(tokens=100, gain=0.0))["c"]
    assert not d.admissible and d.stats["rule"] == "cost"
    assert "cost rule: ΔC from the seed=+3.00 > 0.1+24.4·(ΔS +0.060 + the incumbent's gain over the seed +0.000)" \
        in d.reason


def test_under_a_seed_anchor_a_within_band_saving_is_priced_in_the_seeds_tokens():
    # 300 -> 20 tokens at ΔS = 0 (band low end −0.05): from the incumbent's tokens the saving is worth
    # 2·0.93 < 5 points, in the seed's (100) 2·2.8 = 5.6 > 5
    inc, cheaper = ev("inc", 50, tokens=300), ev("c", 50, tokens=20)
    d = decide_anchored([cheaper], inc, None)["c"]
    assert not d.admissible and d.stats["rule"] == "objective"
    d = decide_anchored([cheaper], inc, CostAnchor(tokens=100, gain=0.0))["c"]
    assert d.accepted and d.stats["rule"] == "neutral-cheaper"
    assert d.stats["dC"] == pytest.approx(-280 / 300) and d.stats["dC_objective"] == pytest.approx(-2.8)


def test_seed_anchor_measures_the_incumbents_gain_on_the_decision_tasks():
    seed, inc = ev("seed", 20, tokens=80), ev("inc", 45, tokens=40)
    anchor = seed_anchor(seed, inc, TASKS)
    assert anchor.tokens == 80 and anchor.gain == pytest.approx(0.25)
    assert seed_anchor(seed, inc, TASKS[:20]).gain == pytest.approx(0.0)
