"""The executor seam without a cluster: the local executor, order independence, usage merging, options."""

from __future__ import annotations

import asyncio
import importlib.util
import time

import pytest
from engine_mocks import RUN_OPTIONS, backends
from executor_helpers import ScrambledExecutor, sample_batch
from reliability_helpers import fingerprint

from evolve import api
from evolve.backends import MeteredBackend, MockBackend, Request, get_backend
from evolve.bench.runtime import evaluate
from evolve.errors import ConfigError, MissingExtraError
from evolve.executors import Executor, LocalExecutor, make_executor
from evolve.loop import setup
from evolve.run_config import make_config


def _collect(executor, batch):
    async def go():
        return [r async for r in executor.run(batch)]

    return asyncio.run(go())


def test_local_executor_yields_what_the_runtime_computes():
    batch = sample_batch()
    backend = MockBackend(lambda r: r.messages[-1]["content"][-12:])
    got = _collect(LocalExecutor(backend), batch)
    want = asyncio.run(evaluate(batch.harness, list(batch.tasks), backend, batch.verifier, trials=2, seed=5))
    assert got == want
    assert sorted((r.task_id, r.trial) for r in got) == sorted(batch.keys())
    assert isinstance(LocalExecutor(backend), Executor)


def test_lineage_does_not_depend_on_completion_order(tmp_path, monkeypatch):
    """The same run with results arriving in a scrambled order stores the same lineage, row for row."""
    a, b = f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    options = {**RUN_OPTIONS, "rounds": 2}
    policy, helper = backends()
    api.run(db=a, run_id="r", policy=policy, helper=helper, **options)

    real = setup.build_executor
    monkeypatch.setattr(setup, "build_executor",
                        lambda config, policy, injected=False: ScrambledExecutor(policy, seed=7))
    policy, helper = backends()
    api.run(db=b, run_id="r", policy=policy, helper=helper, **options)
    monkeypatch.setattr(setup, "build_executor", real)
    first, second = fingerprint(a, "r"), fingerprint(b, "r")
    assert first["rollouts"] and first == second


def test_meter_merges_a_workers_drained_usage():
    worker, coordinator = MeteredBackend(MockBackend()), MeteredBackend(MockBackend())
    request = Request(messages=({"role": "system", "content": ""}, {"role": "user", "content": "two words"}))
    asyncio.run(worker.complete([request, request]))
    asyncio.run(coordinator.complete([request]))
    coordinator.merge(worker.drain())
    [total] = coordinator.drain()
    assert (total.role, total.model, total.calls, total.tokens_in) == ("policy", "mock", 3, 6)
    assert worker.drain() == []


def test_mock_latency_is_bounded_by_concurrency():
    backend = get_backend("mock:latency=0.1", cache=False, concurrency=4)
    request = Request(messages=({"role": "user", "content": "x"},))
    start = time.perf_counter()
    out = asyncio.run(backend.complete([request] * 8))
    wall = time.perf_counter() - start
    assert [c.text for c in out] == ["mock answer"] * 8 and out[0].latency_s == pytest.approx(0.1)
    assert 0.2 <= wall < 0.6  # two waves of four, not eight at once and not one after another
    assert backend.name == "mock:latency=0.1"
    assert get_backend("mock", cache=False).latency_s == 0  # the plain mock stays instant


def test_executor_options_are_validated_and_stored(tmp_path):
    with pytest.raises(ConfigError, match="executor"):
        make_config(executor="spark")
    with pytest.raises(ConfigError, match="workers"):
        make_config(workers=0)
    config = make_config(model="mock", executor="local", workers=3, ray_address="127.0.0.1:6379")
    assert config.model_dump()["executor"] == "local" and config.model_dump()["workers"] == 3


def test_injected_backend_objects_cannot_go_to_ray_workers():
    config = make_config(model="mock", executor="ray")
    with pytest.raises(ConfigError, match="injected backend object"):
        setup.build_executor(config, MeteredBackend(MockBackend()), injected=True)


def test_ray_executor_without_ray_is_a_clear_error(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    with pytest.raises(MissingExtraError, match=r"pip install 'evolve-harness\[ray\]'"):
        make_executor("ray", MeteredBackend(MockBackend()))
