"""The response cache (hits skip the model, errors are not stored) and usage metering per (role, model)."""

from __future__ import annotations

import asyncio

from evolve.backends import CachedBackend, MeteredBackend, MockBackend, Request
from evolve.backends.cache import cache_key
from evolve.backends.redact import redact
from evolve.store.records import CallRecord


def _req(text: str, **kwargs) -> Request:
    return Request(messages=({"role": "system", "content": "sys"}, {"role": "user", "content": text}), **kwargs)


def _counting_mock() -> MockBackend:
    return MockBackend(lambda r: f"answer {len(r.messages[-1]['content'])}")


def test_cache_hit_does_not_call_the_model(tmp_path):
    inner = _counting_mock()
    backend = CachedBackend(inner, folder=tmp_path / "c")
    first = asyncio.run(backend.complete([_req("one"), _req("three")]))
    again = asyncio.run(backend.complete([_req("three", role="critic"), _req("one"), _req("fresh")]))
    assert len(inner.history) == 3  # "one", "three", then only "fresh"
    assert [c.cached for c in first] == [False, False]
    assert [c.cached for c in again] == [True, True, False]
    assert again[0].text == first[1].text and again[0].usage == first[1].usage
    assert again[0].role == "critic"  # the role is not part of the key but is reported
    assert (backend.hits, backend.misses) == (2, 3)


def test_cache_persists_across_instances(tmp_path):
    asyncio.run(CachedBackend(_counting_mock(), folder=tmp_path / "c").complete([_req("x")]))
    inner = MockBackend([])  # would raise if called
    [hit] = asyncio.run(CachedBackend(inner, folder=tmp_path / "c").complete([_req("x")]))
    assert hit.cached and hit.text == "answer 1" and inner.history == []


def test_errors_and_unseeded_sampling_are_not_cached(tmp_path):
    calls = []

    def flaky(request: Request) -> str:
        calls.append(request)
        if len(calls) == 1:
            raise RuntimeError("transient")
        return "fine"

    backend = CachedBackend(MockBackend(flaky), folder=tmp_path / "c")
    [failed] = asyncio.run(backend.complete([_req("q")]))
    [ok] = asyncio.run(backend.complete([_req("q")]))
    assert not failed.ok and ok.ok and not ok.cached
    sampled = _req("s", temperature=0.8)
    seeded = _req("s", temperature=0.8, seed=3)
    asyncio.run(backend.complete([sampled, seeded]))
    [again_sampled, again_seeded] = asyncio.run(backend.complete([sampled, seeded]))
    assert not again_sampled.cached and again_seeded.cached


def test_cache_key_covers_decoding_but_not_role():
    base = _req("q")
    assert cache_key(base, "m") == cache_key(_req("q", role="proposer"), "m")
    for other in (_req("q", max_tokens=7), _req("q", seed=1), _req("q", stop=("x",)), _req("Q"),
                  _req("q", json_schema={"type": "object"})):
        assert cache_key(other, "m") != cache_key(base, "m")
    assert cache_key(base, "m") != cache_key(base, "other")


def test_cache_defaults_to_the_evolve_cache_dir(_isolated_home):
    from evolve.backends import get_backend

    backend = get_backend("mock")
    asyncio.run(backend.complete([_req("x")]))
    assert (_isolated_home / "cache" / "responses").is_dir()


def test_metered_backend_aggregates_per_role_and_model(tmp_path):
    inner = CachedBackend(MockBackend(lambda r: "two words" if "bad" not in r.messages[-1]["content"] else 1 / 0),
                          folder=tmp_path / "c")
    metered = MeteredBackend(inner)
    asyncio.run(metered.complete([_req("a b"), _req("bad", role="critic"), _req("c", role="proposer")]))
    asyncio.run(metered.complete([_req("a b")]))  # a cache hit
    records = {r.role: r for r in metered.drain()}
    assert records["policy"] == CallRecord("policy", "mock", calls=2, tokens_in=3, tokens_out=2,
                                           latency_s=records["policy"].latency_s, cached=1, errors=0)
    assert records["critic"].errors == 1 and records["critic"].calls == 1
    assert records["proposer"].tokens_out == 2
    assert metered.drain() == []


def test_metered_records_are_stored_by_the_lineage_store(db_url):
    from evolve.store import LineageStore

    metered = MeteredBackend(MockBackend(default="ok"))
    asyncio.run(metered.complete([_req("x"), _req("y z", role="judge"), _req("w", role="judge")]))
    store = LineageStore(db_url)
    store.create_run("r1", {})
    store.add_calls("r1", metered.drain())
    usage = store.usage_by_role("r1")
    assert usage["policy"]["calls"] == 1 and usage["judge"]["calls"] == 2
    assert usage["judge"]["tokens_in"] == 2 + 3 and usage["judge"]["tokens_out"] == 2


def test_redaction_masks_credentials(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_API_KEY", "verysecretvalue42")
    text = ("http://bob:hunter2@host:8000/v1?api_key=abc123&x=1 Bearer abcdefghijk "
            "sk-proj-abcdefghijklmnop verysecretvalue42")
    clean = redact(text)
    for secret in ("hunter2", "abc123", "abcdefghijk", "sk-proj-abcdefghijklmnop", "verysecretvalue42"):
        assert secret not in clean
    assert "host:8000/v1" in clean and "x=1" in clean
