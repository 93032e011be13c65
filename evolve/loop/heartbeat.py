"""Keeping a running run visibly alive while one step takes long.

The oracle marks the run alive whenever it stores rollouts, but a single long step (an LLM draft
on a slow CPU model, one slow multi-turn rollout) writes nothing for minutes; `evolve status`
would then call a healthy run stale/killed. `Heartbeat` beats from a daemon thread meanwhile.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from types import TracebackType

log = logging.getLogger(__name__)


class Heartbeat:
    """Calls `beat` every `interval_s` seconds from a daemon thread while the `with` block runs.

    A failing beat (a busy database) is logged and retried at the next interval; it never stops
    the run. Leaving the block stops the thread before returning.
    """

    def __init__(self, beat: Callable[[], None], interval_s: float = 15.0) -> None:
        self.beat, self.interval_s = beat, interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="evolve-heartbeat", daemon=True)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.beat()
            except Exception as exc:  # a missed beat is retried at the next interval; the run goes on
                log.debug("heartbeat failed: %s", exc)

    def __enter__(self) -> Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join()
