"""Surrogate screen: which drafts get oracle rollouts.

Combines the rubric surrogate and the learned surrogate into one ranking of drafts and keeps the
top k. The rubric is trusted while it has no evidence against it (no alignment measured yet, or
a positive one) and while it separates the drafts at all; a small judge model often marks every
criterion met, and then its scores carry no information. Otherwise the learned surrogate ranks;
when both are usable, the rubric ranks and the learned surrogate breaks its ties. Drafts without
any usable score keep their proposal order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Screen:
    """The outcome of screening: indices of the drafts to evaluate, best first, and why."""

    chosen: list[int]
    """Indices into the drafts, best first (at most top_k)."""
    order: list[int]
    """All indices, best first."""
    basis: str
    """rubric | rubric+learned | learned | proposal order."""


def rubric_usable(scores: Sequence[float] | None, agreement: float | None, tol: float = 1e-9) -> bool:
    """True when rubric scores exist, are not all equal, and the last measured agreement is not <= 0."""
    if not scores:
        return False
    if max(scores) - min(scores) <= tol:
        return False
    return agreement is None or agreement > 0


def screen(n_drafts: int, top_k: int, *, rubric_scores: Sequence[float] | None = None,
           rubric_agreement: float | None = None, learned_scores: Sequence[float] | None = None) -> Screen:
    """Rank `n_drafts` drafts by the usable surrogates and keep the best `top_k`."""
    for name, values in (("rubric_scores", rubric_scores), ("learned_scores", learned_scores)):
        if values is not None and len(values) != n_drafts:
            raise ValueError(f"{name} has {len(values)} values for {n_drafts} drafts")
    use_rubric = rubric_usable(rubric_scores, rubric_agreement)
    use_learned = bool(learned_scores) and max(learned_scores or [0]) - min(learned_scores or [0]) > 1e-12
    if use_rubric and use_learned:
        basis = "rubric+learned"
        key = [(-rubric_scores[i], -learned_scores[i], i) for i in range(n_drafts)]  # type: ignore[index]
    elif use_rubric:
        basis = "rubric"
        key = [(-rubric_scores[i], 0.0, i) for i in range(n_drafts)]  # type: ignore[index]
    elif use_learned:
        basis = "learned"
        key = [(-learned_scores[i], 0.0, i) for i in range(n_drafts)]  # type: ignore[index]
    else:
        basis = "proposal order"
        key = [(0.0, 0.0, i) for i in range(n_drafts)]
    order = [k[2] for k in sorted(key)]
    return Screen(chosen=order[:max(0, top_k)], order=order, basis=basis)
