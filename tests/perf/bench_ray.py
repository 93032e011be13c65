"""Rollouts on Ray workers vs in this process, side by side, with a mock model of fixed latency.

Prints, from one run of each side:
- `ray_same_results`: 1 when `evolve run --model mock --rounds 2 --budget 200 --seed 3` gives the same
  `rollouts_spent`, `accepted_edits` and best test score (and the same lineage rows) under `--executor ray`
  as under `--executor local` (the script exits 1 otherwise);
- `ray_speedup_8_workers`: local wall / ray wall for one oracle batch (harness `minimal` on the
  validation and test splits of `extract-city`, 2 trials: 320 rollouts) on `mock:latency=0.05`.
  Local runs as a user runs it on one machine: one process, the default `concurrency` of 4 requests
  in flight (the bound per model server). Ray: 8 workers, each with its own backend and the same bound
  of 4 (as with one model server per worker). Workers are started before the clock starts
  (`ray_workers_start_s`);
- `ray_speedup_full_run_8_workers`: the same comparison for a whole `evolve run` (2 rounds) on
  `mock:latency=0.05`: proposer calls and small bandit minibatches stay on the coordinator;
- `coordinator_overhead_per_rollout_ms`: CPU time of the coordinating process per rollout during
  the ray batch (dispatch, transfer, decoding, storing): what a single coordinator spends per rollout;
- `store_write_rollouts_per_s`: rollouts the coordinator's store (SQLite file) takes per second in the
  oracle's writes of 64; `coordinator_max_rollouts_per_s` is the lower of that and
  1000 / coordinator_overhead_per_rollout_ms: the rate at which the single writer saturates.

`--workers N` (or EVOLVE_BENCH_RAY_WORKERS=N) adds N simulated workers: a batch of 1,600 rollouts
(`ray_workers_N_rollouts_per_s`) and a whole 2-round run (`ray_workers_N_run_rollouts_per_s`); N=100
was run once for RELIABILITY.md (about 100 MB of memory per worker).
Without the `ray` extra the script says so and exits 0.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import tempfile
import time
from pathlib import Path

LATENCY_S = 0.05
CONCURRENCY = 4
WORKERS = 8


def _batch(trials: int = 2):
    from evolve.bench.benchmark import load_benchmark
    from evolve.executors import RolloutBatch
    from evolve.harness import load_harness
    from evolve.paths import resolve_named

    bench = load_benchmark("extract-city", seed=0)
    harness = load_harness(resolve_named("harnesses", "minimal", marker="harness.yaml"))
    tasks = (*bench.split("validation"), *bench.split("test"))
    return bench, RolloutBatch(harness, tasks, bench.verifier, trials=trials, seed=0)


def _oracle_wall(tmp: Path, executor, name: str, trials: int = 2) -> tuple[float, float, int]:
    """Wall and coordinator CPU seconds of one oracle batch on `executor`, and the rollouts stored."""
    from evolve.loop.oracle import Oracle
    from evolve.store import LineageStore

    bench, batch = _batch(trials)
    store = LineageStore(f"sqlite:///{tmp / f'{name}.db'}")
    store.create_run(name, {}, seed=0)
    oracle = Oracle(store, name, getattr(executor, "backend", None), trials=batch.trials, executor=executor)
    wall, cpu = time.perf_counter(), time.process_time()
    asyncio.run(oracle.evaluate(batch.harness, bench, "validation", list(batch.tasks)))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    n = store.count_rollouts(name)
    store.close()
    return wall, cpu, n


def _ray_executor(workers: int, latency: float = LATENCY_S):
    from evolve.executors import WorkerSpec
    from evolve.executors.ray_executor import RayExecutor

    spec = WorkerSpec(model=f"mock:latency={latency:g}", concurrency=CONCURRENCY, cache=False)
    executor = RayExecutor(spec, workers=workers)
    start = time.perf_counter()
    executor.pids()  # every worker is up and has built its backend
    return executor, time.perf_counter() - start


def _local_executor():
    from evolve.backends import MeteredBackend, get_backend
    from evolve.executors import LocalExecutor

    backend = get_backend(f"mock:latency={LATENCY_S:g}", cache=False, concurrency=CONCURRENCY)
    return LocalExecutor(MeteredBackend(backend))


def _run(tmp: Path, name: str, executor, **options) -> tuple[dict, float]:
    """A whole run with `executor` (already started), its summary and wall seconds."""
    from evolve.loop.engine import Engine
    from evolve.loop.setup import build_parts
    from evolve.run_config import make_config
    from evolve.store import LineageStore

    config = make_config(cache=False, **options)
    parts = build_parts(config)
    if executor is not None:
        parts.executor = executor
    store = LineageStore(f"sqlite:///{tmp / f'{name}.db'}")
    store.create_run(name, config.model_dump(mode="json"), seed=config.seed)
    start = time.perf_counter()
    summary = asyncio.run(Engine(store, name, parts).run())
    wall = time.perf_counter() - start
    store.close()
    return summary, wall


def _same_results(tmp: Path) -> bool:
    """`evolve run --model mock --rounds 2 --budget 200 --seed 3` under both executors (workers built by the run)."""
    from evolve import api

    options = {"model": "mock", "rounds": 2, "budget": 200, "seed": 3, "cache": False}
    local = api.run(db=f"sqlite:///{tmp / 'same-local.db'}", run_id="same", executor="local", **options)
    remote = api.run(db=f"sqlite:///{tmp / 'same-ray.db'}", run_id="same", executor="ray", workers=WORKERS,
                     **options)
    keys = ("rollouts_spent", "accepted_edits")
    same = all(local[k] == remote[k] for k in keys) and local["best"]["test"] == remote["best"]["test"]
    print(f"ray_rollouts_spent: {remote['rollouts_spent']} (local {local['rollouts_spent']})")
    print(f"ray_accepted_edits: {len(remote['accepted_edits'])} (local {len(local['accepted_edits'])})")
    print(f"ray_best_test_score: {remote['best']['test']['score']} (local {local['best']['test']['score']})")
    return same


def _store_rate(tmp: Path) -> float:
    from evolve.bench.runtime import RolloutResult
    from evolve.store import LineageStore

    store = LineageStore(f"sqlite:///{tmp / 'writes.db'}")
    store.create_run("w", {}, seed=0)
    trajectory = [{"role": "user", "content": "Which city is mentioned? " * 8},
                  {"role": "assistant", "content": "Paris"}, {"role": "verifier", "content": "exact match"}]
    chunks = [[RolloutResult(f"t{c}-{i}", 0, 1.0, "Paris", True, 120, 3, 0.05, None, trajectory)
               .to_record(run_id="w", harness_hash="h", benchmark="b", split="validation") for i in range(64)]
              for c in range(40)]
    start = time.perf_counter()
    for chunk in chunks:
        store.add_rollouts(chunk)
    rate = 64 * len(chunks) / (time.perf_counter() - start)
    store.close()
    return rate


def _many_workers(tmp: Path, workers: int) -> None:
    """One batch of 1,600 rollouts and one whole run (2 rounds) on `workers` simulated workers."""
    from evolve.store import LineageStore

    executor, started = _ray_executor(workers)
    try:
        wall, cpu, n = _oracle_wall(tmp, executor, f"many-{workers}", trials=10)
        summary, run_wall = _run(tmp, "many-run", executor, model=f"mock:latency={LATENCY_S:g}", rounds=2, seed=3)
    finally:
        executor.close()
    store = LineageStore(f"sqlite:///{tmp / 'many-run.db'}")
    run_rollouts = store.count_rollouts("many-run")
    store.close()
    ideal = n / (workers * CONCURRENCY) * LATENCY_S
    print(f"ray_workers_{workers}_start_s: {started:.1f}")
    print(f"ray_workers_{workers}_batch_rollouts: {n}")
    print(f"ray_workers_{workers}_batch_wall_s: {wall:.2f} (ideal {ideal:.2f})")
    print(f"ray_workers_{workers}_rollouts_per_s: {n / wall:.0f}")
    print(f"ray_workers_{workers}_coordinator_cpu_per_rollout_ms: {1000 * cpu / n:.2f}")
    print(f"ray_workers_{workers}_run_rollouts: {run_rollouts} (rollouts spent {summary['rollouts_spent']})")
    print(f"ray_workers_{workers}_run_wall_s: {run_wall:.1f}")
    print(f"ray_workers_{workers}_run_rollouts_per_s: {run_rollouts / run_wall:.0f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=int(os.environ.get("EVOLVE_BENCH_RAY_WORKERS", "0")),
                        help="also run one batch on this many simulated workers")
    args = parser.parse_args()
    if importlib.util.find_spec("ray") is None:
        print("ray_speedup_8_workers: skipped (the ray extra is not installed: pip install 'evolve-harness[ray]')")
        return 0
    os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # a local cluster on the loopback address
    import ray

    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        os.environ["EVOLVE_HOME"] = str(tmp / "home")
        os.environ["EVOLVE_CACHE_DIR"] = str(tmp / "cache")
        ray.init(address="local", include_dashboard=False, logging_level="ERROR", log_to_driver=False)
        try:
            return _compare(tmp, args.workers)
        finally:
            ray.shutdown()


def _compare(tmp: Path, many: int) -> int:
    local_wall, _, n = _oracle_wall(tmp, _local_executor(), "local")
    executor, started = _ray_executor(WORKERS)
    try:
        ray_wall, ray_cpu, n_ray = _oracle_wall(tmp, executor, "ray")
        full_local = _run(tmp, "full-local", None, model=f"mock:latency={LATENCY_S:g}", rounds=2, seed=3)[1]
        full_ray = _run(tmp, "full-ray", executor, model=f"mock:latency={LATENCY_S:g}", rounds=2, seed=3)[1]
    finally:
        executor.close()
    same = _same_results(tmp)
    assert n == n_ray, (n, n_ray)
    overhead_ms = 1000 * ray_cpu / n_ray
    store_rate = _store_rate(tmp)
    print(f"ray_batch_rollouts: {n} (latency {LATENCY_S * 1000:.0f} ms per call, {CONCURRENCY} in flight per "
          f"backend; local: 1 process; ray: {WORKERS} workers)")
    print(f"ray_workers_start_s: {started:.1f}")
    print(f"local_batch_wall_s: {local_wall:.2f}")
    print(f"ray_batch_wall_s: {ray_wall:.2f}")
    print(f"ray_speedup_8_workers: {local_wall / ray_wall:.2f}")
    print(f"ray_speedup_full_run_8_workers: {full_local / full_ray:.2f} (local {full_local:.1f} s, "
          f"ray {full_ray:.1f} s)")
    print(f"coordinator_overhead_per_rollout_ms: {overhead_ms:.2f}")
    print(f"store_write_rollouts_per_s: {store_rate:.0f}")
    print(f"coordinator_max_rollouts_per_s: {min(store_rate, 1000 / overhead_ms):.0f}")
    print(f"ray_same_results: {int(same)}")
    if many:
        _many_workers(tmp, many)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
