"""Several servers of one model: the health-checked pool drops a dead server and takes it back when it answers."""

from __future__ import annotations

import asyncio
import random
import time
from http.server import ThreadingHTTPServer

import pytest
from fake_openai import FakeOpenAI

from evolve.backends import Request
from evolve.backends.litellm_backend import LiteLLMBackend
from evolve.backends.pool import ServerPool, answers
from evolve.backends.retry import RetryPolicy

REQUEST = Request(messages=({"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}))


def _stop(server: FakeOpenAI) -> None:
    server._server.shutdown()
    server._server.server_close()


def _restart(server: FakeOpenAI, port: int) -> None:
    """Serve again on the same port (a restarted model server)."""
    server._server = ThreadingHTTPServer(("127.0.0.1", port), server._handler())
    server._server.daemon_threads = True
    import threading

    threading.Thread(target=server._server.serve_forever, daemon=True).start()


def test_pool_picks_the_least_busy_live_server():
    pool = ServerPool(["a", "b", "c"], check=lambda base, timeout: base != "b")
    pool.in_flight.update({"a": 2, "c": 1})
    assert pool.pick() == "b"  # b is still counted live until a check or a failure says otherwise
    asyncio.run(pool.check_all())
    assert pool.live == {"a", "c"} and pool.pick() == "c"
    pool.mark_down("a")
    pool.mark_down("c")
    assert pool.pick() in {"a", "b", "c"}  # none live: every server is tried
    with pytest.raises(ValueError):
        ServerPool([])


def test_health_check_answers_only_for_a_listening_server(fake_server):
    assert answers(fake_server.api_base, 2.0)
    fake_server.healthy = False  # answers 503: up, but not serving
    assert not answers(fake_server.api_base, 2.0)
    port = fake_server.port
    _stop(fake_server)
    assert not answers(f"http://127.0.0.1:{port}/v1", 1.0)


def test_dead_server_leaves_the_pool_and_comes_back(sleeps):
    with FakeOpenAI(default="from a") as a, FakeOpenAI(default="from b") as b:
        policy = RetryPolicy(max_retries=3, timeout_s=5.0)
        backend = LiteLLMBackend("hosted_vllm/fake-model", api_bases=[a.api_base, b.api_base], policy=policy,
                                 rng=random.Random(0), sleep=sleeps, health_interval_s=0.2)

        async def phases():
            first = await backend.complete([REQUEST] * 8)
            port = a.port
            _stop(a)
            down = await backend.complete([REQUEST] * 8)
            assert a.api_base not in backend.pool.live
            _restart(a, port)
            deadline = time.monotonic() + 10
            while a.api_base not in backend.pool.live and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            before = len(a.chat_requests)
            back = await backend.complete([REQUEST] * 8)
            return first, down, back, before

        first, down, back, before = asyncio.run(phases())
        _stop(a)
    assert {c.text for c in first} == {"from a", "from b"}
    assert all(c.ok for c in down) and {c.text for c in down} == {"from b"}  # no request lost
    assert {c.text for c in back} == {"from a", "from b"} and len(a.chat_requests) > before
