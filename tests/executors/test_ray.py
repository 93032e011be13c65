"""The Ray executor on local clusters: same lineage as local, workers and coordinators killed by pid."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import threading
import time

import pytest
from ray_helpers import SKIP_REASON, RayHead, evolve_cli, json_out, start_evolve
from reliability_helpers import fingerprint

ray = pytest.importorskip("ray", reason=SKIP_REASON)

from executor_helpers import sample_batch  # noqa: E402

from evolve.backends import MeteredBackend, MockBackend, get_backend  # noqa: E402
from evolve.bench.benchmark import load_benchmark  # noqa: E402
from evolve.bench.runtime import evaluate  # noqa: E402
from evolve.executors import WorkerSpec  # noqa: E402
from evolve.executors.ray_executor import RayExecutor  # noqa: E402
from evolve.loop.oracle import Oracle  # noqa: E402
from evolve.store import LineageStore  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.timeout(600)]
COMMAND = ["run", "--model", "mock", "--rounds", "2", "--budget", "300", "--seed", "3", "--no-cache", "--json"]


def _best_test(summary: dict) -> float | None:
    return summary["best"]["test"]["score"]


def test_same_lineage_under_local_and_ray(tmp_path):
    """`evolve run --model mock --rounds 2 --budget 300 --seed 3`: the same summary and rows on either executor."""
    local_db, ray_db = f"sqlite:///{tmp_path / 'local.db'}", f"sqlite:///{tmp_path / 'ray.db'}"
    local = json_out(evolve_cli(*COMMAND, "--executor", "local", "--db", local_db, "--run-id", "r"))
    remote = json_out(evolve_cli(*COMMAND, "--executor", "ray", "--workers", "4", "--db", ray_db, "--run-id", "r"))
    assert local["rollouts_spent"] == remote["rollouts_spent"] and 0 < local["rollouts_spent"] <= 300
    assert local["accepted_edits"] == remote["accepted_edits"]
    assert _best_test(local) == _best_test(remote) is not None
    assert fingerprint(local_db, "r") == fingerprint(ray_db, "r")
    store = LineageStore(ray_db)
    assert store.get_run("r")["config"]["executor"] == "ray"
    usage = store.usage_by_role("r")
    store.close()
    assert usage["policy"]["calls"] > 0  # the workers' calls reached the coordinator's usage table


@pytest.fixture(scope="module")
def local_cluster():
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    yield
    ray.shutdown()


def _run_oracle(oracle, bench, batch, kill_pid: int | None, after_s: float):
    """Evaluate the batch through the oracle; SIGKILL `kill_pid` `after_s` into it."""
    if kill_pid is not None:
        threading.Timer(after_s, os.kill, (kill_pid, signal.SIGKILL)).start()
    return asyncio.run(oracle.evaluate(batch.harness, bench, "validation", list(batch.tasks)))


def test_worker_killed_mid_batch_loses_and_duplicates_nothing(local_cluster, tmp_path):
    bench = load_benchmark("extract-city", seed=0)
    batch = sample_batch(n_tasks=16, trials=2)
    meter = MeteredBackend(MockBackend())
    spec = WorkerSpec(model="mock:latency=0.4", concurrency=2, cache=False)
    executor = RayExecutor(spec, workers=2, meter=meter)
    store = LineageStore(f"sqlite:///{tmp_path / 'k.db'}")
    store.create_run("k", {}, seed=0)
    try:
        pids = executor.pids()
        oracle = Oracle(store, "k", meter, trials=2, seed=5, executor=executor, flush_s=0.0)
        records = _run_oracle(oracle, bench, batch, kill_pid=pids[0], after_s=0.6)
        new_pids = executor.pids()
    finally:
        executor.close()
    print(f"worker {pids[0]} killed: {executor.resubmitted} chunks resubmitted, {executor.replaced} worker replaced")
    assert executor.resubmitted >= 1 and executor.replaced == 1
    assert pids[0] not in new_pids and pids[1] in new_pids
    stored = store.rollouts("k")
    store.close()
    keys = [r.key for r in stored]
    assert len(keys) == len(set(keys)) == 32  # every (task, trial) once
    want = asyncio.run(evaluate(batch.harness, list(batch.tasks), get_backend("mock", cache=False), batch.verifier,
                                trials=2, seed=5))
    same = [(r.task_id, r.trial, r.reward, r.prediction, r.tokens_in, r.tokens_out) for r in want]
    assert [(r.task_id, r.trial, r.reward, r.prediction, r.tokens_in, r.tokens_out) for r in records] == same
    [usage] = meter.drain()
    assert usage.calls >= 32 and usage.model == "mock:latency=0.4"


def _wait_for_rollouts(db: str, run_id: str, at_least: int, process, timeout_s: float = 240) -> int:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert process.poll() is None, "the run ended before it could be killed"
        try:
            store = LineageStore(db)
            n = store.count_rollouts(run_id)
            store.close()
        except Exception:  # the run has not created its tables yet
            n = 0
        if n >= at_least:
            return n
        time.sleep(0.2)
    pytest.fail(f"fewer than {at_least} rollouts after {timeout_s}s")


def test_coordinator_killed_resumes_on_the_same_cluster_and_on_a_new_one(tmp_path, monkeypatch):
    """A run on an external cluster is SIGKILLed, resumed on that cluster, SIGKILLed again, then resumed on a
    new local cluster; it ends with the lineage of an uninterrupted run."""
    monkeypatch.setenv("RAY_AUTH_MODE", "token")  # the test cluster's own token, not one of the user's
    monkeypatch.setenv("RAY_AUTH_TOKEN", secrets.token_hex(32))
    options = ["--model", "mock:latency=0.02", "--rounds", "2", "--budget", "2000", "--seed", "3", "--no-cache",
               "--run-id", "c", "--report-limit", "30"]
    reference = f"sqlite:///{tmp_path / 'reference.db'}"
    json_out(evolve_cli("run", *options, "--json", "--db", reference))
    db = f"sqlite:///{tmp_path / 'killed.db'}"
    head = RayHead(tmp_path)
    try:
        head.wait_ready()
        run = start_evolve("run", *options, "--executor", "ray", "--ray-address", head.address, "--workers", "3",
                           "--json", "--db", db, log=tmp_path / "run.log")
        first = _wait_for_rollouts(db, "c", 30, run)
        os.kill(run.pid, signal.SIGKILL)
        run.wait(timeout=30)
        resumed = start_evolve("resume", "c", "--json", "--db", db, log=tmp_path / "resume1.log")
        second = _wait_for_rollouts(db, "c", first + 30, resumed)
        os.kill(resumed.pid, signal.SIGKILL)
        resumed.wait(timeout=30)
    finally:
        head.stop()
    done = json_out(evolve_cli("resume", "c", "--ray-address", "local", "--json", "--db", db))
    store = LineageStore(db)
    config, total = store.get_run("c")["config"], store.count_rollouts("c")
    store.close()
    print(f"coordinator killed after {first} and {second} of {total} rollouts; resumed on a new cluster")
    assert second > first > 0 and done["run_id"] == "c"
    assert fingerprint(db, "c") == fingerprint(reference, "c")
    assert (config["executor"], config["ray_address"]) == ("ray", "local")
