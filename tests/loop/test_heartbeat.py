"""The run stays visibly alive during long steps, and the beating stops with the run."""

from __future__ import annotations

import threading
import time

from evolve.loop.heartbeat import Heartbeat


def test_beats_while_the_block_runs_and_stops_after() -> None:
    beats: list[float] = []
    with Heartbeat(lambda: beats.append(time.monotonic()), interval_s=0.01):
        deadline = time.monotonic() + 5
        while len(beats) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)  # a long step that stores nothing
    assert len(beats) >= 3
    after = len(beats)
    time.sleep(0.05)
    assert len(beats) == after
    assert not any(t.name == "evolve-heartbeat" for t in threading.enumerate())


def test_a_failing_beat_does_not_stop_the_beating() -> None:
    calls = []

    def beat() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("database is locked")

    with Heartbeat(beat, interval_s=0.01):
        deadline = time.monotonic() + 5
        while len(calls) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    assert len(calls) >= 3
