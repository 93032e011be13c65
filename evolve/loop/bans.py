"""Banned directions, keyed on what an edit means rather than where it lands.

A candidate that was evaluated and not accepted bans the direction of each of its edits for
`ban_rounds` rounds (0: for good). A direction is

- for control settings and demonstrations: the exact novelty key (`control:set:samples=3`, the
  digest of the examples drawn), so another value or another draw is another direction;
- for text components (system sections, skills, tools, memory, context): the edit's hypothesis
  plus its normalized diff (op, component, target, introduced text), and a new edit of the same
  component repeats a banned direction when the text similarity of the two reaches
  `ban_similarity`. A refinement of a component whose last edit lost is therefore allowed when its
  hypothesis or its text differs enough.

A candidate is banned as the combination it tried: the edits of one rejected candidate form one
group, and a later draft repeats it only when each of the group's directions is matched by one of
the draft's edits. A rejected pair (a draw of examples plus a move of the examples into the system
prompt) therefore bans neither the move on its own nor the move paired with another draw; a
rejected single edit bans every draft that contains it.

Expired bans stop matching, and so do earlier identical edits older than the ban window: the
incumbent has moved on since, so the same edit may now do something else.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import groupby

from pydantic import BaseModel, ConfigDict

from evolve.harness import Edit
from evolve.loop.novelty import novelty_key, similarity

EXACT = ("control", "example")
"""Components whose directions are exact (values and draws), not textual."""


class Ban(BaseModel):
    """One banned direction."""

    model_config = ConfigDict(extra="forbid")

    key: str
    """The edit's novelty key (its structural address, plus value or digest)."""
    component: str
    text: str
    """Hypothesis + normalized diff (what similarity is measured on)."""
    round: int
    """Round of the rejection."""
    candidate_id: str = ""


def direction_text(edit: Edit) -> str:
    """The edit's direction: hypothesis plus normalized diff."""
    diff = " ".join(edit.text().lower().split())
    return f"{edit.hypothesis.strip().lower()}\n{edit.op} {edit.component} {edit.target or ''}\n{diff}"


def ban(edits: Iterable[Edit], t: int, candidate_id: str = "") -> list[Ban]:
    """Bans for the edits of a candidate rejected in round `t`."""
    return [Ban(key=novelty_key(e), component=e.component, text=direction_text(e), round=t,
                candidate_id=candidate_id) for e in edits]


def active(bans: Sequence[Ban], t: int, rounds: int) -> list[Ban]:
    """Bans still in force in round `t` (all of them when `rounds` is 0)."""
    return [b for b in bans if rounds <= 0 or t - b.round <= rounds]


def match(edit: Edit, bans: Sequence[Ban], threshold: float) -> Ban | None:
    """The ban `edit` repeats, or None."""
    if edit.component in EXACT:
        key = novelty_key(edit)
        return next((b for b in bans if b.key == key), None)
    text = direction_text(edit)
    return next((b for b in bans if b.component == edit.component and similarity(text, b.text) >= threshold), None)


def groups(bans: Sequence[Ban]) -> list[list[Ban]]:
    """The bans grouped by the rejected candidate that made them (a ban without one is its own group)."""
    def key(b: Ban) -> tuple[int, str]:
        return b.round, b.candidate_id

    named = sorted((b for b in bans if b.candidate_id), key=key)
    return [list(g) for _, g in groupby(named, key=key)] + [[b] for b in bans if not b.candidate_id]


def match_draft(edits: Sequence[Edit], bans: Sequence[Ban], threshold: float) -> list[Ban] | None:
    """The rejected combination that `edits` repeats (each of its directions matched by one of the
    edits), or None."""
    return next((g for g in groups(bans)
                 if all(any(match(e, [b], threshold) for e in edits) for b in g)), None)


def describe(group: Sequence[Ban]) -> str:
    """A banned combination as the proposer sees it: its novelty keys joined by ' + '."""
    return " + ".join(b.key for b in group)
