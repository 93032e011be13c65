"""The critic: screens a candidate before any oracle rollout is spent on it.

- `LeakageCritic` (deterministic): rejects edits whose introduced text copies a specific
  evolve-split task: at least half of one task input's informative word n-grams (n-grams shared by
  many tasks, i.e. template phrases, are ignored; an input shorter than n words counts as one
  phrase), that task's literal non-label answer, its id, or a denylist regex. A long answer (over
  `LONG_ANSWER` characters, such as a HumanEval test suite) is screened by its informative n-grams
  like an input, and counts as copied from `LONG_ANSWER_HITS` shared n-grams on (one copied
  assertion), or from half of them when it has fewer. Label words alone are not leaks, and
  demonstrations and calibration inputs (`control.choice`) taken from the demo pool are allowed.
- `LLMCritic`: asks a model whether the edits are reusable mechanisms or benchmark-specific, with
  the rubric template `selectors/critic_review.md.j2`, a JSON verdict and bounded repair. It fails
  closed: when the critic model gives no valid verdict (the call failed, or the reply stayed
  invalid after the repairs) the verdict has kind `llm-unavailable` and rejects the candidate, so
  the rejection costs no oracle rollouts. `on_error="pass"` (`critic_on_error: pass`) lets such
  candidates through instead; the setting is recorded in the verdict's details either way.

  Which drafts are reviewed: model-written (LLM proposer) edits always. Programmatic operators'
  edits (few-shot bootstrap from the demo pool, control mutations, section removal, skill merge)
  carry no free text of their own and pass the leakage screen first; they get the LLM review only
  when a critic model is set explicitly (`--critic-model`, which sets `review_operators`) or the
  preset asks for it. The reason: the default critic is the policy model, and the embedded 135M
  model is no reviewer. Measured on 12 operator drafts for extract-city, its schema-constrained
  replies were all valid and all `pass` with the reason "one sentence": the review costs model
  time and tells nothing, and failing closed on a model without constrained output would reject
  the very drafts that make the CPU default evolve at all.
- `CriticChain`: runs critics in order and stops at the first rejection.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from evolve.backends.base import Backend, Request
from evolve.errors import ConfigError
from evolve.harness import Edit, Harness, render_files
from evolve.loop.prompts import extract_json, render_prompt
from evolve.paths import data_dir

_WORD = re.compile(r"\w+")
_COMMON = frozenset({"a", "an", "the", "yes", "no", "true", "false", "none", "ok", "it", "is", "of", "to", "in"})
MAX_FINDINGS = 8
LONG_ANSWER = 300
"""Answers longer than this (characters) are screened by their informative n-grams, not literally."""
LONG_ANSWER_HITS = 4
"""Informative n-grams a text must share with one long answer to count as copying it."""
ON_ERROR = ("reject", "pass")
"""What the LLM review decides when the critic model gives no valid verdict."""


class CriticVerdict(BaseModel):
    """A critic's decision about one candidate."""

    model_config = ConfigDict(extra="forbid")

    passed: bool
    kind: str
    """Which check decided: `leakage`, `llm`, `llm-unavailable`, `llm-skipped`, or a chain of them."""
    reason: str = ""
    details: dict[str, Any] = Field(default_factory=dict)


@runtime_checkable
class Critic(Protocol):
    """Reviews a candidate before evaluation.

    Contract: `review` returns a verdict and never raises for a bad model reply; it does not modify
    its arguments; `ctx` (the round's ProposerContext, or None) is optional context. A rejection
    must name what was found in `reason` (one line).
    """

    async def review(self, parent: Harness, candidate: Harness, edits: list[Edit], ctx: Any) -> CriticVerdict:
        """Pass or reject the candidate."""
        ...


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


def _grams(words: list[str], n: int) -> set[tuple[str, ...]]:
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def _contains(words: list[str], phrase: list[str]) -> bool:
    return f" {' '.join(phrase)} " in f" {' '.join(words)} "


