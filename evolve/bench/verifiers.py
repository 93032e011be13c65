"""Verifiers: score one prediction of one task.

Every verifier follows the `Verifier` protocol. `make_verifier(spec)` builds one from a name or a
`{"name": ..., **options}` mapping (the `verifier:` field of a benchmark.yaml); `register_verifier`
adds user verifiers to that registry. A verifier may also implement
`score_workspace(task, prediction, workspace)` to inspect a rollout's final workspace
(`evolve.bench.workspace_verifiers`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, ValidationError

from evolve.bench.task import Task
from evolve.errors import BenchmarkError, describe_validation


@dataclass(frozen=True)
class VerifierResult:
    """The score of one prediction."""

    reward: float
    """In [0, 1]; higher is better."""
    parsed: bool
    """False when no valid answer could be extracted from the prediction."""
    normalized: str | None
    """The extracted, normalized answer (what votes and prediction distributions count)."""
    detail: str = ""
    """Short human-readable explanation (shown to the analyst)."""


@runtime_checkable
class Verifier(Protocol):
    """Scores predictions.

    Contract:
    - `score(task, prediction)` never raises for a bad prediction: an empty, unparseable or failing
      prediction is `reward=0.0` with `parsed=False` (nothing extracted) or `parsed=True` (wrong answer).
    - It is deterministic for the same inputs (the LLM judge is deterministic at temperature 0).
    - It does not mutate the task.
    - `name` is the registry name it was built from.
    """

    name: str

    def score(self, task: Task, prediction: str) -> VerifierResult:
        """Score `prediction` (the extracted answer text) against `task.target`."""
        ...


@runtime_checkable
class WorkspaceVerifier(Verifier, Protocol):
    """A verifier that also judges the final state of a rollout's workspace.

    Contract: `score_workspace` follows `score`'s contract; it may read the folder (never run what
    the model wrote outside the sandbox) and must not modify it.
    """

    def score_workspace(self, task: Task, prediction: str, workspace: Any) -> VerifierResult:
        """Score the final workspace folder (a `Path`) and the answer."""
        ...


_PUNCT_EDGES = " \t\n\"'`.,;:!?*_"


def normalize_text(text: str) -> str:
    """Lowercase, collapse whitespace, strip quotes and punctuation at both ends."""
    return " ".join(text.lower().split()).strip(_PUNCT_EDGES)


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ExactOptions(_Options):
    case_sensitive: bool = False
    """Compare with case (whitespace and edge punctuation are still ignored)."""


class ExactMatch:
    """Normalized exact match of the whole prediction with the target."""

    name = "exact"

    def __init__(self, options: ExactOptions | None = None) -> None:
        self.options = options or ExactOptions()

    def _norm(self, text: str) -> str:
        text = " ".join(text.split()).strip(_PUNCT_EDGES)
        return text if self.options.case_sensitive else text.lower()

    def score(self, task: Task, prediction: str) -> VerifierResult:
        got = self._norm(prediction or "")
        if not got:
            return VerifierResult(0.0, False, None, "empty answer")
        ok = got == self._norm(task.target)
        return VerifierResult(float(ok), True, got, "match" if ok else f"expected {task.target!r}")


class LabelOptions(_Options):
    labels: tuple[str, ...] | None = None
    """Valid labels; default: the task's labels, else inferred from the target (Yes/No, True/False, (A))."""


_OPTION_RE = re.compile(r"^\([A-Z]\)$")
_LETTERS = tuple(f"({c})" for c in "ABCDEFGHIJKLMNOPQR")


def _label_pattern(label: str) -> re.Pattern[str]:
    if _OPTION_RE.match(label):
        letter = label[1]
        return re.compile(rf"\({letter}\)|(?<![\w(]){letter}\)|^{letter}$|(?i:option|answer is)\s+{letter}\b")
    return re.compile(rf"(?<!\w){re.escape(label)}(?!\w)", re.IGNORECASE)


def _infer_labels(target: str) -> tuple[str, ...]:
    norm = normalize_text(target)
    if norm in ("yes", "no"):
        return ("Yes", "No")
    if norm in ("true", "false"):
        return ("True", "False")
    if _OPTION_RE.match(target.strip()):
        return _LETTERS
    return (target,)


class LabelChoice:
    """Extract one of a fixed set of labels (earliest mention wins; longer labels break ties)."""

    name = "label"

    def __init__(self, options: LabelOptions | None = None) -> None:
        self.options = options or LabelOptions()

    def labels_for(self, task: Task) -> tuple[str, ...]:
        return self.options.labels or task.labels or _infer_labels(task.target)

    def extract(self, labels: tuple[str, ...], prediction: str) -> str | None:
        text = prediction.strip()
        norm = normalize_text(text)
        for label in labels:
            if normalize_text(label) == norm:
                return label
        best: tuple[int, int, str] | None = None
        for label in labels:
            match = _label_pattern(label).search(text)
            if match and (best is None or (match.start(), -len(label)) < best[:2]):
                best = (match.start(), -len(label), label)
        return best[2] if best else None

    def score(self, task: Task, prediction: str) -> VerifierResult:
        labels = self.labels_for(task)
        label = self.extract(labels, prediction or "")
        if label is None:
            return VerifierResult(0.0, False, None, f"no label found; valid: {', '.join(labels[:8])}")
        ok = normalize_text(label) == normalize_text(task.target)
        return VerifierResult(float(ok), True, label, "match" if ok else f"expected {task.target!r}")


