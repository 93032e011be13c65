"""A fault-injecting backend wrapper, for testing that runs survive a misbehaving model.

`FaultyBackend(inner, FaultRates(...))` passes requests to `inner` but, at seeded rates, answers
instead with one of four faults:

- `error`: a transient failure (as after exhausted retries): a Completion with `error` set;
- `timeout`: waits `delay_s`, then a Completion with a timeout `error`;
- `empty`: a successful but empty answer (for a request with `choices`: equal scores);
- `garbage`: a successful answer of random printable noise (with `choices`: random scores).

Whether a request gets a fault, and which, depends only on the seed, the request's content and its
role (a hash, not a call counter), so a run is reproducible, concurrency does not change it, and a
resumed run sees the same faults as an uninterrupted one.

From the command line: `--model faulty:0.3:mock` (30% faults, split evenly among the four kinds) or
`faulty:error=0.1,timeout=0.05,empty=0.1,garbage=0.05,seed=7:mock`. The part after the second colon
is any model string.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from evolve.backends.base import Backend, Completion, Request, Usage
from evolve.errors import BackendError

if TYPE_CHECKING:
    from evolve.backends.registry import BackendOptions

KINDS = ("error", "timeout", "empty", "garbage")
SPEC_KEYS = (*KINDS, "seed", "delay_s")
FORM = "faulty:RATE:MODEL or faulty:error=R,timeout=R,empty=R,garbage=R,seed=N:MODEL"


class FaultRates(BaseModel):
    """Probabilities of each fault kind per request (their sum is the total fault rate, at most 1)."""

    model_config = ConfigDict(extra="forbid")

    error: float = Field(0.0, ge=0.0, le=1.0)
    timeout: float = Field(0.0, ge=0.0, le=1.0)
    empty: float = Field(0.0, ge=0.0, le=1.0)
    garbage: float = Field(0.0, ge=0.0, le=1.0)
    seed: int = 0
    """Seed of the fault draws."""
    delay_s: float = Field(0.0, ge=0.0, le=60.0)
    """How long an injected timeout waits before failing."""

    @model_validator(mode="after")
    def _total_at_most_one(self) -> FaultRates:
        if self.total > 1.0 + 1e-9:
            raise ValueError(f"fault rates sum to {self.total:g}; at most 1")
        return self

    @property
    def total(self) -> float:
        return self.error + self.timeout + self.empty + self.garbage

    @classmethod
    def uniform(cls, rate: float, seed: int = 0) -> FaultRates:
        """`rate` split evenly among the four kinds."""
        return cls(**dict.fromkeys(KINDS, rate / len(KINDS)), seed=seed)


def _draw(rates: FaultRates, request: Request) -> str | None:
    """The fault kind for `request` (None: pass it through), a pure function of seed, role and content."""
    key = json.dumps([rates.seed, request.role, request.cache_key_data("")], sort_keys=True, default=str)
    u = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") / 2**64
    edge = 0.0
    for kind in KINDS:
        edge += getattr(rates, kind)
        if u < edge:
            return kind
    return None


def _garbage(request: Request, seed: int) -> str:
    rng = random.Random(f"{seed}:{(request.messages[-1].get('content') or '') if request.messages else ''}")
    alphabet = "{}[]<>\"':;,.!?@#$%^&*()~`|\\/ \n\tabcxyz0123456789ÿ€漢"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 80)))


class FaultyBackend:
    """Wraps a backend and injects faults at seeded rates (see the module docstring).

    `injected` counts the faults by kind; `passed` counts requests answered by the inner backend.
    """

    def __init__(self, inner: Backend, rates: FaultRates, *, name: str | None = None) -> None:
        self.inner = inner
        self.rates = rates
        self.name = name or f"faulty:{rates.total:g}:{inner.name}"
        self.injected: Counter[str] = Counter()
        self.passed = 0

    def fault_for(self, request: Request) -> str | None:
        return _draw(self.rates, request)

    async def _fault(self, kind: str, request: Request) -> Completion:
        self.injected[kind] += 1
        usage = Usage(sum(len((m.get("content") or "").split()) for m in request.messages), 0)
        base = {"usage": usage, "model": self.name, "role": request.role}
        if kind == "error":
            return Completion("", error="TransientError: injected fault (HTTP 503 after retries)", **base)
        if kind == "timeout":
            if self.rates.delay_s:
                await asyncio.sleep(self.rates.delay_s)
            return Completion("", error=f"Timeout: injected fault (no answer within {self.rates.delay_s:g}s)",
                              **base)
        if request.choices:  # a scoring request: an uninformative or a random score per choice
            rng = random.Random(f"{self.rates.seed}:{kind}:{request.cache_key_data('')}")
            logprobs = tuple(-1.0 if kind == "empty" else -20.0 * rng.random() for _ in request.choices)
            best = max(range(len(logprobs)), key=logprobs.__getitem__)
            return Completion(request.choices[best], choice_logprobs=logprobs, **base)
        if kind == "empty":
            return Completion("", **base)
        return Completion(_garbage(request, self.rates.seed), **base)

    async def complete(self, requests: Sequence[Request]) -> list[Completion]:
        kinds = [self.fault_for(r) for r in requests]
        through = [r for r, k in zip(requests, kinds, strict=True) if k is None]
        answers = iter(await self.inner.complete(through) if through else [])
        self.passed += len(through)
        out: list[Completion] = []
        for request, kind in zip(requests, kinds, strict=True):
            out.append(next(answers) if kind is None else await self._fault(kind, request))
        return out


def parse_spec(spec: str) -> FaultRates:
    """`0.3` or `error=0.1,timeout=0.05,...,seed=7` -> FaultRates (a one-line BackendError otherwise)."""
    spec = spec.strip()
    try:
        rate = float(spec)
    except ValueError:
        rate = None
    if rate is not None:
        if not 0.0 <= rate <= 1.0:
            raise BackendError(f"faulty rate {spec!r} must lie in [0, 1] ({FORM})")
        return FaultRates.uniform(rate)
    values: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        key, eq, value = item.partition("=")
        if not eq or key.strip() not in SPEC_KEYS:
            raise BackendError(f"faulty spec item {item!r}: expected KEY=VALUE with KEY one of "
                               f"{', '.join(SPEC_KEYS)} ({FORM})")
        values[key.strip()] = value.strip()
    if not values:
        raise BackendError(f"faulty spec {spec!r} is empty ({FORM})")
    try:
        return FaultRates.model_validate(values)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "rates"
        raise BackendError(f"faulty spec {spec!r}: {where}: {first['msg']} ({FORM})") from None


def faulty_factory(rest: str, options: BackendOptions) -> Backend:
    """The `faulty:` prefix: `SPEC:MODEL` -> FaultyBackend(build_backend(MODEL), parse_spec(SPEC))."""
    from evolve.backends.registry import build_backend

    spec, sep, inner_model = rest.partition(":")
    if not sep or not inner_model.strip():
        raise BackendError(f"'faulty:{rest}' names no inner model; expected {FORM}")
    rates = parse_spec(spec)
    inner = build_backend(inner_model, options)
    return FaultyBackend(inner, rates, name=f"faulty:{spec.strip()}:{inner.name}")
