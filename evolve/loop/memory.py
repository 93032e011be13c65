"""Optimization memory (SkillAdam's first moment): recurring problems with attempts and verdicts.

Rules, applied by the engine after each round:
- `observe(evidence, round)`: problems are derived from the analyst's failure categories (a gold
  label answered wrongly most of the time, unparseable answers, rollout errors, a low score on open
  answers). A new one is opened; a resolved one that shows up again is reopened; an open one that
  the evidence no longer shows is resolved.
- `record(round, candidate_id, edits, verdict, delta)`: the candidate's attempt is attached to the
  problems it addressed (those whose keywords its hypotheses, targets or values mention; all open
  problems when it names none). An accepted candidate resolves only the problems it named; an
  attempt that names none is kept on every open problem but resolves nothing (the next round's
  evidence tells whether the problem went away). Other verdicts keep the problems open with the
  failed attempt on record, so the next round sees what was tried. ΔS is measured against the
  incumbent of the attempt's own round.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evolve.errors import ConfigError, describe_validation
from evolve.harness import Edit
from evolve.loop.prompts import render_prompt

LABEL_ACCURACY = 0.5
"""A gold label answered correctly less often than this is a problem."""
PARSE_RATE = 0.9
"""A parse rate below this is a problem."""
LOW_SCORE = 0.5
"""For open-answer tasks, a score below this is a problem."""


class Attempt(BaseModel):
    """One candidate that tried to fix a problem, with its verdict."""

    model_config = ConfigDict(extra="forbid")

    round: int
    candidate_id: str
    approach: str
    """What the candidate did (its edits and hypotheses, shortened)."""
    verdict: str
    """accepted, rejected, critic_reject, invalid, ..."""
    delta: float | None = None
    """ΔS of the candidate when it was evaluated."""


class Problem(BaseModel):
    """A recurring failure category."""

    model_config = ConfigDict(extra="forbid")

    label: str
    """Stable key, e.g. `label:odd`, `unparseable`, `errors`, `low-score`."""
    description: str
    evidence: str = ""
    """The latest numbers behind it."""
    keywords: list[str] = Field(default_factory=list)
    """Words that mark an edit as addressing it."""
    status: Literal["open", "resolved"] = "open"
    opened_round: int = 0
    resolved_round: int | None = None
    reopened: int = 0
    attempts: list[Attempt] = Field(default_factory=list)


def _clip(text: str, limit: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _approach(edits: Iterable[Edit]) -> str:
    return _clip("; ".join(f"{e.summary()}: {e.hypothesis}".strip().rstrip(":") for e in edits))


def _edit_text(edit: Edit) -> str:
    return " ".join([edit.hypothesis, str(edit.target or ""), edit.text()])


def _mentions(text: str, keyword: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(keyword.lower())}(?!\w)", text.lower()) is not None


def problems_from_evidence(evidence: Any) -> list[Problem]:
    """The failure categories an Evidence package shows (see module docstring)."""
    found = []
    for stat in evidence.labels:
        if stat.n >= 2 and stat.accuracy < LABEL_ACCURACY:
            wrong = ", ".join(f"{k} ×{v}" for k, v in stat.predicted_as.items())
            found.append(Problem(label=f"label:{stat.label}", keywords=[stat.label],
                                 description=f"tasks whose answer is '{stat.label}' are mostly answered wrongly",
                                 evidence=f"{stat.correct}/{stat.n} correct; answered instead: {wrong or '-'}"))
    if evidence.n and evidence.parse_rate < PARSE_RATE:
        found.append(Problem(label="unparseable", description="answers often cannot be extracted from the output",
                             keywords=["parse", "format", "extract", "answer.mode", "answer.pattern", "max_tokens"],
                             evidence=f"parse rate {evidence.parse_rate:.0%}"))
    if evidence.n and evidence.error_rate > 0:
        found.append(Problem(label="errors", description="rollouts fail with errors",
                             keywords=["error", "max_tokens", "max_turns", "tool"],
                             evidence=f"error rate {evidence.error_rate:.0%}"))
    if evidence.n and not evidence.labels and evidence.score < LOW_SCORE:
        found.append(Problem(label="low-score", description="most answers are wrong", keywords=[],
                             evidence=f"score {evidence.score:.2f}"))
    return found


class Memory(BaseModel):
    """Open and resolved problems with their attempts (rendered into the proposer's context)."""

    model_config = ConfigDict(extra="forbid")

    problems: list[Problem] = Field(default_factory=list)

    def get(self, label: str) -> Problem | None:
        return next((p for p in self.problems if p.label == label), None)

    def open_problems(self) -> list[Problem]:
        return [p for p in self.problems if p.status == "open"]

    def observe(self, evidence: Any, round: int) -> None:
        """Open, refresh, reopen or resolve problems from this round's evidence."""
        seen = set()
        for new in problems_from_evidence(evidence):
            seen.add(new.label)
            old = self.get(new.label)
            if old is None:
                self.problems.append(new.model_copy(update={"opened_round": round}))
                continue
            old.evidence, old.description = new.evidence, new.description
            if old.status == "resolved":
                old.status, old.resolved_round, old.reopened = "open", None, old.reopened + 1
        for problem in self.open_problems():
            if problem.label not in seen:
                problem.status, problem.resolved_round = "resolved", round
                problem.evidence = f"no longer observed in round {round}"

    def named(self, edits: list[Edit] | str) -> list[Problem]:
        """Open problems whose keywords the edits (or an approach text) mention."""
        text = edits if isinstance(edits, str) else " ".join(_edit_text(e) for e in edits)
        return [p for p in self.open_problems() if any(_mentions(text, k) for k in p.keywords)]

    def addressed(self, edits: list[Edit] | str) -> list[Problem]:
        """Open problems the edits (or an approach text) address (all open problems when they name none)."""
        return self.named(edits) or self.open_problems()

    def record(self, round: int, candidate_id: str, edits: list[Edit] | str, verdict: str,
               delta: float | None = None) -> list[str]:
        """Attach a candidate's attempt (its edits, or an approach text) to the problems it addressed;
        return their labels."""
        named = self.named(edits)
        targets = named or self.open_problems()
        approach = _clip(edits) if isinstance(edits, str) else _approach(edits)
        attempt = Attempt(round=round, candidate_id=candidate_id, approach=approach, verdict=verdict, delta=delta)
        for problem in targets:
            problem.attempts.append(attempt)
            if verdict == "accepted" and problem in named:
                problem.status, problem.resolved_round = "resolved", round
        return [p.label for p in targets]

    def update(self, round: int, evidence: Any, attempts: Iterable[Mapping[str, Any]]) -> None:
        """One round's update: `observe(evidence)`, then `record` each attempt, a mapping with
        `candidate_id`, `approach` (text) or `edits`, `accepted` (bool) or `verdict`, and `delta`."""
        self.observe(evidence, round)
        for a in attempts:
            verdict = a.get("verdict") or ("accepted" if a.get("accepted") else "rejected")
            what = a.get("edits") or a.get("approach") or ""
            self.record(round, str(a["candidate_id"]), what, str(verdict), a.get("delta"))

    def render(self, max_chars: int = 1500, attempts_shown: int = 3) -> str:
        """Open and resolved problems with their latest attempts, at most `max_chars` characters."""
        if not self.problems:
            return ""
        open_ = self.open_problems()
        resolved = [p for p in self.problems if p.status == "resolved"]
        text = render_prompt("memory.md.j2", open_problems=open_, resolved=resolved[-6:], shown=attempts_shown)
        return text.strip()[:max_chars]

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str | bytes) -> Memory:
        try:
            return cls.model_validate_json(text)
        except ValidationError as exc:
            raise ConfigError(describe_validation(exc, "optimization memory")) from None
