"""Answering by choice: score the harness's fixed labels instead of generating (`control.choice`).

For every task the rendered conversation goes to the policy backend once, as a `Request` with
`choices`: each label under its case variants (`label`, `Label`, `label` in lower case, without
repeats). A label's log-probability is the log of the summed probabilities of its variants, then
normalized over the labels. With `choice.calibration` inputs, the same is done for each of them
under the same prompt, and each label's mean probability over them is the prior divided out
(batch calibration on a fixed set: a prompt whose examples push the model toward one label gives
that label a high mean probability, and the division takes the push back out). The prior is
computed once per harness and process from the calibration inputs that could be scored (when some
failed, it serves one batch and is computed again for the next; when all failed, the batch's tasks
fail with that error); its calls are not part of any task's policy tokens (a deployment computes
it once). The answer is the label with the highest score; ties go to the
earlier label.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from evolve.backends.base import Backend, Completion, Request, scores_choices
from evolve.errors import EvolveError
from evolve.harness.model import Harness
from evolve.harness.render import render_messages

Complete = Callable[[Backend, list[Request]], Awaitable[list[Completion]]]


@dataclass(frozen=True)
class Chosen:
    """The outcome of one task: the chosen label (None when scoring failed) and its evidence."""

    answer: str | None
    scores: dict[str, float] = field(default_factory=dict)
    """Per label: its normalized log-probability on the task, minus the prior's when calibrated."""
    prior: dict[str, float] | None = None
    """Per label: the log of its mean probability over the calibration inputs (calibrated harnesses)."""
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    error: str | None = None


def variants(label: str) -> list[str]:
    """The surface forms scored for `label`: as written, capitalized, lower case (no repeats)."""
    forms = [label, label[:1].upper() + label[1:], label.lower()]
    return list(dict.fromkeys(forms))


def _label_scores(completion: Completion, labels: Sequence[str], forms: list[list[str]]) -> dict[str, float]:
    """Log-probabilities of the labels, normalized over the labels."""
    flat = [f for group in forms for f in group]
    if not completion.ok or len(completion.choice_logprobs) != len(flat):
        raise ValueError(completion.error or f"the backend scored {len(completion.choice_logprobs)} of "
                                             f"{len(flat)} choices")
    if not all(math.isfinite(v) for v in completion.choice_logprobs):
        raise ValueError("the backend gave a score that is not finite")
    by_form = dict(zip(flat, completion.choice_logprobs, strict=True))
    raw = {label: _logsumexp([by_form[f] for f in group]) for label, group in zip(labels, forms, strict=True)}
    total = _logsumexp(list(raw.values()))
    return {label: value - total for label, value in raw.items()}


def _logsumexp(values: Sequence[float]) -> float:
    top = max(values)
    return top + math.log(sum(math.exp(v - top) for v in values))


def _request(harness: Harness, text: str, choices: tuple[str, ...]) -> Request:
    return Request(tuple(render_messages(harness, text)), role="policy", max_tokens=1, choices=choices)


_priors: weakref.WeakKeyDictionary[Any, dict[str, dict[str, float]]] = weakref.WeakKeyDictionary()
"""Calibration priors per backend object and harness version: computed once per process."""


async def _prior(harness: Harness, backend: Backend, complete: Complete, forms: list[list[str]]) -> dict[str, float]:
    """Per label, the log of its mean normalized probability over the calibration inputs."""
    known = _priors.setdefault(backend, {})
    if harness.version in known:
        return known[harness.version]
    setting = harness.control.choice
    choices = tuple(f for group in forms for f in group)
    completions = await complete(backend, [_request(harness, text, choices) for text in setting.calibration])
    scored, errors = [], []
    for completion in completions:
        try:
            scored.append(_label_scores(completion, setting.labels, forms))
        except ValueError as exc:
            errors.append(str(exc))
    if not scored:
        raise ValueError(f"{errors[0]} (on every calibration input)")
    prior = {label: _logsumexp([s[label] for s in scored]) - math.log(len(scored)) for label in setting.labels}
    if not errors:  # a prior missing some inputs serves this batch only; the next one tries them again
        known[harness.version] = prior
    return prior


async def choose(harness: Harness, inputs: Sequence[str], backend: Backend, complete: Complete) -> list[Chosen]:
    """One `Chosen` per task input, in order (see the module docstring). Raises `EvolveError` when the
    backend cannot score choices: the harness cannot run there at all."""
    setting = harness.control.choice
    if not scores_choices(backend):
        raise EvolveError(f"this harness answers by choice (control.choice) and the policy model "
                          f"{backend.name!r} cannot score choices; use the embedded model or drop control.choice")
    labels = setting.labels
    forms = [variants(label) for label in labels]
    prior: dict[str, float] | None = None
    if setting.calibration:
        try:
            prior = await _prior(harness, backend, complete, forms)
        except ValueError as exc:
            return [Chosen(None, error=str(exc)) for _ in inputs]
    choices = tuple(f for group in forms for f in group)
    completions = await complete(backend, [_request(harness, text, choices) for text in inputs])
    out = []
    for completion in completions:
        try:
            raw = _label_scores(completion, labels, forms)
        except ValueError as exc:
            out.append(Chosen(None, tokens_in=completion.usage.prompt_tokens, latency_s=completion.latency_s,
                              error=str(exc)))
            continue
        scores = {k: v - prior[k] for k, v in raw.items()} if prior is not None else raw
        best = max(labels, key=lambda label: (scores[label], -labels.index(label)))
        out.append(Chosen(best, scores, prior, completion.usage.prompt_tokens, completion.usage.completion_tokens,
                          completion.latency_s))
    return out