class NumericOptions(_Options):
    abs_tol: float = 1e-6
    """Absolute tolerance."""
    rel_tol: float = 0.0
    """Relative tolerance (fraction of the target)."""
    pick: str = "last"
    """Which number of the prediction is the answer: `first` or `last`."""


_NUMBER_RE = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")


def parse_number(text: str) -> float | None:
    try:
        value = float(text.replace(",", "").replace("$", "").strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def format_number(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


class Numeric:
    """The first or last number of the prediction equals the target within tolerance."""

    name = "numeric"

    def __init__(self, options: NumericOptions | None = None) -> None:
        self.options = options or NumericOptions()

    def score(self, task: Task, prediction: str) -> VerifierResult:
        numbers = [n for n in (parse_number(m) for m in _NUMBER_RE.findall(prediction or "")) if n is not None]
        if not numbers:
            return VerifierResult(0.0, False, None, "no number found")
        got = numbers[0] if self.options.pick == "first" else numbers[-1]
        want = parse_number(task.target)
        if want is None:
            return VerifierResult(0.0, True, format_number(got), f"target {task.target!r} is not a number")
        ok = abs(got - want) <= max(self.options.abs_tol, self.options.rel_tol * abs(want))
        return VerifierResult(float(ok), True, format_number(got), "match" if ok else f"expected {task.target}")


class RegexOptions(_Options):
    pattern: str
    """Regex applied to the prediction; group 1 (or the whole match) is the answer."""
    case_sensitive: bool = False


class RegexMatch:
    """Extract the answer with a regex, then compare it (normalized) with the target."""

    name = "regex"

    def __init__(self, options: RegexOptions) -> None:
        self.options = options
        try:
            self.regex = re.compile(options.pattern, 0 if options.case_sensitive else re.IGNORECASE)
        except re.error as exc:
            raise BenchmarkError(f"verifier 'regex': invalid pattern {options.pattern!r}: {exc}") from None

    def score(self, task: Task, prediction: str) -> VerifierResult:
        match = self.regex.search(prediction or "")
        if not match:
            return VerifierResult(0.0, False, None, f"no match for /{self.options.pattern}/")
        got = normalize_text(match.group(1) if match.groups() else match.group(0))
        ok = got == normalize_text(task.target)
        return VerifierResult(float(ok), True, got, "match" if ok else f"expected {task.target!r}")


_USER_VERIFIERS: dict[str, tuple[type[BaseModel] | None, Callable[..., Verifier]]] = {}


def register_verifier(name: str, factory: Callable[..., Verifier], options: type[BaseModel] | None = None) -> None:
    """Make `verifier: NAME` (or `{name: NAME, ...options}`) build `factory(options_object)` (or
    `factory()` without an options model); e.g. a workspace check of your own suite."""
    if not name or not name.replace("-", "_").isidentifier():
        raise ValueError(f"verifier name must be a word, got {name!r}")
    _USER_VERIFIERS[name] = (options, factory)


def _registry() -> dict[str, tuple[type[BaseModel] | None, Callable[..., Verifier]]]:
    from evolve.bench.judge import JudgeOptions, RubricJudge
    from evolve.bench.sandbox import PythonTests, PythonTestsOptions
    from evolve.bench.workspace_verifiers import (
        WorkspaceFiles,
        WorkspaceFilesOptions,
        WorkspaceTests,
        WorkspaceTestsOptions,
    )

    return {
        "exact": (ExactOptions, ExactMatch),
        "label": (LabelOptions, LabelChoice),
        "numeric": (NumericOptions, Numeric),
        "regex": (RegexOptions, RegexMatch),
        "python_tests": (PythonTestsOptions, PythonTests),
        "judge": (JudgeOptions, RubricJudge),
        "workspace_tests": (WorkspaceTestsOptions, WorkspaceTests),
        "workspace_files": (WorkspaceFilesOptions, WorkspaceFiles),
        **_USER_VERIFIERS,
    }


VERIFIERS = ("exact", "label", "numeric", "regex", "python_tests", "judge", "workspace_tests", "workspace_files")


def make_verifier(spec: str | Mapping[str, Any] | Verifier, *, backend: Any = None) -> Verifier:
    """Build a verifier from `"name"` or `{"name": ..., **options}`; `backend` is used by `judge`."""
    if not isinstance(spec, str | Mapping):
        return spec
    data = {"name": spec} if isinstance(spec, str) else dict(spec)
    name = data.pop("name", None)
    registry = _registry()
    if name not in registry:
        raise BenchmarkError(f"unknown verifier {name!r}; valid: {', '.join(registry)}")
    options_cls, factory = registry[name]
    try:
        options = options_cls.model_validate(data) if options_cls else None
    except ValidationError as exc:
        raise BenchmarkError(describe_validation(exc, f"verifier {name!r}")) from None
    if name == "judge":
        return factory(options, backend=backend)
    return factory(options) if options_cls is not None else factory()
