"""SkillLift rubric surrogate: validated rubrics, judging, deterministic fallback, alignment.

A rubric holds 5–15 binary criteria (yes/no questions about a harness text) with signed integer
points in [-5, 5], never 0. The judge (the surrogate model, temperature 0, JSON-schema output)
answers true/false per criterion; raw = Σ points of the criteria met, normalized to [0, 1] by
(raw − min)/(max − min) where max/min are the sums of the positive/negative points. When the
judge's output is invalid, a deterministic token-overlap heuristic decides the hits instead.

Alignment with the oracle is the tie-aware pairwise agreement over the pairs the oracle strictly
orders: (agreeing − disagreeing) / comparable, surrogate ties counting 0 (None without any strict
oracle pair). LLM steps (generation, judging, revision) live in `rubric_llm.py` and are
re-exported here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator, model_validator

from evolve.errors import ConfigError, describe_validation
from evolve.jsontext import json_objects
from evolve.paths import data_dir

MIN_CRITERIA, MAX_CRITERIA = 5, 15
LEAK_RE = re.compile(r"hidden[\s_-]*answer|ground[\s_-]*truth|gold[\s_-]*(answer|label)s?", re.IGNORECASE)
NON_BINARY_RE = re.compile(r"on a scale|scale of|\bhow well\b|\bto what extent\b|\b\d+\s*-\s*\d+\s*(points|scale)",
                           re.IGNORECASE)
ID_RE = re.compile(r"^[A-Za-z0-9_.-]{1,24}$")


class Criterion(BaseModel):
    """One binary criterion."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    """Short unique id (`r1`)."""
    category: str = "general"
    """Free label (output, method, validation, leakage...)."""
    criterion: str = Field(min_length=8, max_length=400)
    """A yes/no question about the harness text."""
    points: int = Field(ge=-5, le=5)
    """Signed, non-zero: positive for merits, negative for flaws."""

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not ID_RE.match(v):
            raise ValueError(f"invalid criterion id {v!r}: use 1-24 letters, digits, '_', '-' or '.'")
        return v

    @field_validator("points")
    @classmethod
    def _points(cls, v: int) -> int:
        if v == 0:
            raise ValueError("points must be non-zero (between -5 and 5)")
        return v

    @field_validator("criterion")
    @classmethod
    def _criterion(cls, v: str) -> str:
        v = " ".join(v.split())
        if LEAK_RE.search(v):
            raise ValueError(f"criterion mentions hidden answers or ground truth: {v[:60]!r}")
        if NON_BINARY_RE.search(v):
            raise ValueError(f"criterion must be a yes/no question, not a scale: {v[:60]!r}")
        return v


class Rubric(BaseModel):
    """A versioned rubric. Validate with `context={"forbidden": [...]}` to reject answer text."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int = Field(1, ge=1)
    """Increases by one with every revision."""
    criteria: list[Criterion] = Field(min_length=MIN_CRITERIA, max_length=MAX_CRITERIA)
    """5–15 binary criteria."""
    fallback: bool = False
    """True for the generic rubric used when generation failed."""

    @field_validator("criteria")
    @classmethod
    def _unique(cls, v: list[Criterion]) -> list[Criterion]:
        ids = [c.id for c in v]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate criterion ids: {', '.join(dupes)}")
        if not any(c.points > 0 for c in v):
            raise ValueError("at least one criterion needs positive points")
        return v

    @model_validator(mode="after")
    def _no_answers(self, info: ValidationInfo) -> Rubric:
        forbidden = (info.context or {}).get("forbidden") or []
        for c in self.criteria:
            hit = contains_answer(c.criterion, forbidden)
            if hit is not None:
                raise ValueError(f"criterion {c.id} contains the answer text {hit!r}")
        return self

    @property
    def max_score(self) -> int:
        return sum(c.points for c in self.criteria if c.points > 0)

    @property
    def min_score(self) -> int:
        return sum(c.points for c in self.criteria if c.points < 0)

    def normalize(self, raw: int) -> float:
        """(raw − min)/(max − min), in [0, 1]."""
        span = self.max_score - self.min_score
        return (raw - self.min_score) / span if span else 0.0


def contains_answer(text: str, forbidden: Sequence[str]) -> str | None:
    """The first forbidden string found in `text` as a whole word or phrase (case-insensitive).

    Strings shorter than 2 characters are ignored (they would match everywhere).
    """
    for answer in forbidden:
        a = " ".join(str(answer).split())
        if len(a) < 2:
            continue
        if re.search(rf"(?<!\w){re.escape(a)}(?!\w)", text, re.IGNORECASE):
            return a
    return None


def validate_rubric(data: Any, forbidden: Sequence[str] = ()) -> Rubric:
    """Validate rubric data (raises pydantic ValidationError)."""
    return Rubric.model_validate(data, context={"forbidden": list(forbidden)})


