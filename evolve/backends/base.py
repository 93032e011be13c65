"""The model backend protocol: async, batch-first, with usage per call and a role tag."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

Role = Literal["policy", "proposer", "critic", "surrogate", "analyst", "judge"]
ROLES: tuple[str, ...] = ("policy", "proposer", "critic", "surrogate", "analyst", "judge")


@dataclass(frozen=True)
class Usage:
    """Token usage of one call."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class ToolCall:
    """A native function call the model asked for."""

    id: str
    name: str
    arguments: str
    """The arguments as the model wrote them (JSON text, possibly invalid)."""

    def parsed(self) -> dict[str, Any] | None:
        """The arguments as a JSON object, or None when they are not one."""
        try:
            value = json.loads(self.arguments or "{}")
        except json.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None


@dataclass(frozen=True)
class Request:
    """One chat completion request."""

    messages: tuple[dict[str, Any], ...]
    """Chat messages (`role`, `content`), including an explicit system message; with native tools also
    assistant messages with `tool_calls` and `tool` messages with `tool_call_id` (OpenAI format)."""
    role: Role = "policy"
    """Who is asking (accounting only; never changes the answer)."""
    temperature: float = 0.0
    max_tokens: int = 256
    seed: int | None = None
    """Sampling seed (for temperature > 0; also distinguishes repeated samples in the cache)."""
    stop: tuple[str, ...] = ()
    json_schema: dict[str, Any] | None = field(default=None, hash=False)
    """Constrain the output to this JSON schema where the backend can."""
    tools: tuple[dict[str, Any], ...] = field(default=(), hash=False)
    """OpenAI-style function definitions offered for native tool calling (backends with `native_tools`)."""
    choices: tuple[str, ...] = ()
    """Score these replies instead of generating (backends with `scores_choices`): the Completion's
    `choice_logprobs` holds, in order, the log-probability of each choice as the start of the
    assistant reply, and its `text` is the most likely choice."""

    def cache_key_data(self, model: str) -> dict[str, Any]:
        """Everything that determines the answer (the role is not part of it)."""
        data = {
            "model": model,
            "messages": list(self.messages),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "stop": list(self.stop),
            "json_schema": self.json_schema,
        }
        if self.tools:
            data["tools"] = list(self.tools)
        if self.choices:
            data["choices"] = list(self.choices)
        return data


@dataclass(frozen=True)
class Completion:
    """One answer. `error` is set (and `text` empty) when the call failed after retries."""

    text: str
    usage: Usage = Usage()
    latency_s: float = 0.0
    model: str = ""
    role: Role = "policy"
    cached: bool = False
    error: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    """Native function calls of the reply (empty with the text protocol)."""
    choice_logprobs: tuple[float, ...] = ()
    """For a request with `choices`: the log-probability of each choice, in order (else empty)."""

    @property
    def ok(self) -> bool:
        return self.error is None


def capability(backend: Any, name: str) -> bool:
    """The boolean attribute `name` of `backend`, or of the first backend a chain of wrappers (the
    cache, the meter, ...) holds as `inner` that sets it; False when none does."""
    seen = 0
    while backend is not None and seen < 16:
        flag = getattr(backend, name, None)
        if flag is not None:
            return bool(flag)
        backend, seen = getattr(backend, "inner", None), seen + 1
    return False


def native_tools(backend: Any) -> bool:
    """Whether `backend` (or the backend a wrapper holds) sends tool definitions natively
    (`Request.tools`) and returns `Completion.tool_calls`."""
    return capability(backend, "native_tools")


def scores_choices(backend: Any) -> bool:
    """Whether `backend` (or the backend a wrapper holds) answers `Request.choices` with
    `Completion.choice_logprobs`."""
    return capability(backend, "scores_choices")


@runtime_checkable
class Backend(Protocol):
    """A model that completes chat requests.

    Contract:
    - `complete(requests)` returns exactly one Completion per request, in the same order.
    - A request that fails (after the backend's bounded retries) yields a Completion with `error`
      set and empty text; it never raises for individual failures, so a failed rollout becomes a
      scored failure. It raises `BackendError` only for systemic problems the user must fix
      (missing extra, model file not found).
    - It never blocks forever: every call has a timeout.
    - `name` is the model string that selected it (stored with rollouts; never contains secrets).
    - A backend with `native_tools = True` sends `Request.tools` as function definitions and returns
      the calls in `Completion.tool_calls`; others ignore `tools` (the runtime then uses the text
      protocol). Wrappers expose the backend they hold as `inner`.
    - A backend with `scores_choices = True` answers a request with `choices` by scoring them (no
      generation): `choice_logprobs` has one finite log-probability per choice, and `text` is the
      most likely choice. Others leave `choice_logprobs` empty (the runtime refuses such a harness).
    """

    name: str

    async def complete(self, requests: Sequence[Request]) -> list[Completion]:
        """Complete `requests` (possibly concurrently) and return one Completion each, in order."""
        ...
