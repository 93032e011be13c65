"""The executor protocol: submit a batch of rollouts, get the results as they finish."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from evolve.bench.runtime import RolloutResult
from evolve.bench.task import Task
from evolve.errors import EvolveError
from evolve.harness.model import Harness

EXECUTORS = ("local", "ray")


class ExecutorError(EvolveError):
    """An executor cannot run a batch: the cluster is unreachable or a rollout failed on every attempt."""


@dataclass(frozen=True)
class RolloutBatch:
    """Every (task, trial) rollout of one harness: `trials` trials of each task, scored by `verifier`."""

    harness: Harness
    tasks: tuple[Task, ...]
    verifier: Any
    trials: int = 1
    seed: int = 0

    def keys(self) -> list[tuple[str, int]]:
        """The (task id, trial) key of every rollout of the batch, in batch order."""
        return [(task.id, k) for task in self.tasks for k in range(self.trials)]


class WorkerSpec(BaseModel):
    """How a remote worker builds its own policy backend: a model string and options, never a live client."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str
    """Policy model string (see `evolve models`)."""
    api_base: str | None = None
    """Server URL(s) of litellm models; comma-separated URLs form a health-checked pool per worker."""
    concurrency: int = Field(4, ge=1)
    """Model requests one worker has in flight at once (its bound per backend)."""
    timeout_s: float = 120.0
    max_retries: int = 3
    cache: bool = True
    """Use the persistent response cache on the worker's machine."""
    cache_dir: str | None = None
    """Folder of that cache (default: the worker's own `EVOLVE_CACHE_DIR` or `runs/cache`)."""


@runtime_checkable
class Executor(Protocol):
    """Runs the oracle's rollouts somewhere: in this process or on workers.

    Contract:
    - `run(batch)` is an async iterator that yields exactly one `RolloutResult` for every
      (task, trial) of the batch, in completion order: callers key results by (task id, trial),
      never by position.
    - Where a rollout runs never changes what it computes: for the same batch, seed and model the
      results equal those of `evolve.bench.runtime.evaluate` in the coordinating process.
    - A rollout whose worker dies before it finishes is submitted again; a finished rollout is
      yielded once, even if its work was repeated.
    - A failed model call is a scored failure inside a result (the runtime's rule), never an
      exception. `run` raises an `EvolveError` only when it cannot run at all (cluster unreachable,
      a rollout lost on every attempt, a backend that cannot be built).
    - Executors never write the lineage store: the coordinating process stores every result.
    - The model usage of the batch reaches the coordinator's meter (the policy `MeteredBackend`),
      so usage is stored the same way under any executor.
    - `close()` releases workers and connections; it is idempotent.
    """

    name: str

    def run(self, batch: RolloutBatch) -> AsyncIterator[RolloutResult]:
        """Yield one result per (task, trial) of `batch`, as they finish."""
        ...

    def close(self) -> None:
        """Release workers and connections (idempotent)."""
        ...
