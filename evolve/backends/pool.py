"""A health-checked pool of OpenAI-compatible servers: the several `--api-base` URLs of one model.

Each request goes to the live server with the fewest requests in flight (ties: the next in turn).
A server that cannot be reached is taken out of the pool at once; a background check (`GET
{api_base}/models` every `interval_s`, one per event loop) takes out a server that stops answering
and returns it as soon as it answers again. When no server is live, every server is tried, so a
caller sees the real error instead of an empty pool.
"""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Sequence

HealthCheck = Callable[[str, float], bool]
"""`check(api_base, timeout_s)` -> whether the server answers (blocking; run in a thread)."""


def answers(api_base: str, timeout_s: float) -> bool:
    """Whether `GET {api_base}/models` gets an HTTP answer below 500 (401 counts: the server is up)."""
    try:
        with urllib.request.urlopen(f"{api_base.rstrip('/')}/models", timeout=timeout_s) as response:
            return response.status < 500
    except urllib.error.HTTPError as exc:
        return exc.code < 500
    except (urllib.error.URLError, OSError, ValueError):
        return False


class ServerPool:
    """Picks a server for each request and keeps the set of live ones (see the module docstring)."""

    def __init__(self, bases: Sequence[str], *, interval_s: float = 5.0, timeout_s: float = 2.0,
                 check: HealthCheck = answers) -> None:
        if not bases:
            raise ValueError("a server pool needs at least one api_base")
        self.bases = list(bases)
        self.live = set(self.bases)
        self.in_flight: Counter[str] = Counter()
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self._check = check
        self._turn = 0
        self._checkers: dict[int, asyncio.Task] = {}

    def pick(self) -> str:
        """The live server with the fewest requests in flight (every server when none is live)."""
        candidates = [b for b in self.bases if b in self.live] or self.bases
        fewest = min(self.in_flight[b] for b in candidates)
        tied = [b for b in candidates if self.in_flight[b] == fewest]
        self._turn += 1
        return tied[self._turn % len(tied)]

    def mark_down(self, base: str) -> None:
        """Take `base` out of the pool until a health check sees it answer again."""
        self.live.discard(base)

    async def check_all(self) -> None:
        """Probe every server once (concurrently) and update the live set."""
        results = await asyncio.gather(*(asyncio.to_thread(self._check, b, self.timeout_s) for b in self.bases))
        for base, ok in zip(self.bases, results, strict=True):
            if ok:
                self.live.add(base)
            else:
                self.live.discard(base)

    def ensure_checker(self) -> None:
        """Start the background health check on the running event loop (once per loop)."""
        loop = asyncio.get_running_loop()
        task = self._checkers.get(id(loop))
        if task is None or task.done():
            self._checkers = {id(loop): loop.create_task(self._check_forever())}

    async def _check_forever(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            await self.check_all()
