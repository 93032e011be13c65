"""The Ray executor: rollouts run on Ray actors, results come back to the coordinating process.

`RayExecutor` connects with `ray.init(address=...)` (an existing cluster: `ray start --head` on
one machine, `ray start --address HEAD:6379` on the others) or, without an address (or with
`local`), starts a cluster of this machine alone, on the loopback address, that it shuts down
again in `close()`. It starts `workers` actors of `RolloutWorker` once,
spread over the cluster's nodes; each builds its own backend from the `WorkerSpec`.

A batch is cut into chunks of tasks (all trials of a task stay together); each worker has at most
two chunks in flight, so a worker keeps its backend busy while a result travels back. A worker that
dies mid-chunk (killed, out of memory, node lost) fails its in-flight chunks with
`RayActorError`; a fresh worker takes the dead one's place and those chunks are submitted again,
at most `max_attempts` times each. Results are yielded once per (task, trial), whatever was
repeated. Workers never open the lineage store.
"""

from __future__ import annotations

import asyncio
import importlib.util
import math
import os
import sys
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

from evolve.bench.runtime import RolloutResult
from evolve.errors import MissingExtraError, one_line
from evolve.executors.base import ExecutorError, RolloutBatch, WorkerSpec
from evolve.executors.worker import RolloutWorker, portable_verifier

IN_FLIGHT_PER_WORKER = 2


def require_ray() -> None:
    """Raise MissingExtraError unless Ray is installed."""
    if importlib.util.find_spec("ray") is None:
        raise MissingExtraError("--executor ray", "ray", "ray")


def chunk_size(n_tasks: int, workers: int, concurrency: int) -> int:
    """Tasks per chunk: enough to fill a worker's concurrency, small enough to spread a batch over all workers."""
    return max(1, min(concurrency, math.ceil(n_tasks / max(1, workers))))


