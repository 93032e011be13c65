"""Surrogate screen: which drafts get oracle rollouts.

Combines the rubric surrogate and the learned surrogate into one ranking of drafts and keeps the
top k. The rubric is trusted while it has no evidence against it (no alignment measured yet, or
a positive one) and while it separates the drafts at all; a small judge model often marks every
criterion met, and then its scores carry no information. Otherwise the learned surrogate ranks;
when both are usable, the rubric ranks and the learned surrogate breaks its ties. Without any
usable score, drafts are taken round-robin over their sources (`groups`: the LLM proposer and the
operators) in proposal order, so that neither fills every oracle slot and each keeps its own
priorities (the operators put their few-shot draws first).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import zip_longest


@dataclass(frozen=True)
class Screen:
    """The outcome of screening: indices of the drafts to evaluate, best first, and why."""

    chosen: list[int]
    """Indices into the drafts, best first (at most top_k)."""
    order: list[int]
    """All indices, best first."""
    basis: str
    """rubric | rubric+learned | learned | proposal order (round-robin over sources)."""


def rubric_usable(scores: Sequence[float] | None, agreement: float | None, tol: float = 1e-9) -> bool:
    """True when rubric scores exist, are not all equal, and the last measured agreement is not <= 0."""
    if not scores:
        return False
    if max(scores) - min(scores) <= tol:
        return False
    return agreement is None or agreement > 0


def round_robin(groups: Sequence[str]) -> list[int]:
    """Indices in proposal order, taking one draft of each source in turn (sources in order of first draft)."""
    by_group: dict[str, list[int]] = {}
    for index, group in enumerate(groups):
        by_group.setdefault(group, []).append(index)
    return [i for row in zip_longest(*by_group.values()) for i in row if i is not None]


def screen(n_drafts: int, top_k: int, *, rubric_scores: Sequence[float] | None = None,
           rubric_agreement: float | None = None, learned_scores: Sequence[float] | None = None,
           groups: Sequence[str] | None = None) -> Screen:
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
        rr = round_robin(groups) if groups is not None and len(groups) == n_drafts else list(range(n_drafts))
        key = [(0.0, float(rank), i) for rank, i in enumerate(rr)]
    order = [k[2] for k in sorted(key)]
    return Screen(chosen=order[:max(0, top_k)], order=order, basis=basis)