def load_rubric(path: str | Path, forbidden: Sequence[str] = ()) -> Rubric:
    """Load a rubric YAML file; an invalid one raises ConfigError naming the field."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read rubric file: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {' '.join(str(exc).split())}") from None
    try:
        return validate_rubric(data, forbidden)
    except ValidationError as exc:
        raise ConfigError(describe_validation(exc, str(path))) from None


def fallback_rubric() -> Rubric:
    """The generic rubric shipped in `selectors/rubrics/fallback.yaml`."""
    return load_rubric(data_dir("selectors") / "rubrics" / "fallback.yaml")


# -- scoring --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RubricScore:
    """The surrogate score of one harness text."""

    score: float
    """Normalized score in [0, 1]."""
    raw: int
    """Sum of the points of the criteria met."""
    hits: dict[str, bool]
    """Criterion id -> met."""
    fallback: bool = False
    """True when the deterministic heuristic decided (judge output invalid or unavailable)."""


def score_hits(rubric: Rubric, hits: dict[str, bool], *, fallback: bool = False) -> RubricScore:
    raw = sum(c.points for c in rubric.criteria if hits.get(c.id))
    return RubricScore(rubric.normalize(raw), raw, {c.id: bool(hits.get(c.id)) for c in rubric.criteria}, fallback)


STOPWORDS = frozenset(
    "a an and are as at be by does do for from has have harness how if in into is it its model of on or the "
    "this that to with without when which who whether any each every there their them they tell tells tells "
    "text one least".split()
)
NEGATIONS = frozenset("not never avoid don't dont nor".split())
"""Words that negate a flaw's sentence ('no' is left out: it is a common answer label)."""
WORD_RE = re.compile(r"[a-z0-9']+")


def _tokens(text: str) -> list[str]:
    return WORD_RE.findall(text.lower())


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "ed", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def fallback_hits(rubric: Rubric, text: str) -> dict[str, bool]:
    """Deterministic heuristic: share of a criterion's content words present in the text.

    A merit (points > 0) is met when ≥ 20% of its content words occur; a flaw (points < 0) when
    ≥ 35% occur and no sentence containing them is negated (not, never, avoid...).
    """
    sentences = [_tokens(s) for s in re.split(r"[.!?\n]+", text) if s.strip()]
    present = {_stem(w) for s in sentences for w in s}
    hits = {}
    for c in rubric.criteria:
        words = {_stem(w) for w in _tokens(c.criterion) if w not in STOPWORDS and len(w) > 2}
        if not words:
            hits[c.id] = False
            continue
        found = words & present
        share = len(found) / len(words)
        if c.points > 0:
            hits[c.id] = share >= 0.20
        else:
            negated = any(NEGATIONS & set(s) and found & {_stem(w) for w in s} for s in sentences)
            hits[c.id] = share >= 0.35 and not negated
    return hits


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The JSON object in a model answer (bare, fenced or surrounded by prose), or None."""
    return next(json_objects(text), None)


_TRUE, _FALSE = {"true", "yes", "1", "met"}, {"false", "no", "0", "unmet"}


def parse_hits(text: str, rubric: Rubric) -> dict[str, bool] | None:
    """Criterion hits from a judge answer; None unless every criterion id has a boolean answer."""
    obj = parse_json_object(text)
    if obj is None:
        return None
    if isinstance(obj.get("hits"), dict):
        obj = obj["hits"]
    hits = {}
    for c in rubric.criteria:
        value = obj.get(c.id)
        if isinstance(value, bool):
            hits[c.id] = value
        elif isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            hits[c.id] = value.strip().lower() in _TRUE
        else:
            return None
    return hits


def judge_schema(rubric: Rubric) -> dict[str, Any]:
    """JSON schema of the judge's answer: every criterion id -> boolean."""
    ids = [c.id for c in rubric.criteria]
    return {"type": "object", "properties": {i: {"type": "boolean"} for i in ids}, "required": ids,
            "additionalProperties": False}


# -- alignment --------------------------------------------------------------------------------------

def alignment(surrogate: Sequence[float], oracle: Sequence[float], tol: float = 1e-9) -> float | None:
    """Tie-aware pairwise agreement over the pairs the oracle strictly orders.

    (agree − disagree) / comparable; a surrogate tie on such a pair counts 0; oracle ties are
    ignored; None when the oracle orders no pair strictly.
    """
    if len(surrogate) != len(oracle):
        raise ValueError("surrogate and oracle scores must have the same length")
    agree = disagree = comparable = 0
    for i in range(len(oracle)):
        for j in range(i + 1, len(oracle)):
            o = oracle[i] - oracle[j]
            if abs(o) <= tol:
                continue
            comparable += 1
            s = surrogate[i] - surrogate[j]
            if abs(s) <= tol:
                continue
            if (s > 0) == (o > 0):
                agree += 1
            else:
                disagree += 1
    return None if comparable == 0 else (agree - disagree) / comparable


def reversals(surrogate: Sequence[float], oracle: Sequence[float], tol: float = 1e-9) -> list[tuple[int, int]]:
    """Pairs (i, j) the surrogate ranks i above j (or level) while the oracle ranks j above i."""
    out = []
    for i in range(len(oracle)):
        for j in range(len(oracle)):
            if i != j and oracle[j] - oracle[i] > tol and surrogate[i] - surrogate[j] >= -tol:
                out.append((i, j))
    return out


from evolve.selection.rubric_llm import (  # noqa: E402  (re-exported LLM steps)
    Realignment,
    RubricVersion,
    generate_rubric,
    realign,
    revision_temperature,
    score,
)

__all__ = [
    "Criterion", "Realignment", "Rubric", "RubricScore", "RubricVersion", "alignment", "fallback_hits",
    "fallback_rubric", "generate_rubric", "judge_schema", "load_rubric", "parse_hits", "parse_json_object",
    "realign", "reversals", "revision_temperature", "score", "score_hits", "validate_rubric",
]
