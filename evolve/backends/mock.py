"""A mock backend for tests and examples.

Three modes, like DSPy's DummyLM and inspect's mockllm:

- a queue: `MockBackend(["a", "b"])` answers in order and raises when exhausted;
- a router: `MockBackend({"substring": "reply"})` answers with the reply of the first key found in
  the last user message (then the whole conversation); unmatched requests raise unless `default`;
- a callable: `MockBackend(fn)` with `fn(request) -> str` (exceptions become failed completions); it
  may also return a `Completion` (e.g. with native `tool_calls` when built with `native_tools=True`).

A request with `choices` is scored (`scores_choices`): the choice the answer text names (equal,
else contained, ignoring case) gets log-probability −0.1 and every other −5.0 (all −3.0 when it
names none); a callable may instead return a `Completion` with its own `choice_logprobs`.

Usage is faked from word counts so accounting code runs. `history` keeps every request. By default
the mock has no native tool calling, so the runtime talks to it with the text protocol.

`latency_s` makes every answer take that long (an `asyncio.sleep`, at most `concurrency` requests
at once), standing in for a model server in benchmarks of concurrency and distribution; from the
command line: `--model mock:latency=0.05`.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from evolve.backends.base import Completion, Request, Usage
from evolve.errors import BackendError


class MockExhausted(RuntimeError):
    """The mock has no answer for a request (queue empty or no route matched)."""


Responder = Sequence[str] | Mapping[str, str] | Callable[[Request], str | Completion] | None


class MockBackend:
    """Deterministic, zero-latency backend (see module docstring)."""

    def __init__(self, responses: Responder = None, default: str | None = None, name: str = "mock", *,
                 native_tools: bool = False, scores_choices: bool = True, latency_s: float = 0.0,
                 concurrency: int = 4) -> None:
        self.name = name
        self.native_tools = native_tools
        self.scores_choices = scores_choices
        self.latency_s = latency_s
        self.concurrency = concurrency
        self._semaphores: dict[int, asyncio.Semaphore] = {}
        self.default = default
        self.history: list[Request] = []
        self._queue: deque[str] | None = None
        self._routes: Mapping[str, str] | None = None
        self._fn: Callable[[Request], str] | None = None
        if callable(responses):
            self._fn = responses
        elif isinstance(responses, Mapping):
            self._routes = responses
        elif responses is not None:
            self._queue = deque(responses)
        elif default is None:
            self.default = "mock answer"

    def _answer(self, request: Request) -> str | Completion:
        if self._fn is not None:
            return self._fn(request)
        if self._routes is not None:
            last = (request.messages[-1].get("content") or "") if request.messages else ""
            whole = "\n".join(m.get("content") or "" for m in request.messages)
            for text in (last, whole):
                for key, reply in self._routes.items():
                    if key in text:
                        return reply
        elif self._queue:
            return self._queue.popleft()
        if self.default is not None:
            return self.default
        last = (request.messages[-1].get("content") or "")[:80] if request.messages else ""
        raise MockExhausted(f"mock backend has no answer for: {last!r}")

    def complete_one(self, request: Request) -> Completion:
        self.history.append(request)
        prompt_tokens = sum(len((m.get("content") or "").split()) for m in request.messages)
        try:
            text = self._answer(request)
        except MockExhausted:
            raise
        except Exception as exc:  # a callable's failure is a failed completion, like a model error
            return Completion("", Usage(prompt_tokens, 0), model=self.name, role=request.role, error=str(exc))
        if isinstance(text, Completion):
            return text
        if request.choices and self.scores_choices:
            return _scored(request, text, Usage(prompt_tokens, len(request.choices)), self.name)
        return Completion(text, Usage(prompt_tokens, len(text.split())), model=self.name, role=request.role)

    async def complete(self, requests: Sequence[Request]) -> list[Completion]:
        if self.latency_s <= 0:
            return [self.complete_one(r) for r in requests]
        return list(await asyncio.gather(*(self._delayed(r) for r in requests)))

    async def _delayed(self, request: Request) -> Completion:
        loop_id = id(asyncio.get_running_loop())
        if loop_id not in self._semaphores:
            self._semaphores = {loop_id: asyncio.Semaphore(self.concurrency)}
        async with self._semaphores[loop_id]:
            await asyncio.sleep(self.latency_s)
            completion = self.complete_one(request)
        return replace(completion, latency_s=self.latency_s)


def _scored(request: Request, text: str, usage: Usage, name: str) -> Completion:
    said = text.strip().lower()
    named = next((i for i, c in enumerate(request.choices) if c.lower() == said), None)
    if named is None:
        named = next((i for i, c in enumerate(request.choices) if c.lower() in said), None)
    logprobs = tuple(-3.0 if named is None else -0.1 if i == named else -5.0 for i in range(len(request.choices)))
    return Completion(request.choices[named or 0], usage, model=name, role=request.role, choice_logprobs=logprobs)


def mock_from_spec(spec: str, concurrency: int = 4) -> MockBackend:
    """`latency=SECONDS` -> a default-answer MockBackend with that delay (a one-line BackendError otherwise)."""
    key, eq, value = spec.partition("=")
    try:
        latency = float(value) if eq and key.strip() == "latency" else None
    except ValueError:
        latency = None
    if latency is None or not 0.0 <= latency <= 60.0:
        raise BackendError(f"mock option {spec!r}: expected latency=SECONDS with 0 <= SECONDS <= 60")
    return MockBackend(name=f"mock:latency={latency:g}", latency_s=latency, concurrency=concurrency)
