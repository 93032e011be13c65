"""Answering by choice (`control.choice`): scoring the labels, calibration, and the error paths."""

from __future__ import annotations

import asyncio
import math

import pytest

from evolve.backends.base import Completion, Request, Usage
from evolve.backends.cache import CachedBackend
from evolve.backends.mock import MockBackend
from evolve.bench.choice import variants
from evolve.bench.runtime import evaluate
from evolve.bench.task import Task
from evolve.bench.verifiers import make_verifier
from evolve.errors import EvolveError
from evolve.harness import Edit, Harness, apply_edits

LABELS = ["pos", "neg"]
TASKS = [Task(id=f"t{i}", input=f"item {i} is {'good' if i % 2 else 'bad'}", target="pos" if i % 2 else "neg",
              labels=("pos", "neg"))
         for i in range(10)]
CALIBRATION = ["item 100 is good", "item 101 is bad"]


def biased_scorer(request: Request) -> Completion:
    """A model that prefers 'pos' for every input, but less so when the input is bad: raw argmax is
    always 'pos'; only calibration recovers the signal."""
    text = request.messages[-1]["content"]
    lean = 2.0 if "good" in text else 1.0
    logprobs = tuple((-1.0 if c.lower() == "pos" else -1.0 - lean) if c == c.lower() else -50.0
                     for c in request.choices)
    return Completion("", Usage(len(text.split()), len(request.choices)), model="mock", choice_logprobs=logprobs)


def chooser(calibration=()) -> Harness:
    return apply_edits(Harness(), [Edit(op="set", component="control", target="choice",
                                        value={"labels": LABELS, "calibration": list(calibration)})])


def run(h: Harness, backend) -> list:
    return asyncio.run(evaluate(h, TASKS, backend, make_verifier("label")))


def test_an_uncalibrated_choice_is_the_most_likely_label():
    results = run(chooser(), MockBackend(biased_scorer))
    assert {r.prediction for r in results} == {"pos"}
    assert all(r.parsed and r.error is None for r in results)
    assert sum(r.reward for r in results) == 5


def test_calibration_divides_out_the_labels_mean_probability():
    backend = MockBackend(biased_scorer)
    results = run(chooser(CALIBRATION), backend)
    assert [r.prediction for r in results] == [t.target for t in TASKS]
    scored = [r for r in backend.history if r.choices]
    assert len(scored) == len(TASKS) + len(CALIBRATION), "the prior is computed once per harness"
    run(chooser(CALIBRATION), backend)
    assert len([r for r in backend.history if r.choices]) == 2 * len(TASKS) + len(CALIBRATION)


def test_case_variants_count_for_their_label():
    assert variants("pos") == ["pos", "Pos"] and variants("Yes") == ["Yes", "yes"]

    def capital_positive(request: Request) -> Completion:
        logprobs = tuple(-0.5 if c == "Pos" else -2.0 if c == "neg" else -9.0 for c in request.choices)
        return Completion("", choice_logprobs=logprobs)

    results = run(chooser(), MockBackend(capital_positive))
    assert {r.prediction for r in results} == {"pos"}


def test_the_trajectory_keeps_the_scores_and_tokens_are_counted():
    [first, *_] = run(chooser(CALIBRATION), MockBackend(biased_scorer))
    roles = [step["role"] for step in first.trajectory]
    assert roles == ["user", "assistant", "choice", "verifier"]
    assert '"prior"' in first.trajectory[2]["content"] and first.tokens_in > 0


def test_a_backend_that_cannot_score_refuses_the_harness_in_one_line():
    with pytest.raises(EvolveError, match="cannot score choices") as info:
        run(chooser(), MockBackend(default="pos", scores_choices=False))
    assert "\n" not in str(info.value)


def test_a_failed_scoring_is_a_scored_failure():
    def broken(request: Request) -> Completion:
        return Completion("", error="model crashed")

    results = run(chooser(), MockBackend(broken))
    assert all(r.reward == 0 and r.prediction is None and "model crashed" in r.error for r in results)

    def infinite(request: Request) -> Completion:
        return Completion("", choice_logprobs=tuple(-math.inf for _ in request.choices))

    results = run(chooser(CALIBRATION), MockBackend(infinite))
    assert all(r.reward == 0 and "on every calibration input" in r.error for r in results)


def test_the_cache_keeps_choice_scores(tmp_path):
    inner = MockBackend(biased_scorer)
    request = Request(({"role": "user", "content": "item 1 is good"},), choices=("pos", "neg"))
    fresh = asyncio.run(CachedBackend(inner, tmp_path).complete([request]))[0]
    again = asyncio.run(CachedBackend(inner, tmp_path).complete([request]))[0]
    assert again.cached and again.choice_logprobs == fresh.choice_logprobs
    plain = Request(({"role": "user", "content": "item 1 is good"},))
    asyncio.run(CachedBackend(inner, tmp_path).complete([plain]))
    assert len(inner.history) == 2, "a request with choices has its own cache key"


def test_a_calibration_input_that_fails_leaves_the_prior_to_the_others_for_one_batch():
    def flaky(request: Request) -> Completion:
        if request.messages[-1]["content"] == "broken input":
            return Completion("", error="TransientError: boom")
        return biased_scorer(request)

    backend = MockBackend(flaky)
    h = chooser([*CALIBRATION, "broken input"])
    assert [r.prediction for r in run(h, backend)] == [t.target for t in TASKS]
    run(h, backend)
    calls = [r for r in backend.history if r.choices and r.messages[-1]["content"] == CALIBRATION[0]]
    assert len(calls) == 2, "a prior with a failed input is not kept"
