"""The litellm backend: mock_response, retries on 429/500, timeouts, unreachable servers, load balancing."""

from __future__ import annotations

import asyncio
import random
import time

import pytest

from evolve.backends import Request, get_backend
from evolve.backends.litellm_backend import LiteLLMBackend, split_api_bases
from evolve.backends.retry import RetryPolicy
from evolve.errors import BackendError

REQUEST = Request(messages=({"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}))


def _backend(server_or_bases, sleep=None, **policy) -> LiteLLMBackend:
    bases = server_or_bases if isinstance(server_or_bases, list) else [server_or_bases.api_base]
    kwargs = {"sleep": sleep} if sleep is not None else {}
    policy = RetryPolicy(**{"max_retries": 3, "timeout_s": 5.0, **policy})
    return LiteLLMBackend("hosted_vllm/fake-model", api_bases=bases, policy=policy, rng=random.Random(0), **kwargs)


def test_mock_response_gives_text_and_usage():
    backend = LiteLLMBackend("openai/gpt-4.1-mini", extra_params={"mock_response": "hello there"})
    [done] = asyncio.run(backend.complete([REQUEST]))
    assert done.ok and done.text == "hello there"
    assert done.model == "openai/gpt-4.1-mini" and done.usage.total > 0


def test_mock_response_exception_becomes_failed_completion():
    backend = LiteLLMBackend("openai/gpt-4.1-mini", extra_params={"mock_response": Exception("boom")})
    [done] = asyncio.run(backend.complete([REQUEST]))
    assert not done.ok and "boom" in done.error and done.text == ""


def test_retries_429_and_500_then_succeeds(fake_server, sleeps):
    fake_server.script = [429, 500, 503]
    [done] = asyncio.run(_backend(fake_server, sleeps).complete([REQUEST]))
    assert done.ok and done.text == "fake answer"
    assert done.usage.prompt_tokens == 7 and done.usage.completion_tokens == 3
    assert len(fake_server.chat_requests) == 4  # the SDK adds no hidden retries
    assert len(sleeps.delays) == 3
    assert sleeps.delays[0] < sleeps.delays[1] < sleeps.delays[2]  # exponential backoff


def test_gives_up_after_bounded_retries(fake_server, sleeps):
    fake_server.script = [500] * 10
    [done] = asyncio.run(_backend(fake_server, sleeps, max_retries=2).complete([REQUEST]))
    assert not done.ok and "after 3 attempts" in done.error and "500" in done.error
    assert len(fake_server.chat_requests) == 3


def test_client_error_is_not_retried(fake_server, sleeps):
    fake_server.script = [400]
    [done] = asyncio.run(_backend(fake_server, sleeps).complete([REQUEST]))
    assert not done.ok and "400" in done.error and "after 1 attempt:" in done.error
    assert len(fake_server.chat_requests) == 1 and sleeps.delays == []


def test_timeout_is_retried_and_never_hangs(fake_server, sleeps):
    fake_server.script = [3.0, 3.0]
    start = time.monotonic()
    [done] = asyncio.run(_backend(fake_server, sleeps, max_retries=1, timeout_s=0.5).complete([REQUEST]))
    assert time.monotonic() - start < 2.5
    assert not done.ok and "after 2 attempts" in done.error


def test_unreachable_server_gives_clear_error(sleeps):
    with __import__("socket").socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    start = time.monotonic()
    backend = _backend([f"http://127.0.0.1:{port}/v1"], sleeps, max_retries=2, timeout_s=2.0)
    [done] = asyncio.run(backend.complete([REQUEST]))
    assert time.monotonic() - start < 10
    assert not done.ok and "cannot reach" in done.error and "after 3 attempts" in done.error


def test_concurrency_is_bounded_and_order_kept(fake_server):
    fake_server.default = "ok"
    requests = [Request(messages=({"role": "user", "content": f"q{i}"},)) for i in range(6)]
    fake_server.script = [0.3] * 6
    backend = LiteLLMBackend("hosted_vllm/fake-model", api_bases=[fake_server.api_base], concurrency=2)
    start = time.monotonic()
    done = asyncio.run(backend.complete(requests))
    elapsed = time.monotonic() - start
    assert [c.text for c in done] == ["ok"] * 6
    assert 0.85 < elapsed < 5  # 6 requests of 0.3 s, two at a time: three waves
    sent = sorted(r["messages"][0]["content"] for r in fake_server.chat_requests)
    assert sent == [f"q{i}" for i in range(6)]


def test_router_balances_over_several_api_bases(sleeps):
    from fake_openai import FakeOpenAI

    with FakeOpenAI(default="from a") as a, FakeOpenAI(default="from b") as b:
        backend = get_backend("hosted_vllm/fake-model", api_base=f"{a.api_base}, {b.api_base}", cache=False)
        done = asyncio.run(backend.complete([REQUEST] * 12))
    assert all(c.ok for c in done)
    assert {c.text for c in done} == {"from a", "from b"}
    assert len(a.chat_requests) + len(b.chat_requests) == 12


def test_request_parameters_reach_the_server(fake_server):
    schema = {"type": "object", "properties": {"x": {"type": "integer"}}}
    request = Request(messages=REQUEST.messages, temperature=0.7, max_tokens=9, seed=5, stop=("END",),
                      json_schema=schema)
    asyncio.run(_backend(fake_server).complete([request]))
    [body] = fake_server.chat_requests
    assert body["model"] == "fake-model" and body["max_tokens"] == 9 and body["seed"] == 5
    assert body["temperature"] == 0.7 and body["stop"] == ["END"]
    assert body["response_format"]["json_schema"]["schema"] == schema


def test_secrets_never_appear_in_name_or_errors(sleeps):
    secret = "sk-secretsecretsecret123"
    backend = LiteLLMBackend("openai/gpt-4.1-mini", api_key=secret,
                             extra_params={"mock_response": Exception(f"auth failed for key {secret}")})
    [done] = asyncio.run(backend.complete([REQUEST]))
    assert secret not in done.error and "***" in done.error
    with_creds = get_backend("hosted_vllm/m", api_base="http://user:pa55word@127.0.0.1:9/v1", cache=False,
                             max_retries=0, timeout_s=2.0)
    [failed] = asyncio.run(with_creds.complete([REQUEST]))
    assert "pa55word" not in failed.error and "pa55word" not in with_creds.name


def test_unknown_provider_and_missing_api_base():
    with pytest.raises(BackendError, match="unknown litellm provider 'nosuchprovider'"):
        get_backend("nosuchprovider/model")
    with pytest.raises(BackendError, match="needs --api-base"):
        get_backend("hosted_vllm/some-model")


def test_split_api_bases():
    assert split_api_bases(" http://a/v1/, http://b/v1 ,") == ["http://a/v1", "http://b/v1"]
    assert split_api_bases(None) == []
