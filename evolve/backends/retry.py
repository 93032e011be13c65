"""Bounded retries with exponential backoff and jitter for remote model calls.

Transient failures are retried: HTTP 408/409/425/429 and 5xx, connection errors and timeouts.
Everything else (bad request, authentication, unknown model) fails at once. Each attempt runs under
a hard `asyncio.timeout`, so a call never blocks longer than
`(max_retries + 1) * timeout_s + sum(backoff delays)`.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")

TRANSIENT_STATUS = frozenset({408, 409, 425, 429})
_TRANSIENT_NAMES = (
    "Timeout",
    "TimeoutError",
    "APIConnectionError",
    "ConnectError",
    "ConnectionError",
    "ReadTimeout",
    "RateLimitError",
    "ServiceUnavailableError",
    "InternalServerError",
    "BadGatewayError",
    "RouterRateLimitError",
)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry."""

    max_retries: int = 3
    """Retries after the first attempt (0 = try once)."""
    timeout_s: float = 120.0
    """Hard limit of one attempt."""
    base_delay_s: float = 0.5
    """Delay before the first retry; doubles each time."""
    max_delay_s: float = 20.0
    """Cap of one delay (before jitter)."""

    def delay(self, attempt: int, rng: random.Random) -> float:
        """Backoff before retry number `attempt` (0-based): capped exponential plus up to 50% jitter."""
        base = min(self.max_delay_s, self.base_delay_s * (2**attempt))
        return base * (1.0 + 0.5 * rng.random())


def status_code(exc: BaseException) -> int | None:
    """The HTTP status carried by an exception, if any."""
    for attr in ("status_code", "status"):
        value = getattr(exc, attr, None)
        if isinstance(value, int):
            return value
    response = getattr(exc, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) else None


def is_transient(exc: BaseException) -> bool:
    """Whether retrying `exc` can help (rate limit, server error, connection problem, timeout)."""
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    code = status_code(exc)
    if code is not None and (code in TRANSIENT_STATUS or code >= 500):
        return True
    names = {cls.__name__ for cls in type(exc).__mro__}
    return any(name in names for name in _TRANSIENT_NAMES) and not (code is not None and code < 500)


class RetriesExhausted(Exception):
    """The last error of a call that failed on every attempt (or at once, if not transient)."""

    def __init__(self, last: BaseException, attempts: int) -> None:
        super().__init__(str(last))
        self.last = last
        self.attempts = attempts


async def call_with_retries(
    fn: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    rng: random.Random,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
) -> T:
    """Await `fn()` under the policy; raise `RetriesExhausted` wrapping the last error when it gives up."""
    attempt = 0
    while True:
        try:
            async with asyncio.timeout(policy.timeout_s):
                return await fn()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            if not is_transient(exc) or attempt >= policy.max_retries:
                raise RetriesExhausted(exc, attempt + 1) from exc
            await sleep(policy.delay(attempt, rng))
            attempt += 1
