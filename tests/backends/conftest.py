"""Fixtures of the backend tests: a fake OpenAI-compatible server and a sleep that records delays."""

from __future__ import annotations

import pytest
from fake_openai import FakeOpenAI


@pytest.fixture
def fake_server():
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def sleeps():
    """A stand-in for asyncio.sleep that records the delays and returns at once."""
    delays: list[float] = []

    async def sleep(delay: float) -> None:
        delays.append(delay)

    sleep.delays = delays
    return sleep
