"""A bounded, least-recently-used store of model states keyed by the prompt prefix they hold.

The embedded backend evaluates the part of a prompt that many requests share (a harness's system
prompt and few-shot turns) once, keeps the resulting KV state here, and restores it for every later
request with the same prefix, so only the task's own tokens are evaluated. The store holds opaque
bytes; it knows nothing of llama.cpp.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

DEFAULT_MAX_BYTES = 256 * 2**20
"""About twenty 600-token prefixes of SmolLM2-135M (about 22 KB of KV state per token)."""


class PrefixStates:
    """Up to `max_bytes` of states; the least recently used go first. A state larger than the whole
    budget is not kept."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0, got {max_bytes}")
        self.max_bytes = max_bytes
        self._states: OrderedDict[tuple[int, ...], bytes] = OrderedDict()
        self._bytes = 0
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._states)

    @property
    def size_bytes(self) -> int:
        """Bytes held now."""
        return self._bytes

    def get(self, prefix: Sequence[int]) -> bytes | None:
        """The state stored for exactly these prefix tokens (now the most recently used), or None."""
        key = tuple(prefix)
        state = self._states.get(key)
        if state is None:
            self.misses += 1
            return None
        self.hits += 1
        self._states.move_to_end(key)
        return state

    def put(self, prefix: Sequence[int], state: bytes) -> None:
        """Store `state` for these prefix tokens, dropping the least recently used beyond the budget."""
        key = tuple(prefix)
        old = self._states.pop(key, None)
        if old is not None:
            self._bytes -= len(old)
        if len(state) > self.max_bytes:
            return
        self._states[key] = state
        self._bytes += len(state)
        while self._bytes > self.max_bytes:
            _, dropped = self._states.popitem(last=False)
            self._bytes -= len(dropped)
