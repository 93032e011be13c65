"""The model backend protocol: async, batch-first, with usage per call and a role tag."""

from __future__ import annotations

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
class Request:
    """One chat completion request."""

    messages: tuple[dict[str, str], ...]
    """Chat messages (`role`, `content`), including an explicit system message."""
    role: Role = "policy"
    """Who is asking (accounting only; never changes the answer)."""
    temperature: float = 0.0
    max_tokens: int = 256
    seed: int | None = None
    """Sampling seed (for temperature > 0; also distinguishes repeated samples in the cache)."""
    stop: tuple[str, ...] = ()
    json_schema: dict[str, Any] | None = field(default=None, hash=False)
    """Constrain the output to this JSON schema where the backend can."""

    def cache_key_data(self, model: str) -> dict[str, Any]:
        """Everything that determines the answer (the role is not part of it)."""
        return {
            "model": model,
            "messages": list(self.messages),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "stop": list(self.stop),
            "json_schema": self.json_schema,
        }


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

    @property
    def ok(self) -> bool:
        return self.error is None


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
    """

    name: str

    async def complete(self, requests: Sequence[Request]) -> list[Completion]:
        """Complete `requests` (possibly concurrently) and return one Completion each, in order."""
        ...
