"""The default executor: rollouts in this process, on one asyncio loop (what a run always did)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from evolve.backends.base import Backend
from evolve.bench.runtime import RolloutResult, evaluate
from evolve.executors.base import RolloutBatch


class LocalExecutor:
    """Runs a batch with `evolve.bench.runtime.evaluate` on `backend` (concurrency: the backend's own bound)."""

    name = "local"

    def __init__(self, backend: Backend) -> None:
        self.backend = backend

    async def run(self, batch: RolloutBatch) -> AsyncIterator[RolloutResult]:
        """All results of the batch once its last rollout is done (the runtime batches the requests)."""
        results = await evaluate(batch.harness, list(batch.tasks), self.backend, batch.verifier,
                                 trials=batch.trials, seed=batch.seed)
        for result in results:
            yield result

    def close(self) -> None:
        """Nothing to release."""
