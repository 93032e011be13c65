"""Where the oracle's rollouts run: in this process (`local`) or on a Ray cluster (`ray`).

`make_executor` builds the executor a run configuration names. Ray is imported only by the ray
executor, when it starts.
"""

from __future__ import annotations

from evolve.executors.base import EXECUTORS, Executor, ExecutorError, RolloutBatch, WorkerSpec
from evolve.executors.local import LocalExecutor

__all__ = ["EXECUTORS", "Executor", "ExecutorError", "LocalExecutor", "RolloutBatch", "WorkerSpec", "make_executor"]


def make_executor(kind: str, backend: object, spec: WorkerSpec | None = None, *, address: str | None = None,
                  workers: int = 8) -> Executor:
    """`local` runs on `backend` (a MeteredBackend) in this process; `ray` builds `workers` actors from `spec`
    whose usage is merged into `backend`."""
    if kind == "local":
        return LocalExecutor(backend)  # type: ignore[arg-type]
    if kind == "ray":
        from evolve.executors.ray_executor import RayExecutor, require_ray

        require_ray()
        if spec is None:
            raise ExecutorError("--executor ray builds each worker's backend from a model string; none was given")
        return RayExecutor(spec, address=address, workers=workers, meter=backend)
    raise ExecutorError(f"unknown executor {kind!r}; valid: {', '.join(EXECUTORS)}")
