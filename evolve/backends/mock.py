"""A mock backend for tests and examples.

Three modes, like DSPy's DummyLM and inspect's mockllm:

- a queue: `MockBackend(["a", "b"])` answers in order and raises when exhausted;
- a router: `MockBackend({"substring": "reply"})` answers with the reply of the first key found in
  the last user message (then the whole conversation); unmatched requests raise unless `default`;
- a callable: `MockBackend(fn)` with `fn(request) -> str` (exceptions become failed completions); it
  may also return a `Completion` (e.g. with native `tool_calls` when built with `native_tools=True`).

Usage is faked from word counts so accounting code runs. `history` keeps every request. By default
the mock has no native tool calling, so the runtime talks to it with the text protocol.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence

from evolve.backends.base import Completion, Request, Usage


class MockExhausted(RuntimeError):
    """The mock has no answer for a request (queue empty or no route matched)."""


Responder = Sequence[str] | Mapping[str, str] | Callable[[Request], str | Completion] | None


class MockBackend:
    """Deterministic, zero-latency backend (see module docstring)."""

    def __init__(self, responses: Responder = None, default: str | None = None, name: str = "mock", *,
                 native_tools: bool = False) -> None:
        self.name = name
        self.native_tools = native_tools
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
        return Completion(text, Usage(prompt_tokens, len(text.split())), model=self.name, role=request.role)

    async def complete(self, requests: Sequence[Request]) -> list[Completion]:
        return [self.complete_one(r) for r in requests]