class RayExecutor:
    """Runs batches on Ray actors (see the module docstring)."""

    name = "ray"

    def __init__(self, spec: WorkerSpec, *, address: str | None = None, workers: int = 8, meter: Any = None,
                 max_attempts: int = 3, num_cpus: float = 0.0) -> None:
        if workers < 1:
            raise ExecutorError(f"--workers must be at least 1, got {workers}")
        self.spec = spec
        self.address = address
        self.workers = workers
        self.meter = meter
        self.max_attempts = max_attempts
        self.num_cpus = num_cpus
        """CPUs a worker reserves (0: workers mostly wait on model servers, so any number fit a node)."""
        self.resubmitted = 0
        """Chunks submitted again after their worker died."""
        self.replaced = 0
        """Workers started in place of dead ones."""
        self._actors: list[Any] = []
        self._remote: Any = None
        self._started_ray = False

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Connect to (or start) the cluster and start the workers; done once."""
        if self._actors:
            return
        require_ray()
        if self.address in (None, "local") and "ray" not in sys.modules:
            # a cluster of this machine alone listens on the loopback address, not on the network
            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        import ray

        if not ray.is_initialized():
            try:
                ray.init(address=self.address or "local", include_dashboard=False, logging_level="ERROR",
                         log_to_driver=False, configure_logging=False)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise ExecutorError(self._describe(exc)) from None
            self._started_ray = True
        self._remote = ray.remote(num_cpus=self.num_cpus, max_restarts=0, max_task_retries=0,
                                  scheduling_strategy="SPREAD", max_concurrency=64)(RolloutWorker)
        self._actors = [self._new_actor() for _ in range(self.workers)]

    def _describe(self, exc: BaseException) -> str:
        if self.address in (None, "local"):
            return one_line(f"cannot start a local Ray cluster: {exc}")
        return one_line(f"cannot join the Ray cluster at {self.address}: {exc} (is it up? a cluster with token "
                        "authentication also needs RAY_AUTH_MODE=token and its token here)")

    def _new_actor(self) -> Any:
        return self._remote.remote(self.spec.model_dump())

    def _replace(self, worker: int) -> None:
        import ray

        try:
            ray.kill(self._actors[worker], no_restart=True)
        except Exception:  # already gone
            pass
        self._actors[worker] = self._new_actor()
        self.replaced += 1

    def pids(self) -> list[int]:
        """Process ids of the workers (for fault tests and diagnostics)."""
        import ray

        self.start()
        return ray.get([a.pid.remote() for a in self._actors])

    def close(self) -> None:
        """Stop the workers, and the local cluster if this executor started it."""
        if not self._actors and not self._started_ray:
            return
        import ray

        for actor in self._actors:
            try:
                ray.kill(actor)
            except Exception:  # a dead actor or a gone cluster has nothing left to stop
                pass
        self._actors = []
        if self._started_ray:
            ray.shutdown()
            self._started_ray = False

    # -- running -----------------------------------------------------------------------------

    async def run(self, batch: RolloutBatch) -> AsyncIterator[RolloutResult]:
        """Yield the batch's results as chunks finish; resubmit the chunks of dead workers."""
        import ray

        self.start()
        harness_ref = ray.put(batch.harness)
        verifier_ref = ray.put(portable_verifier(batch.verifier))
        size = chunk_size(len(batch.tasks), self.workers, self.spec.concurrency)
        pending = deque(batch.tasks[i:i + size] for i in range(0, len(batch.tasks), size))
        attempts: dict[str, int] = {}
        load = dict.fromkeys(range(len(self._actors)), 0)
        in_flight: dict[asyncio.Future, tuple[tuple, int, Any]] = {}
        seen: set[tuple[str, int]] = set()
        try:
            while pending or in_flight:
                self._submit(pending, load, in_flight, harness_ref, verifier_ref, batch)
                done, _ = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
                for future in done:
                    chunk, worker, actor = in_flight.pop(future)
                    load[worker] -= 1
                    outcome = self._outcome(future, chunk, worker, actor, attempts, pending)
                    for result in outcome:
                        if (result.task_id, result.trial) not in seen:
                            seen.add((result.task_id, result.trial))
                            yield result
        finally:
            for future in in_flight:
                future.cancel()

    def _submit(self, pending: deque, load: dict[int, int], in_flight: dict, harness_ref: Any, verifier_ref: Any,
                batch: RolloutBatch) -> None:
        while pending:
            worker = min(load, key=lambda i: (load[i], i))
            if load[worker] >= IN_FLIGHT_PER_WORKER:
                return
            chunk = pending.popleft()
            actor = self._actors[worker]
            ref = actor.run.remote(harness_ref, chunk, verifier_ref, batch.trials, batch.seed)
            in_flight[asyncio.ensure_future(_resolve(ref))] = (chunk, worker, actor)
            load[worker] += 1

    def _outcome(self, future: asyncio.Future, chunk: tuple, worker: int, actor: Any, attempts: dict[str, int],
                 pending: deque) -> list[RolloutResult]:
        from ray.exceptions import RayActorError

        try:
            results, calls = future.result()
        except RayActorError as exc:
            if self._actors[worker] is actor:  # the first of its chunks to fail replaces the dead worker
                self._replace(worker)
            key = chunk[0].id
            attempts[key] = attempts.get(key, 0) + 1
            if attempts[key] >= self.max_attempts:
                raise ExecutorError(one_line(f"rollouts of tasks {[t.id for t in chunk][:5]} were lost "
                                             f"{attempts[key]} times with their workers: {exc}")) from None
            self.resubmitted += 1
            pending.appendleft(chunk)
            return []
        if self.meter is not None and calls:
            self.meter.merge(calls)
        return results


async def _resolve(ref: Any) -> Any:
    """The value of a Ray object reference, awaited on the running loop; a task's own error is re-raised as is."""
    from ray.exceptions import RayTaskError

    try:
        return await ref
    except RayTaskError as exc:
        cause = getattr(exc, "cause", None)
        if isinstance(cause, BaseException):
            raise cause from None
        raise

