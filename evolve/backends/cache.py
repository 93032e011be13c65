"""A persistent response cache in front of any backend.

Keys are the SHA-256 of the canonical JSON of `Request.cache_key_data(model)`: the model string,
messages and decoding parameters (not the role, which never changes an answer). Only reproducible
requests are cached: temperature 0, or sampling with an explicit seed. Failed completions are never
stored. A hit returns the stored text and usage with `cached=True` without calling the model.

The store is a `diskcache.Cache` (SQLite, safe across processes) under `evolve.paths.cache_dir()`.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from evolve.backends.base import Backend, Completion, Request, ToolCall, Usage
from evolve.backends.embedded import canonical_json
from evolve.paths import cache_dir

_caches: dict[str, Any] = {}


def open_cache(folder: Path | None = None) -> Any:
    """The `diskcache.Cache` of `folder` (default: `cache_dir()/responses`), opened once per process."""
    import diskcache

    path = str((folder or cache_dir() / "responses").expanduser().resolve())
    if path not in _caches:
        _caches[path] = diskcache.Cache(path)
    return _caches[path]


def is_cacheable(request: Request) -> bool:
    """Whether the answer is reproducible: greedy decoding, or sampling with a fixed seed."""
    return request.temperature == 0 or request.seed is not None


def cache_key(request: Request, model: str) -> str:
    """The cache key of `request` sent to `model`."""
    return hashlib.sha256(canonical_json(request.cache_key_data(model)).encode("utf-8")).hexdigest()


class CachedBackend:
    """Wraps a backend with the persistent response cache (same `name`, same contract)."""

    def __init__(self, inner: Backend, folder: Path | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self._cache = open_cache(folder)
        self.hits = 0
        self.misses = 0

    def _lookup(self, request: Request) -> Completion | None:
        if not is_cacheable(request):
            return None
        start = time.perf_counter()
        entry = self._cache.get(cache_key(request, self.name))
        if entry is None:
            return None
        usage = Usage(entry["prompt_tokens"], entry["completion_tokens"])
        elapsed = time.perf_counter() - start
        calls = tuple(ToolCall(*call) for call in entry.get("tool_calls", ()))
        return Completion(entry["text"], usage, elapsed, model=self.name, role=request.role, cached=True,
                          tool_calls=calls, choice_logprobs=tuple(entry.get("choice_logprobs", ())))

    def _store(self, request: Request, completion: Completion) -> None:
        if not completion.ok or not is_cacheable(request):
            return
        entry = {
            "text": completion.text,
            "prompt_tokens": completion.usage.prompt_tokens,
            "completion_tokens": completion.usage.completion_tokens,
        }
        if completion.tool_calls:
            entry["tool_calls"] = [[c.id, c.name, c.arguments] for c in completion.tool_calls]
        if completion.choice_logprobs:
            entry["choice_logprobs"] = list(completion.choice_logprobs)
        self._cache.set(cache_key(request, self.name), entry)

    async def complete(self, requests: Sequence[Request]) -> list[Completion]:
        """Answer hits from the cache and send only the misses to the wrapped backend."""
        results: list[Completion | None] = [self._lookup(r) for r in requests]
        missing = [i for i, c in enumerate(results) if c is None]
        self.hits += len(requests) - len(missing)
        self.misses += len(missing)
        if missing:
            fresh = await self.inner.complete([requests[i] for i in missing])
            for i, completion in zip(missing, fresh, strict=True):
                self._store(requests[i], completion)
                results[i] = replace(completion, role=requests[i].role)
        return [c for c in results if c is not None]
