from __future__ import annotations

import itertools
import json

import pytest

from evolve.errors import ConfigError
from evolve.loop.budget import VolatilityDamper, edit_budget, round_budget


def test_schedule_b_max_3_is_three_then_two():
    assert [edit_budget(t, 20, 1, 3) for t in range(20)] == [3] * 10 + [2] * 10


def test_schedule_b_max_4_matches_rrsi():
    assert [edit_budget(t, 20, 1, 4) for t in range(20)] == [4] * 8 + [3] * 5 + [2] * 7


def test_schedule_endpoints_and_monotone():
    values = [edit_budget(t, 7, 2, 6) for t in range(8)]
    assert values[0] == 6 and values[-1] == 2
    assert all(a >= b for a, b in itertools.pairwise(values))
    assert edit_budget(50, 7, 2, 6) == 2  # t beyond T is clipped


def test_fixed_budget_and_bad_bounds():
    assert {edit_budget(t, 10, 5, 5) for t in range(10)} == {5}
    with pytest.raises(ConfigError, match="b_min"):
        edit_budget(0, 10, 3, 2)


def test_damper_follows_skilladam_formula():
    d = VolatilityDamper(beta=0.9, v_max=0.1)
    assert d.damp(3, 1) == 3  # no volatility yet
    d.update([1.0, 0.0, -1.0, 0.0])  # sample variance 2/3
    assert d.v == pytest.approx(0.1 * (2 / 3))
    # ratio = 0.0667/0.1 -> round(3 * 0.333) = 1
    assert d.damp(3, 1) == 1
    d.update([0.5])  # one task: variance 0
    assert d.v == pytest.approx(0.9 * 0.1 * (2 / 3))
    assert d.damp(4, 2) == max(2, round(4 * (1 - min(d.v / 0.1, 1))))


def test_damper_never_below_b_min_and_round_trip():
    d = VolatilityDamper(v_max=0.01)
    for _ in range(5):
        d.update([1.0, -1.0])
    assert d.damp(5, 2) == 2
    restored = VolatilityDamper.from_json(d.to_json())
    assert restored == d
    assert VolatilityDamper.from_json(json.loads(d.to_json())) == d
    assert round_budget(0, 10, 2, 5, restored) == 2
    assert round_budget(0, 10, 2, 5) == 5


def test_damper_bad_state_is_a_user_error():
    with pytest.raises(ConfigError, match="beta"):
        VolatilityDamper.from_json('{"beta": 3}')
