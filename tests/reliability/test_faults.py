"""Fault injection: the wrapper's rates and determinism, and whole runs under 30% injected faults."""

from __future__ import annotations

import asyncio
import json
import random

import pytest
from engine_mocks import RUN_OPTIONS
from reliability_helpers import TERMINAL, faulty_backends, fingerprint
from typer.testing import CliRunner

from evolve import api
from evolve.backends import Request, get_backend
from evolve.backends.faults import KINDS, FaultRates, FaultyBackend, parse_spec
from evolve.backends.mock import MockBackend
from evolve.cli import app
from evolve.errors import BackendError
from evolve.store import LineageStore


def requests(n: int, role: str = "policy") -> list[Request]:
    return [Request(messages=({"role": "user", "content": f"question {i}"},), role=role) for i in range(n)]


def kinds_of(backend: FaultyBackend, batch: list[Request]) -> list[str]:
    out = asyncio.run(backend.complete(batch))
    assert len(out) == len(batch)
    labels = []
    for c in out:
        if c.error:
            labels.append(c.error.split(":")[0])
        elif c.text == "mock answer":
            labels.append("ok")
        else:
            labels.append("empty" if c.text == "" else "garbage")
    return labels


def test_rates_are_met_per_kind():
    backend = FaultyBackend(MockBackend(), FaultRates(error=0.1, timeout=0.05, empty=0.1, garbage=0.05, seed=3))
    labels = kinds_of(backend, requests(4000))
    share = {k: labels.count(k) / len(labels) for k in set(labels)}
    assert share["TransientError"] == pytest.approx(0.10, abs=0.02)
    assert share["Timeout"] == pytest.approx(0.05, abs=0.015)
    assert share["empty"] == pytest.approx(0.10, abs=0.02)
    assert share["garbage"] == pytest.approx(0.05, abs=0.015)
    assert share["ok"] == pytest.approx(0.70, abs=0.03)
    assert sum(backend.injected.values()) + backend.passed == 4000
    assert set(backend.injected) == set(KINDS)


def test_faults_depend_on_the_request_not_on_order_or_batching():
    batch = requests(300)
    backend = FaultyBackend(MockBackend(), FaultRates.uniform(0.3, seed=5))
    reference = dict(zip([r.messages[0]["content"] for r in batch], kinds_of(backend, batch), strict=True))
    shuffled = batch[:]
    random.Random(1).shuffle(shuffled)
    again = FaultyBackend(MockBackend(), FaultRates.uniform(0.3, seed=5))
    one_by_one = [kinds_of(again, [r])[0] for r in shuffled]
    assert one_by_one == [reference[r.messages[0]["content"]] for r in shuffled]
    other_seed = kinds_of(FaultyBackend(MockBackend(), FaultRates.uniform(0.3, seed=6)), batch)
    assert other_seed != list(reference.values())


def test_zero_rate_is_transparent_and_full_rate_never_calls_the_model():
    inner = MockBackend()
    assert kinds_of(FaultyBackend(inner, FaultRates.uniform(0.0)), requests(50)) == ["ok"] * 50
    assert len(inner.history) == 50
    silent = MockBackend()
    labels = kinds_of(FaultyBackend(silent, FaultRates.uniform(1.0)), requests(50))
    assert "ok" not in labels and not silent.history


def test_timeout_fault_waits_its_delay():
    backend = FaultyBackend(MockBackend(), FaultRates(timeout=1.0, delay_s=0.05))

    async def timed() -> float:
        loop = asyncio.get_running_loop()
        start = loop.time()
        await backend.complete(requests(1))
        return loop.time() - start

    assert asyncio.run(timed()) >= 0.045


def test_model_string_selects_the_wrapper():
    backend = get_backend("faulty:error=0.2,garbage=0.1,seed=4:mock", cache=False)
    assert isinstance(backend, FaultyBackend) and isinstance(backend.inner, MockBackend)
    assert backend.rates == FaultRates(error=0.2, garbage=0.1, seed=4)
    assert backend.name == "faulty:error=0.2,garbage=0.1,seed=4:mock"
    assert parse_spec("0.3") == FaultRates.uniform(0.3)