class LeakageIndex:
    """Precomputed n-gram, answer and id index of a task set (see module docstring)."""

    def __init__(self, tasks: Sequence[Any], *, ngram: int = 6, labels: Sequence[str] = (),
                 denylist: Sequence[str] = (), max_df: int | None = None) -> None:
        self.n = ngram
        self.max_df = max_df if max_df is not None else max(2, math.ceil(0.05 * len(tasks)))
        self.labels = {str(lab).casefold() for lab in labels}
        self.patterns = []
        for pattern in denylist:
            try:
                self.patterns.append(re.compile(pattern, re.I))
            except re.error as exc:
                raise ConfigError(f"denylist pattern {pattern!r} is not a valid regex: {exc}") from None
        inputs = [_words(str(t.input)) for t in tasks]
        df: Counter[tuple[str, ...]] = Counter()
        for words in inputs:
            df.update(_grams(words, self.n) if len(words) >= self.n else {tuple(words)})
        targets = Counter(str(t.target).strip().casefold() for t in tasks)
        long_grams = [_grams(_words(str(t.target)), self.n) if self._is_long(str(t.target)) else set()
                      for t in tasks]
        answer_df: Counter[tuple[str, ...]] = Counter(g for grams in long_grams for g in grams)
        self.entries = []
        for task, words, answer_grams in zip(tasks, inputs, long_grams, strict=True):
            grams = _grams(words, self.n) if len(words) >= self.n else set()
            informative = {g for g in grams if df[g] <= self.max_df}
            short = words if 2 <= len(words) < self.n and df[tuple(words)] <= self.max_df else None
            long_answer = {g for g in answer_grams if answer_df[g] <= self.max_df}
            self.entries.append((str(task.id), informative, short, self._answer(str(task.target), targets),
                                 long_answer))

    @staticmethod
    def _is_long(target: str) -> bool:
        return len(target.strip()) > LONG_ANSWER

    def _answer(self, target: str, counts: Counter[str]) -> list[str] | None:
        """The words of a short answer matched literally (None: not screened literally)."""
        value = target.strip().casefold()
        if (not value or value in self.labels or value in _COMMON or counts[value] > self.max_df
                or len(value) < 3 or len(value) > LONG_ANSWER):
            return None
        words = _words(value)
        return words or None

    def findings(self, text: str) -> list[str]:
        """What `text` leaks (empty when nothing)."""
        found = [f"matches denylist pattern {p.pattern!r}" for p in self.patterns if p.search(text)]
        words = _words(text)
        grams = _grams(words, self.n)
        for task_id, informative, short, answer, long_answer in self.entries:
            if informative:
                hit = len(informative & grams)
                if hit * 2 >= len(informative):
                    found.append(f"copies evolve task {task_id}'s input ({hit}/{len(informative)} {self.n}-grams)")
            elif short is not None and _contains(words, short):
                found.append(f"copies evolve task {task_id}'s input")
            if answer is not None and _contains(words, answer):
                found.append(f"contains evolve task {task_id}'s answer {' '.join(answer)!r}")
            if long_answer:
                hit = len(long_answer & grams)
                if hit >= min(LONG_ANSWER_HITS, (len(long_answer) + 1) // 2):
                    found.append(f"copies part of evolve task {task_id}'s answer "
                                 f"({hit}/{len(long_answer)} {self.n}-grams)")
            if len(task_id) >= 3 and re.search(rf"(?<![\w-]){re.escape(task_id)}(?![\w-])", text, re.I):
                found.append(f"names evolve task id {task_id}")
        if len(found) > MAX_FINDINGS:
            found = [*found[:MAX_FINDINGS], f"(and {len(found) - MAX_FINDINGS} more)"]
        return found


def leakage_findings(texts: Sequence[str], tasks: Sequence[Any], *, ngram: int = 6, denylist: Sequence[str] = (),
                     labels: Sequence[str] = ()) -> list[str]:
    """Deterministic leakage screen of `texts` against `tasks` (see module docstring)."""
    index = LeakageIndex(tasks, ngram=ngram, labels=labels, denylist=denylist)
    return [f for text in texts for f in index.findings(text)]


def _parent_lines(parent: Harness) -> set[str]:
    return {line.strip() for text in render_files(parent).values() for line in text.splitlines() if line.strip()}


def introduced_text(edit: Edit, parent: Harness, known: set[str] | None = None) -> str:
    """The text an edit brings in that the parent does not already contain (line by line)."""
    known = _parent_lines(parent) if known is None else known
    return "\n".join(line for line in edit.text().splitlines() if line.strip() and line.strip() not in known)


class LeakageCritic:
    """Deterministic leakage screen of the text the edits introduce (see module docstring)."""

    def __init__(self, evolve_tasks: Sequence[Any], denylist: Sequence[str] = (), labels: Sequence[str] | None = (),
                 *, demo_tasks: Sequence[Any] = (), ngram: int = 6) -> None:
        self.index = LeakageIndex(evolve_tasks, ngram=ngram, labels=labels or (), denylist=denylist)
        self.demo_inputs = {str(t.input) for t in demo_tasks}

    def _from_demo(self, edit: Edit) -> bool:
        """Demonstrations copied from the demo pool (one example, or a whole set) are not leaks."""
        if edit.component != "example" or edit.op not in ("add", "replace", "set"):
            return False
        values = edit.value if isinstance(edit.value, list) else [edit.value]
        return bool(values) and all(isinstance(v, dict) and str(v.get("input")) in self.demo_inputs
                                    for v in values)

    def _without_demo_calibration(self, edit: Edit) -> Edit | None:
        """The edit less calibration inputs copied from the demo pool (`control.choice`); None when
        nothing else is left to screen."""
        if edit.component != "control" or edit.target not in ("choice", "choice.calibration"):
            return edit
        inputs = edit.value.get("calibration") if edit.target == "choice" and isinstance(edit.value, dict) \
            else edit.value
        if not isinstance(inputs, list) or not all(str(text) in self.demo_inputs for text in inputs):
            return edit
        if edit.target == "choice.calibration":
            return None
        return edit.model_copy(update={"value": {**edit.value, "calibration": []}})

    async def review(self, parent: Harness, candidate: Harness, edits: list[Edit], ctx: Any = None) -> CriticVerdict:
        known = _parent_lines(parent)
        findings: dict[str, list[str]] = {}
        for position, edit in enumerate(edits, start=1):
            screened = None if self._from_demo(edit) else self._without_demo_calibration(edit)
            if screened is None:
                continue
            found = self.index.findings(introduced_text(screened, parent, known))
            if found:
                findings[f"edit {position} ({edit.summary()})"] = found
        if not findings:
            return CriticVerdict(passed=True, kind="leakage", reason="no leakage found")
        where, found = next(iter(findings.items()))
        return CriticVerdict(passed=False, kind="leakage", reason=f"{where}: {found[0]}", details=findings)


CRITIC_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"verdict": {"type": "string", "enum": ["pass", "reject"]},
                   "reason": {"type": "string", "maxLength": 200}},
    "required": ["verdict", "reason"],
}
_PASS = {"pass", "passed", "accept", "accepted", "ok", "reusable", "yes"}
_REJECT = {"reject", "rejected", "fail", "benchmark-specific", "specific", "no"}


