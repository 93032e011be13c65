"""One evaluation of a harness on a benchmark split: roll out, summarize, store under a run of kind "eval"."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime
from typing import Any

from evolve.backends.base import Backend
from evolve.bench.benchmark import Benchmark, load_benchmark
from evolve.bench.runtime import Progress, RolloutResult, evaluate
from evolve.bench.stats import summarize
from evolve.errors import ConfigError
from evolve.harness.io import load_harness
from evolve.harness.model import Harness
from evolve.paths import resolve_named
from evolve.store.lineage import LineageStore


def resolve_harness(ref: str) -> Harness:
    """A harness from a folder/file path or the name of a shipped harness."""
    return load_harness(resolve_named("harnesses", ref, marker="harness.yaml"))


def new_run_id(prefix: str = "eval") -> str:
    return f"{prefix}-{datetime.now(UTC):%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}"


def _bind_judge(benchmark: Benchmark, backend: Backend) -> None:
    """A judge verifier without its own backend grades with the policy's backend."""
    if getattr(benchmark.verifier, "name", "") == "judge" and getattr(benchmark.verifier, "backend", 1) is None:
        benchmark.verifier.backend = backend  # type: ignore[attr-defined]


def eval_harness(harness: Harness, benchmark: Benchmark, backend: Backend, *, split: str = "test",
                 limit: int | None = None, trials: int = 1, seed: int = 0,
                 progress: Progress | None = None) -> tuple[list[RolloutResult], dict[str, Any]]:
    """Roll out `harness` on the first `limit` tasks of `split`; return results and the summary figures."""
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be at least 1, got {limit}")
    if trials < 1:
        raise ConfigError(f"--trials must be at least 1, got {trials}")
    tasks = benchmark.split(split)[:limit] if limit else benchmark.split(split)
    if not tasks:
        raise ConfigError(f"split {split!r} of benchmark {benchmark.name!r} is empty; "
                          f"sizes: {', '.join(f'{k}={len(v)}' for k, v in benchmark.splits.items())}")
    _bind_judge(benchmark, backend)
    start = time.perf_counter()
    results = asyncio.run(evaluate(harness, tasks, backend, benchmark.verifier, trials=trials, seed=seed,
                                   progress=progress))
    summary = summarize(results, tasks, benchmark.verifier, benchmark.labels)
    summary["wall_s"] = time.perf_counter() - start
    return results, summary


def with_run_splits(store: LineageStore, run_id: str, benchmark_ref: str | None) -> Benchmark:
    """The benchmark of evolution run `run_id` (or `benchmark_ref`), split exactly as that run split it."""
    row = store.get_run(run_id)
    if row.get("kind", "run") != "run":
        raise ConfigError(f"--run {run_id}: an {row['kind']} record, not an evolution run")
    config = row.get("config") or {}
    ref = benchmark_ref or config.get("benchmark")
    if not ref:
        raise ConfigError(f"--run {run_id}: the run records no benchmark; pass --benchmark")
    stored = store.get_state(run_id, "splits")
    if not stored:  # runs made before split ids were stored split by their own seed
        return load_benchmark(ref, seed=config.get("seed", 0))
    return apply_splits(load_benchmark(ref), stored, f"--run {run_id}")


def apply_splits(benchmark: Benchmark, stored: dict[str, list[str]], source: str) -> Benchmark:
    """Give `benchmark` the stored split task ids (ConfigError when a task no longer exists)."""
    by_id = {t.id: t for tasks in benchmark.splits.values() for t in tasks}
    missing = [i for ids in stored.values() for i in ids if i not in by_id]
    if missing:
        raise ConfigError(f"{source}: {len(missing)} of the run's tasks are not in benchmark {benchmark.name!r} "
                          f"(e.g. {missing[0]}); was the task file changed?")
    benchmark.splits = {name: [by_id[i] for i in ids] for name, ids in stored.items()}
    return benchmark


def run_eval(harness_ref: str, benchmark_ref: str | None, *, split: str = "test", limit: int | None = None,
             model: str = "embedded", trials: int = 1, seed: int = 0, db: str | None = None,
             backend: Backend | None = None, progress: Progress | None = None,
             run: str | None = None) -> dict[str, Any]:
    """`evolve eval`: evaluate, store the rollouts under a new eval run, return the report as a dict.

    With `run`, the benchmark (default: the run's) is split exactly as that evolution run split it,
    so `--split test` is the run's held-out test split.
    """
    from evolve.backends import MeteredBackend, get_backend
    from evolve.paths import default_db_url

    if benchmark_ref is None and run is None:
        raise ConfigError("--benchmark is required (or --run RUN to reuse a run's benchmark and splits)")
    harness = resolve_harness(harness_ref)
    store = LineageStore(db or default_db_url())
    try:
        benchmark = with_run_splits(store, run, benchmark_ref) if run else load_benchmark(benchmark_ref or "")
    except BaseException:
        store.close()
        raise
    metered = MeteredBackend(backend if backend is not None else get_backend(model))
    run_id = new_run_id()
    config = {"harness": harness_ref, "harness_version": harness.version, "benchmark": benchmark.info(),
              "split": split, "limit": limit, "trials": trials, "model": metered.name, "splits_of_run": run}
    store.create_run(run_id, config, seed=seed, benchmark=benchmark.name, model=metered.name, kind="eval")
    try:
        results, summary = eval_harness(harness, benchmark, metered, split=split, limit=limit, trials=trials,
                                        seed=seed, progress=progress)
    except BaseException as exc:
        store.update_run(run_id, status="failed", error=str(exc)[:2000])
        store.close()
        raise
    store.put_harness(harness)
    store.add_rollouts(r.to_record(run_id=run_id, harness_hash=harness.version, benchmark=benchmark.name,
                                   split=split) for r in results)
    store.add_calls(run_id, metered.drain())
    report = {"run_id": run_id, "harness": harness.name, "harness_version": harness.version,
              "benchmark": benchmark.name, "split": split, "model": metered.name, "trials": trials, "seed": seed,
              **summary}
    store.update_run(run_id, status="done", summary=report)
    store.close()
    return report