@pytest.mark.parametrize(("model", "message"), [
    ("faulty:0.3", "names no inner model"),
    ("faulty:1.5:mock", "must lie in [0, 1]"),
    ("faulty:-0.1:mock", "must lie in [0, 1]"),
    ("faulty:boom=1:mock", "KEY one of error, timeout, empty, garbage, seed, delay_s"),
    ("faulty:error=0.7,empty=0.7:mock", "sum to 1.4"),
    ("faulty:seed=x:mock", "seed"),
    ("faulty:0.3:nowhere", "unknown model string"),
])
def test_bad_fault_specs_are_one_line_errors(model, message):
    with pytest.raises(BackendError) as info:
        get_backend(model)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_run_with_30_percent_faults_finishes_with_a_complete_lineage(tmp_path):
    db = str(tmp_path / "faults.db")
    policy, helper = faulty_backends(0.3)
    summary = api.run(db=db, run_id="f", policy=policy, helper=helper, **RUN_OPTIONS)
    assert sum(policy.injected.values()) > 100 and sum(helper.injected.values()) > 0
    store = LineageStore(db)
    assert store.get_run("f")["status"] == "finished"
    rollouts = store.rollouts("f")
    failed = [r for r in rollouts if r.error]
    # every failed call is a stored, zero-scored rollout that says what went wrong
    assert failed and all(r.reward == 0.0 for r in failed)
    assert all(r.error.startswith(("TransientError: injected", "Timeout: injected")) for r in failed)
    assert summary["failed_rollouts"] == len(failed)
    assert summary["failed_by_kind"] == {
        "Timeout": sum(r.error.startswith("Timeout") for r in failed),
        "TransientError": sum(r.error.startswith("TransientError") for r in failed)}
    # nothing dropped: the final report scored the seed on every test task
    seed_version = store.get_candidate("f.seed").harness_hash
    bench_test = [r for r in rollouts if r.split == "test" and r.harness_hash == seed_version
                  and r.benchmark == "sentiment-products"]
    assert len(bench_test) == summary["seed"]["test"]["n"] > 0
    # every candidate ended in a terminal status with its reason, decision or critique on record
    cands = store.candidates("f")
    assert {c.status for c in cands} <= TERMINAL
    decided = {d["candidate_id"] for d in store.decisions("f")}
    for c in cands:
        if c.status == "seed":
            continue
        assert c.reason, c.id
        if c.status != "rejected_invalid":
            assert c.id in decided or store.critiques(c.id), c.id
    assert sum(summary["candidates"].values()) == len(cands)
    print(f"\nfaults: policy {dict(policy.injected)} injected, {policy.passed} passed; helper {dict(helper.injected)} "
          f"injected, {helper.passed} passed; rollouts {len(rollouts)}, failed {summary['failed_by_kind']}, "
          f"unparsed {sum(not r.parsed and not r.error for r in rollouts)}; candidates {summary['candidates']}")


def test_faulty_run_is_reproducible(tmp_path):
    for name in ("a", "b"):
        policy, helper = faulty_backends(0.3, seed=9)
        api.run(db=str(tmp_path / f"{name}.db"), run_id="f", policy=policy, helper=helper,
                **{**RUN_OPTIONS, "rounds": 2})
    assert fingerprint(str(tmp_path / "a.db"), "f") == fingerprint(str(tmp_path / "b.db"), "f")


def test_cli_run_with_a_faulty_model_string(tmp_path):
    db = str(tmp_path / "cli.db")
    result = CliRunner().invoke(app, ["run", "--model", "faulty:0.3:mock", "--rounds", "1", "--budget", "300",
                                      "--report-limit", "20", "--run-id", "c", "--db", db, "--json", "--no-cache"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["failed_rollouts"] > 0 and sum(data["failed_by_kind"].values()) == data["failed_rollouts"]
    assert LineageStore(db).get_run("c")["model"] == "faulty:0.3:mock"
    bad = CliRunner().invoke(app, ["run", "--model", "faulty:2:mock", "--db", db])
    assert bad.exit_code == 2 and "must lie in [0, 1]" in bad.output and "Traceback" not in bad.output
