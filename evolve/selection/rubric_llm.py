"""LLM steps of the rubric surrogate: generate (with bounded repair), judge, re-align.

Prompts are jinja2 templates in `selectors/` (`rubric_generate.md.j2`, `rubric_judge.md.j2`,
`rubric_revise.md.j2`); pass `templates=` to use another folder. Every call goes through the
backend with role `surrogate`; judging runs at temperature 0 with a JSON schema. When a budget is
given, each call is charged to `surrogate_calls` first; a step the budget cannot afford falls back
(generic rubric, heuristic scores, no revision) instead of overspending.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evolve.backends.base import Backend, Request
from evolve.errors import describe_validation, one_line
from evolve.paths import data_dir
from evolve.selection import rubric as rb
from evolve.selection.budget import Budget
from evolve.templating import render

SYSTEM = "You are a careful grader. Answer with JSON only."
RUBRIC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"criteria": {
        "type": "array", "minItems": rb.MIN_CRITERIA, "maxItems": rb.MAX_CRITERIA,
        "items": {"type": "object", "properties": {
            "id": {"type": "string"}, "category": {"type": "string"}, "criterion": {"type": "string"},
            "points": {"type": "integer", "minimum": -5, "maximum": 5}},
            "required": ["id", "category", "criterion", "points"]},
    }},
    "required": ["criteria"],
}
HARNESS_CHARS = 1500
"""Characters of each harness text shown in the revision evidence."""


def _folder(templates: str | Path | None) -> Path:
    return Path(templates) if templates else data_dir("selectors")


def _afford(budget: Budget | None, calls: int) -> bool:
    if budget is None:
        return True
    if not budget.can_afford("surrogate_calls", calls):
        return False
    budget.spend("surrogate_calls", calls)
    return True


def _request(prompt: str, *, temperature: float, schema: dict[str, Any], max_tokens: int,
             seed: int | None = None) -> Request:
    return Request(messages=({"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}),
                   role="surrogate", temperature=temperature, max_tokens=max_tokens, seed=seed, json_schema=schema)


def _parse_rubric(text: str, forbidden: Sequence[str], version: int) -> tuple[rb.Rubric | None, str]:
    """(rubric, "") or (None, one-line error) from a model answer; ids/categories filled in when missing."""
    obj = rb.parse_json_object(text)
    if obj is None:
        return None, "the answer is not a JSON object"
    items = obj.get("criteria")
    if isinstance(items, list):
        for i, item in enumerate(items):
            if isinstance(item, dict):
                item.setdefault("id", f"r{i + 1}")
                item.setdefault("category", "general")
    try:
        return rb.validate_rubric({"version": version, "criteria": items}, forbidden), ""
    except ValidationError as exc:
        return None, describe_validation(exc, "rubric")


async def generate_rubric(backend: Backend, description: str, evidence: str, forbidden: list[str], *,
                          repair_attempts: int = 2, templates: str | Path | None = None,
                          budget: Budget | None = None, max_tokens: int = 1024) -> rb.Rubric:
    """Ask the surrogate model for a rubric; repair invalid answers (bounded), else the fallback rubric."""
    error = ""
    for _ in range(repair_attempts + 1):
        if not _afford(budget, 1):
            break
        prompt = render("rubric_generate.md.j2", _folder(templates), description=description, evidence=evidence,
                        min_criteria=rb.MIN_CRITERIA, max_criteria=rb.MAX_CRITERIA, error=error)
        [out] = await backend.complete([_request(prompt, temperature=0.0, schema=RUBRIC_SCHEMA,
                                                 max_tokens=max_tokens)])
        if not out.ok:
            error = one_line(f"the call failed: {out.error}")
            continue
        rubric, error = _parse_rubric(out.text, forbidden, 1)
        if rubric is not None:
            return rubric
    return rb.fallback_rubric()


async def score(backend: Backend | None, rubric: rb.Rubric, harness_texts: list[str], *,
                templates: str | Path | None = None, budget: Budget | None = None,
                max_tokens: int = 256) -> list[rb.RubricScore]:
    """Judge each harness text against the rubric (temperature 0, JSON schema), normalized to [0, 1].

    Invalid or failed judge answers, a missing backend or an exhausted budget use the
    deterministic heuristic (`fallback=True`).
    """
    if not harness_texts:
        return []
    if backend is None or not _afford(budget, len(harness_texts)):
        return [rb.score_hits(rubric, rb.fallback_hits(rubric, t), fallback=True) for t in harness_texts]
    schema = rb.judge_schema(rubric)
    example = "{" + ", ".join(f'"{c.id}": true' for c in rubric.criteria[:2]) + ", ...}"
    requests = [_request(render("rubric_judge.md.j2", _folder(templates), criteria=rubric.criteria, harness=text,
                                example=example), temperature=0.0, schema=schema, max_tokens=max_tokens)
                for text in harness_texts]
    outs = await backend.complete(requests)
    scores = []
    for text, out in zip(harness_texts, outs, strict=True):
        hits = rb.parse_hits(out.text, rubric) if out.ok else None
        if hits is None:
            scores.append(rb.score_hits(rubric, rb.fallback_hits(rubric, text), fallback=True))
        else:
            scores.append(rb.score_hits(rubric, hits))
    return scores


@dataclass(frozen=True)
class RubricVersion:
    """One rubric tried during re-alignment, with its agreement (store each with the run)."""

    rubric: rb.Rubric
    agreement: float | None
    scores: list[float]


@dataclass(frozen=True)
class Realignment:
    """Outcome of `realign`: the best-aligned rubric and every version tried (current one first)."""

    rubric: rb.Rubric
    agreement: float | None
    versions: list[RubricVersion] = field(default_factory=list)

    @property
    def revised(self) -> bool:
        return self.rubric != (self.versions[0].rubric if self.versions else self.rubric)


def revision_temperature(agreement: float, attempt: int) -> float:
    """SkillLift's schedule: 0.6 below 0.3, 0.4 below 0.7, else 0.15; 0.15 on retries."""
    if attempt > 0 or agreement >= 0.7:
        return 0.15
    return 0.6 if agreement < 0.3 else 0.4


