"""The edit budget: RRSI's annealed schedule with SkillAdam's optional volatility damping.

RRSI anneals the number of edits a candidate may bundle with a cosine schedule,
`b_t = ceil(b_min + (b_max - b_min) * (1 + cos(pi * t / T)) / 2)`, so early rounds explore with
large candidates and late rounds refine with small ones (b_0 = b_max, non-increasing, b_T = b_min).

SkillAdam's second moment shrinks the budget when outcomes are volatile: after each evaluated
candidate, `v <- beta * v + (1 - beta) * var(per-task deltas)` (sample variance, 0 with fewer than
two tasks), and the budget becomes `max(b_min, round(b_t * (1 - clip(v / v_max, 0, 1))))`.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evolve.errors import ConfigError, describe_validation

_EPS = 1e-9
"""Guards `ceil` against floating-point noise (cos(pi/2) is 6e-17, not 0)."""


def edit_budget(t: int, T: int, b_min: int = 1, b_max: int = 3) -> int:  # noqa: N803 (paper notation)
    """RRSI cosine budget for round `t` of `T` (t is clipped to 0..T).

    >>> [edit_budget(t, 20) for t in (0, 9, 10, 19)]
    [3, 3, 2, 2]
    """
    if b_min < 1 or b_max < b_min:
        raise ConfigError(f"edit budget: need 1 <= b_min <= b_max, got b_min={b_min}, b_max={b_max}")
    if T <= 0:
        return b_max
    t = min(max(t, 0), T)
    value = b_min + (b_max - b_min) * (1 + math.cos(math.pi * t / T)) / 2
    return max(b_min, math.ceil(value - _EPS))


class VolatilityDamper(BaseModel):
    """SkillAdam's second moment: an EMA of the variance of per-task deltas that shrinks the budget."""

    model_config = ConfigDict(extra="forbid")

    beta: float = Field(0.9, ge=0.0, lt=1.0)
    """EMA decay of the volatility."""
    v_max: float = Field(0.05, gt=0.0)
    """Volatility at which the budget falls to b_min."""
    v: float = 0.0
    """Current volatility estimate."""
    updates: int = 0
    """Number of updates so far."""

    def update(self, deltas: Sequence[float]) -> float:
        """Fold in the per-task deltas (candidate − incumbent) of one evaluated candidate; return v."""
        variance = statistics.variance(deltas) if len(deltas) >= 2 else 0.0
        self.v = self.beta * self.v + (1 - self.beta) * variance
        self.updates += 1
        return self.v

    def damp(self, b_t: int, b_min: int = 1) -> int:
        """The damped budget `max(b_min, round(b_t * (1 - clip(v / v_max, 0, 1))))`."""
        ratio = min(max(self.v / self.v_max, 0.0), 1.0)
        return max(b_min, round(b_t * (1 - ratio)))

    def to_json(self) -> str:
        """Serialize (for resume)."""
        return self.model_dump_json()

    @classmethod
    def from_json(cls, data: str | bytes | dict) -> VolatilityDamper:
        """Restore a damper written by `to_json` (its text, or that text parsed into a dict)."""
        try:
            return cls.model_validate(data) if isinstance(data, dict) else cls.model_validate_json(data)
        except ValidationError as exc:
            raise ConfigError(describe_validation(exc, "volatility damper state")) from None


def round_budget(t: int, T: int, b_min: int, b_max: int, damper: VolatilityDamper | None = None) -> int:  # noqa: N803
    """The budget of round `t`: the cosine schedule, damped when a damper is given."""
    b_t = edit_budget(t, T, b_min, b_max)
    return damper.damp(b_t, b_min) if damper is not None else b_t
