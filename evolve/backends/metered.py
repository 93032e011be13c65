"""Usage accounting: aggregate every call per (role, model) for the lineage store.

`MeteredBackend(inner)` passes requests through unchanged and counts, per (role, model): calls,
tokens in and out, latency, cache hits and errors. Tokens and latency of cache hits are not counted
(nothing was spent); hits are counted in `cached`. `drain()` returns the totals since the last drain
as `CallRecord`s, ready for `LineageStore.add_calls(run_id, records)`; `merge()` adds the drained
totals of another meter (a remote rollout worker's) to this one.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

from evolve.backends.base import Backend, Completion, Request
from evolve.backends.redact import redact
from evolve.store.records import CallRecord


@dataclass
class _Tally:
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    cached: int = 0
    errors: int = 0

    def add(self, completion: Completion) -> None:
        self.calls += 1
        if completion.cached:
            self.cached += 1
        else:
            self.tokens_in += completion.usage.prompt_tokens
            self.tokens_out += completion.usage.completion_tokens
            self.latency_s += completion.latency_s
        if not completion.ok:
            self.errors += 1


class MeteredBackend:
    """Wraps any backend and tallies its calls per (role, model); see the module docstring."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.name = inner.name
        self._tallies: dict[tuple[str, str], _Tally] = {}
        self._lock = threading.Lock()
        self._names: dict[str, str] = {}

    async def complete(self, requests: Sequence[Request]) -> list[Completion]:
        completions = await self.inner.complete(requests)
        self.record(requests, completions)
        return completions

    def record(self, requests: Sequence[Request], completions: Sequence[Completion]) -> None:
        """Count completions (the role comes from the request, the model from the completion)."""
        with self._lock:
            for request, completion in zip(requests, completions, strict=True):
                key = (request.role, self._model_name(completion.model or self.name))
                self._tallies.setdefault(key, _Tally()).add(completion)

    def merge(self, records: Sequence[CallRecord]) -> None:
        """Add totals counted elsewhere (a remote worker's `drain()`) to this meter's."""
        with self._lock:
            for r in records:
                tally = self._tallies.setdefault((r.role, r.model), _Tally())
                tally.calls += r.calls
                tally.tokens_in += r.tokens_in
                tally.tokens_out += r.tokens_out
                tally.latency_s += r.latency_s
                tally.cached += r.cached
                tally.errors += r.errors

    def _model_name(self, model: str) -> str:
        """The redacted model name (redaction scans the environment: done once per distinct name)."""
        name = self._names.get(model)
        if name is None:
            name = self._names[model] = redact(model)
        return name

    def _records(self) -> list[CallRecord]:
        return [
            CallRecord(role, model, t.calls, t.tokens_in, t.tokens_out, t.latency_s, t.cached, t.errors)
            for (role, model), t in sorted(self._tallies.items())
        ]

    def totals(self) -> list[CallRecord]:
        """The totals since the last drain, without resetting them."""
        with self._lock:
            return self._records()

    def drain(self) -> list[CallRecord]:
        """The totals since the last drain, and reset them (flush into `LineageStore.add_calls`)."""
        with self._lock:
            records = self._records()
            self._tallies.clear()
            return records
