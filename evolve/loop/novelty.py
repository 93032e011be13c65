"""Novelty seeking: structural novelty, stall detection, exploration directive, banned directions
and near-duplicate filtering.

- Structural novelty (RRSI): ν = number of structural component types (`STRUCTURAL`) in a candidate
  that have never been part of an accepted edit. An edit's type is its component, except that
  `control.flow.*` counts as `flow` and `control.skills_as` as `skill` (`edit_kind`).
- Stall (RRSI): with the incumbent's score trajectory S_0..S_t, σ_t = 1 iff t >= w and
  S_t − S_{t−w} <= ε.
- Exploration directive (RRSI): when stalled, proposal slots are RESERVED for components that no
  evaluated candidate has touched yet.
- Banned directions (SkillLift's novelty keys): the keys of the edits of a candidate that was
  evaluated and not accepted are banned from later rounds, as one combination
  (`evolve.loop.bans`).
- Near duplicates: a draft whose edits are nearly the same as every edit of an earlier candidate
  (same component; cosine of the selection module's hashed n-gram vectors for text) is dropped
  before any evaluation.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from evolve.harness import COMPONENTS, Edit
from evolve.selection.features import text_vector

STRUCTURAL: tuple[str, ...] = ("skill", "tool", "memory", "context", "flow")
"""Component types that add machinery (rather than rewording it)."""


def edit_kind(edit: Edit) -> str:
    """The structural type of an edit: its component, `flow` for `control.flow.*`, `skill` for
    `control.skills_as`.

    >>> edit_kind(Edit(op="set", component="control", target="flow.plan_then_act", value=True))
    'flow'
    """
    target = str(edit.target or "")
    if edit.component == "control" and target.startswith("flow."):
        return "flow"
    if edit.component == "control" and target == "skills_as":
        return "skill"
    return edit.component


def structural_novelty(components: Iterable[str | Edit], accepted_counts: Mapping[str, int]) -> int:
    """Number of distinct structural types in `components` (component names, or edits: see `edit_kind`)
    never part of an accepted edit.

    >>> structural_novelty(["tool", "system"], {"system": 1})
    1
    >>> structural_novelty(["skill"], {"skill": 2})
    0
    >>> structural_novelty([Edit(op="set", component="memory", target="scope", value="turns")], {})
    1
    """
    kinds = {edit_kind(c) if isinstance(c, Edit) else c for c in components}
    return sum(1 for c in kinds if c in STRUCTURAL and accepted_counts.get(c, 0) == 0)


def stalled(scores: Sequence[float], window: int, eps: float) -> bool:
    """True iff the score trajectory gained at most `eps` over the last `window` rounds.

    `scores[t]` is the incumbent's score after round t; with fewer than `window + 1` scores there is
    not enough history and the answer is False.
    """
    if window < 1 or len(scores) <= window:
        return False
    return scores[-1] - scores[-1 - window] <= eps + 1e-12  # float noise must not break a tie


class Directive(BaseModel):
    """The exploration directive handed to the proposer."""

    model_config = ConfigDict(extra="forbid")

    untried: list[str] = Field(default_factory=list)
    """Components no evaluated candidate has touched (only listed when stalled)."""
    reserved_slots: int = 0
    """Proposal slots reserved for untried components."""
    text: str = ""
    """Instruction for the proposer (empty when not stalled)."""

    @property
    def active(self) -> bool:
        return bool(self.text)


def exploration_directive(is_stalled: bool, tried: Iterable[str], all_components: Sequence[str] = COMPONENTS,
                          slots: int = 1) -> Directive:
    """The directive for this round: nothing unless stalled; then RESERVED slots for untried components."""
    if not is_stalled:
        return Directive()
    tried_set = set(tried)
    untried = [c for c in all_components if c not in tried_set]
    if not untried:
        return Directive(text="The score has stalled: change a different mechanism than the edits tried so far.")
    reserved = max(0, min(slots, len(untried)))
    text = (f"The score has stalled. RESERVED: {reserved} proposal slot(s) must change a component that was "
            f"never tried: {', '.join(untried)}.")
    return Directive(untried=untried, reserved_slots=reserved, text=text)


def _digest(value: object) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


def novelty_key(edit: Edit) -> str:
    """The direction an edit explores: `component:op:target`, plus the value for control, memory and
    context fields and the input's digest for examples (an example's identity is its content, not its
    index; a whole example set is its size and the digest of its inputs, so another draw is another
    direction).

    >>> novelty_key(Edit(op="set", component="control", target="samples", value=3))
    'control:set:samples=3'
    """
    if edit.component in ("control", "memory", "context"):
        return f"{edit.component}:set:{edit.target}={json.dumps(edit.value, sort_keys=True)}"
    if edit.component == "example" and edit.op == "set":
        inputs = [v.get("input") for v in edit.value if isinstance(v, dict)] if isinstance(edit.value, list) else []
        return f"example:set:{len(inputs)}:{_digest(inputs)}"
    if edit.component == "example":
        value = edit.value if isinstance(edit.value, dict) else {}
        ident = _digest(value.get("input")) if edit.op != "remove" else str(edit.target)
        return f"example:{edit.op}:{ident}"
    if edit.component == "tool" and edit.op == "add" and isinstance(edit.value, dict):
        return f"tool:add:{edit.value.get('name')}"
    return f"{edit.component}:{edit.op}:{edit.target}"


@lru_cache(maxsize=8192)
def _vector(text: str) -> np.ndarray:
    return text_vector(text)


def similarity(a: str, b: str) -> float:
    """Cosine similarity of the selection module's hashed n-gram vectors (cached per text)."""
    return float(np.dot(_vector(a), _vector(b)))


_EXACT_ONLY = ("control", "example", "memory", "context")
"""Components whose edits are only duplicates when identical (short values, template-like inputs)."""


def near_duplicate(edit: Edit, previous_edits: Iterable[Edit], threshold: float = 0.9) -> str | None:
    """What `edit` duplicates among `previous_edits` (same component), or None.

    Identical edits (same op, component, target and value) are always duplicates; for text
    components (system, skill, tool) an edit whose introduced text has similarity >= `threshold`
    with an earlier edit's text is one too. Edits without text (removals) are compared exactly.
    """
    text = edit.text()
    for prev in previous_edits:
        if prev.component != edit.component:
            continue
        if (prev.op, prev.target, prev.value) == (edit.op, edit.target, edit.value):
            return f"identical to earlier edit '{prev.summary()}'"
        if edit.component in _EXACT_ONLY or not text or prev.op == "remove" or edit.op == "remove":
            continue
        prev_text = prev.text()
        if not prev_text:
            continue
        score = similarity(text, prev_text)
        if score >= threshold:
            return f"near-duplicate ({score:.2f}) of earlier edit '{prev.summary()}'"
    return None
