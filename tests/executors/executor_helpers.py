"""Shared pieces of the executor tests: a batch on a shipped benchmark and an order-scrambling executor."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

from evolve.bench.benchmark import load_benchmark
from evolve.executors import LocalExecutor, RolloutBatch
from evolve.harness import load_harness
from evolve.paths import resolve_named


def sample_batch(n_tasks: int = 12, trials: int = 2, seed: int = 5) -> RolloutBatch:
    bench = load_benchmark("extract-city", seed=0)
    harness = load_harness(resolve_named("harnesses", "minimal", marker="harness.yaml"))
    return RolloutBatch(harness, tuple(bench.split("validation")[:n_tasks]), bench.verifier, trials=trials, seed=seed)


class ScrambledExecutor:
    """Runs locally but yields the results in a seeded random order (as workers finishing out of turn would)."""

    name = "scrambled"

    def __init__(self, backend, seed: int) -> None:
        self.inner = LocalExecutor(backend)
        self.rng = random.Random(seed)

    async def run(self, batch: RolloutBatch) -> AsyncIterator:
        results = [r async for r in self.inner.run(batch)]
        self.rng.shuffle(results)
        for r in results:
            yield r

    def close(self) -> None:
        pass
