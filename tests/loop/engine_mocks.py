"""Deterministic mock backends for engine tests: a keyword policy that only gets the sentiment
task right once the harness shows it at least two examples, and a proposer/critic helper."""

from __future__ import annotations

import json
import time

from evolve.backends.base import Request
from evolve.backends.mock import MockBackend

NEGATIVE = ("stopped", "broke", "cheap", "damaged", "louder", "leaks", "overheating", "waste", "apart",
            "never worked", "disappointed", "One star", "Do not", "regret", "Awful")


def policy_answer(request: Request) -> str:
    examples = sum(1 for m in request.messages if m["role"] == "assistant")
    text = request.messages[-1]["content"]
    if examples >= 2:
        return "negative" if any(w in text for w in NEGATIVE) else "positive"
    return "positive"


def helper_answer(request: Request) -> str:
    if request.role == "proposer":
        return json.dumps({"edits": [{"op": "add", "component": "system", "target": "format",
                                      "value": "Answer with exactly one word: positive or negative.",
                                      "hypothesis": "an explicit answer format helps parsing"}]})
    if request.role == "critic":
        return json.dumps({"verdict": "pass", "reason": "a generic format instruction"})
    return "{}"


def slow(fn, delay: float):
    def wrapped(request: Request) -> str:
        time.sleep(delay)
        return fn(request)

    return wrapped


def backends(delay: float = 0.0) -> tuple[MockBackend, MockBackend]:
    policy = policy_answer if not delay else slow(policy_answer, delay)
    return MockBackend(policy), MockBackend(helper_answer)


RUN_OPTIONS = {"benchmark": "sentiment-products", "rounds": 4, "seed": 3, "budget": 2000, "cache": False}