def parse_verdict(text: str) -> tuple[bool, str]:
    """(passed, reason) from a critic reply; ValueError when it has no usable verdict."""
    data = extract_json(text)
    if not isinstance(data, dict) or "verdict" not in data:
        raise ValueError('expected an object with "verdict" and "reason"')
    verdict = str(data["verdict"]).strip().casefold()
    if verdict not in _PASS | _REJECT:
        raise ValueError(f"verdict must be \"pass\" or \"reject\", got {data['verdict']!r}")
    return verdict in _PASS, " ".join(str(data.get("reason", "")).split())[:500]


class LLMCritic:
    """Model review of the edits against the rubric template (see module docstring)."""

    def __init__(self, backend: Backend, template: str | Path | None = None, max_repairs: int = 2, *,
                 description: str = "", review_operators: bool = False, max_tokens: int = 200,
                 on_error: str = "reject") -> None:
        path = Path(template) if template is not None else data_dir("selectors") / "critic_review.md.j2"
        if not path.is_file():
            raise ConfigError(f"critic template {path} not found")
        if on_error not in ON_ERROR:
            raise ConfigError(f"critic on_error {on_error!r} is unknown; valid: {', '.join(ON_ERROR)}")
        self.backend, self.template, self.max_repairs = backend, path, max_repairs
        self.description, self.review_operators, self.max_tokens = description, review_operators, max_tokens
        self.on_error = on_error

    def render(self, edits: list[Edit], ctx: Any) -> list[dict[str, str]]:
        view = [{"summary": e.summary(), "hypothesis": e.hypothesis, "text": e.text()[:1500]} for e in edits]
        text = render_prompt(self.template.name, self.template.parent, edits=view,
                             description=getattr(ctx, "description", "") or self.description,
                             labels=list(getattr(ctx, "labels", ()) or ()))
        return [{"role": "user", "content": text.strip()}]

    async def review(self, parent: Harness, candidate: Harness, edits: list[Edit], ctx: Any = None) -> CriticVerdict:
        reviewed = edits if self.review_operators else [e for e in edits if e.origin == "llm"]
        if not reviewed:
            return CriticVerdict(passed=True, kind="llm-skipped", reason="no model-written edits to review")
        messages = self.render(reviewed, ctx)
        reply, error = "", ""
        for attempt in range(self.max_repairs + 1):
            if attempt:
                repair = render_prompt("repair.md.j2", error=error,
                                       expected='{"verdict": "pass" or "reject", "reason": "..."}')
                messages = [*messages, {"role": "assistant", "content": reply}, {"role": "user", "content": repair}]
            [completion] = await self.backend.complete([Request(
                messages=tuple(messages), role="critic", temperature=0.0, max_tokens=self.max_tokens,
                json_schema=CRITIC_SCHEMA)])
            reply = completion.text
            if not completion.ok:
                error = f"critic call failed: {completion.error}"
                break
            try:
                passed, reason = parse_verdict(reply)
            except ValueError as exc:
                error = str(exc)
                continue
            return CriticVerdict(passed=passed, kind="llm", reason=reason or ("reusable" if passed else "rejected"),
                                 details={"repairs": attempt, "on_error": self.on_error})
        passed = self.on_error == "pass"
        action = "passed (critic on_error: pass)" if passed else "rejected (critic on_error: reject)"
        return CriticVerdict(passed=passed, kind="llm-unavailable",
                             reason=f"critic model unavailable, {action}: {error}",
                             details={"reply": reply[:500], "on_error": self.on_error, "error": error[:500]})


class CriticChain:
    """Runs critics in order; the first rejection decides, otherwise the candidate passes."""

    def __init__(self, critics: Sequence[Critic]) -> None:
        self.critics = list(critics)

    async def review(self, parent: Harness, candidate: Harness, edits: list[Edit], ctx: Any = None) -> CriticVerdict:
        passed: list[CriticVerdict] = []
        for critic in self.critics:
            verdict = await critic.review(parent, candidate, edits, ctx)
            if not verdict.passed:
                return verdict
            passed.append(verdict)
        kinds = "+".join(v.kind for v in passed) or "none"
        return CriticVerdict(passed=True, kind=kinds, reason="; ".join(v.reason for v in passed if v.reason),
                             details={v.kind: v.details for v in passed})
