"""A rollout worker: the code a Ray actor runs (importable without Ray).

The worker builds its policy backend once, from the model string and options of its `WorkerSpec`
(never a client pickled by the coordinator), and runs chunks of a batch with the same runtime as
the local executor. Its concurrency is the backend's own bound (`WorkerSpec.concurrency` requests
in flight). It returns results and the usage of its calls; it never opens the lineage store.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence
from typing import Any

from evolve.bench.runtime import RolloutResult, evaluate
from evolve.bench.task import Task
from evolve.executors.base import WorkerSpec
from evolve.harness.model import Harness
from evolve.store.records import CallRecord


def portable_verifier(verifier: Any) -> Any:
    """A copy of `verifier` that can travel to a worker: a judge's live backend is left behind
    (the worker binds its own policy backend, as a local run binds the policy's)."""
    if getattr(verifier, "backend", None) is None:
        return verifier
    light = copy.copy(verifier)
    light.backend = None
    return light


class RolloutWorker:
    """Holds one metered policy backend and runs rollouts with it (see the module docstring)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        from evolve.backends import MeteredBackend, get_backend

        self.spec = WorkerSpec.model_validate(spec)
        if self.spec.cache_dir:
            os.environ["EVOLVE_CACHE_DIR"] = self.spec.cache_dir
        self.backend = MeteredBackend(get_backend(
            self.spec.model, api_base=self.spec.api_base, cache=self.spec.cache, timeout_s=self.spec.timeout_s,
            max_retries=self.spec.max_retries, concurrency=self.spec.concurrency))

    def pid(self) -> int:
        """The worker's process id (tests kill workers by pid)."""
        return os.getpid()

    async def run(self, harness: Harness, tasks: Sequence[Task], verifier: Any, trials: int,
                  seed: int) -> tuple[list[RolloutResult], list[CallRecord]]:
        """Roll `harness` out on `tasks` (every trial); return the results and the usage since the last call."""
        if getattr(verifier, "name", "") == "judge" and getattr(verifier, "backend", 1) is None:
            verifier.backend = self.backend
        results = await evaluate(harness, list(tasks), self.backend, verifier, trials=trials, seed=seed)
        return results, self.backend.drain()