def _revise_prompt(rubric: rb.Rubric, agreement: float, texts: Sequence[str], sur: Sequence[float],
                   oracle: Sequence[float], hits: Sequence[dict[str, bool]], description: str, error: str,
                   templates: str | Path | None) -> str:
    harnesses = [{"text": t[:HARNESS_CHARS], "surrogate": s, "oracle": o, "hits": [k for k, v in h.items() if v]}
                 for t, s, o, h in zip(texts, sur, oracle, hits, strict=True)]
    pairs = [f"[{i + 1}] scored at least [{j + 1}] but measured lower" for i, j in rb.reversals(sur, oracle)][:20]
    return render("rubric_revise.md.j2", _folder(templates), description=description, agreement=agreement,
                  version=rubric.version, criteria=rubric.criteria, harnesses=harnesses, reversals=pairs,
                  min_criteria=rb.MIN_CRITERIA, max_criteria=rb.MAX_CRITERIA, error=error)


async def realign(backend: Backend | None, rubric: rb.Rubric, harness_texts: list[str], oracle: list[float], *,
                  description: str, forbidden: list[str], threshold: float = 0.9, attempts: int = 2,
                  current: list[rb.RubricScore] | None = None, rng: random.Random | None = None,
                  templates: str | Path | None = None, budget: Budget | None = None,
                  max_tokens: int = 1024) -> Realignment:
    """Re-align the rubric to this round's oracle results (no extra oracle calls).

    Scores the harnesses with the current rubric (or uses `current`), measures the agreement and,
    when it is below `threshold`, asks for up to `attempts` revisions; keeps the best-aligned
    version. Skipped (no versions) with fewer than two harnesses.
    """
    if len(harness_texts) < 2 or len(harness_texts) != len(oracle):
        return Realignment(rubric, None, [])
    now = current or await score(backend, rubric, harness_texts, templates=templates, budget=budget)
    sur = [s.score for s in now]
    versions = [RubricVersion(rubric, rb.alignment(sur, oracle), sur)]
    best = versions[0]
    error, rng = "", rng or random.Random(0)
    for attempt in range(attempts):
        if backend is None or best.agreement is None or best.agreement >= threshold or not _afford(budget, 1):
            break
        prompt = _revise_prompt(best.rubric, best.agreement, harness_texts, best.scores, oracle,
                                [s.hits for s in now], description, error, templates)
        temp = revision_temperature(best.agreement, attempt)
        [out] = await backend.complete([_request(prompt, temperature=temp, schema=RUBRIC_SCHEMA,
                                                 max_tokens=max_tokens, seed=rng.randrange(2**31))])
        version = max(v.rubric.version for v in versions) + 1
        new, error = _parse_rubric(out.text, forbidden, version) if out.ok else (None, f"call failed: {out.error}")
        if new is None:
            continue
        new_scores = await score(backend, new, harness_texts, templates=templates, budget=budget)
        sur_new = [s.score for s in new_scores]
        versions.append(RubricVersion(new, rb.alignment(sur_new, oracle), sur_new))
        if (versions[-1].agreement if versions[-1].agreement is not None else -2.0) > best.agreement:
            best, now = versions[-1], new_scores
    return Realignment(best.rubric, best.agreement, versions)
