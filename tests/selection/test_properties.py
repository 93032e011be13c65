"""Property tests: alignment statistic and acceptance invariants on random inputs."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from evolve.selection.acceptance import Evaluation, select
from evolve.selection.config import load_selection_preset
from evolve.selection.rubric import alignment

scores = st.lists(st.integers(0, 4).map(lambda v: v / 4), min_size=2, max_size=8)


@given(scores, st.data())
def test_alignment_is_bounded_and_antisymmetric(oracle, data):
    surrogate = data.draw(st.lists(st.integers(0, 4).map(lambda v: v / 4), min_size=len(oracle),
                                   max_size=len(oracle)))
    a = alignment(surrogate, oracle)
    if len(set(oracle)) < 2:
        assert a is None
        return
    assert -1.0 <= a <= 1.0
    assert alignment([-s for s in surrogate], oracle) == -a
    assert alignment(oracle, oracle) == 1.0


TASKS = [f"t{i}" for i in range(30)]
rewards = st.lists(st.sampled_from([0.0, 1.0]), min_size=30, max_size=30)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(rewards, st.floats(10, 300), st.integers(0, 2)), min_size=1, max_size=5), rewards,
       st.sampled_from(["rrsi", "unregularized"]))
def test_at_most_one_winner_and_it_is_admissible(cands, inc_rewards, preset):
    cfg = load_selection_preset(preset, {"guards.min_validation_tasks": 0, "acceptance.bootstrap_reps": 50})
    inc = Evaluation("inc", {t: [r] for t, r in zip(TASKS, inc_rewards, strict=True)}, tokens_per_task=100.0)
    evs = [Evaluation(f"c{i}", {t: [r] for t, r in zip(TASKS, rs, strict=True)}, tokens_per_task=tok, novelty=nu)
           for i, (rs, tok, nu) in enumerate(cands)]
    res = select(evs, inc, task_ids=TASKS, gold=None, best_ever=sum(inc_rewards) / 30, cfg=cfg,
                 rng=random.Random(0))
    accepted = [d for d in res.decisions if d.accepted]
    assert len(accepted) <= 1 and len(res.decisions) == len(evs)
    if accepted:
        assert accepted[0].admissible and accepted[0].candidate_id == res.winner_id
        best = max(d.stats["objective"] for d in res.decisions if d.admissible)
        assert accepted[0].stats["objective"] == best
    else:
        assert res.winner_id is None and not any(d.admissible for d in res.decisions)
    for d in res.decisions:
        if d.admissible and preset == "rrsi" and d.stats["dS"] > d.stats["delta"]:
            assert d.stats["dC"] <= cfg.acceptance.beta0 + cfg.acceptance.beta1 * d.stats["dS"] + 1e-9
