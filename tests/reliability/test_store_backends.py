"""Store behaviours on every database backend (SQLite always, PostgreSQL when EVOLVE_TEST_PG_URL is set):
migrations from empty, run state, purge_round, concurrent writers and migrators, and a whole run."""

from __future__ import annotations

import threading

from engine_mocks import RUN_OPTIONS, backends
from reliability_helpers import describe_models, describe_schema, fingerprint

from evolve import api
from evolve.harness import Harness, Section
from evolve.store import LineageStore, RolloutRecord
from evolve.store.migrations import MIGRATIONS, applied

ALL = [fn.__name__ for fn in MIGRATIONS]
SEED = Harness(name="seed", system=(Section(name="task", text="Answer briefly."),))


def rollout(run: str, task: str, trial: int = 0, reward: float = 1.0) -> RolloutRecord:
    return RolloutRecord(run_id=run, harness_hash=SEED.version, benchmark="toy", split="val", task_id=task,
                         trial=trial, reward=reward)


def in_threads(n: int, fn) -> list[BaseException]:
    """Run fn(i) in n threads started together; return the exceptions they raised."""
    errors: list[BaseException] = []
    barrier = threading.Barrier(n)

    def body(i: int) -> None:
        try:
            barrier.wait()
            fn(i)
        except BaseException as exc:  # collected and reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return errors


def test_empty_database_migrates_to_the_orm_schema(store_url):
    store = LineageStore(store_url)
    found = describe_schema(store.engine)
    assert found.pop("_evolve_migrations")["columns"].keys() == {"name", "applied_at"}
    expected = describe_models()
    assert sorted(found) == sorted(expected)
    for name in expected:
        assert found[name] == expected[name], name
    assert applied(store.engine) == ALL
    LineageStore(store_url)  # reopening applies nothing twice
    assert applied(store.engine) == ALL


def test_concurrent_first_opens_migrate_once(store_url):
    errors = in_threads(4, lambda i: LineageStore(store_url).create_run(f"r{i}", {"i": i}))
    assert not errors, errors
    store = LineageStore(store_url)
    assert applied(store.engine) == ALL
    assert sorted(r["id"] for r in store.list_runs()) == ["r0", "r1", "r2", "r3"]


def test_run_state_round_trips_json_and_overwrites(store_url):
    store = LineageStore(store_url)
    store.create_run("r", {"nested": {"a": [1, 2.5, None, "ü"]}})
    store.put_state("r", "memory", {"notes": ["a", "b"], "n": 2})
    store.put_state("r", "memory", {"notes": ["c"], "n": 3})
    store.put_state("r", "step/1/drafts", [1, 2])
    assert store.get_state("r", "memory") == {"notes": ["c"], "n": 3}
    assert store.get_state("r", "missing", default="d") == "d"
    assert store.state_keys("r", "step/") == ["step/1/drafts"]
    assert store.get_run("r")["config"] == {"nested": {"a": [1, 2.5, None, "ü"]}}


def test_purge_round_removes_the_round_and_keeps_rollouts(store_url):
    store = LineageStore(store_url)
    store.create_run("r", {})
    store.add_candidate("r.seed", "r", SEED, parent_id=None, round=0, status="seed")
    for rnd in (1, 2):
        h = SEED.model_copy(update={"name": f"h{rnd}"})
        store.add_candidate(f"r.{rnd}", "r", h, parent_id="r.seed", round=rnd, status="pending")
        store.add_critique(f"r.{rnd}", "llm", "pass", "fine")
        store.add_decision("r", f"r.{rnd}", rnd, False, "no gain")
        store.add_rubric("r", rnd, rnd, {"criteria": []})
    store.add_rollouts([rollout("r", "t1"), rollout("r", "t2")])
    assert store.purge_round("r", 2) == 1
    assert [c.id for c in store.candidates("r")] == ["r.seed", "r.1"]
    assert [d["candidate_id"] for d in store.decisions("r")] == ["r.1"]
    assert [r["round"] for r in store.rubrics("r")] == [1]
    assert store.critiques("r.2") == [] and store.count_rollouts("r") == 2
    assert store.purge_round("r", 2) == 0


def test_concurrent_rollout_writers_store_each_key_once(store_url):
    store = LineageStore(store_url)
    store.create_run("r", {})
    keys = [f"t{i:03d}" for i in range(120)]

    def writer(i: int) -> None:
        own = LineageStore(store_url)
        for start in range(0, len(keys), 10):  # overlapping batches, in a different order per thread
            batch = keys[start:start + 10] if i % 2 == 0 else keys[::-1][start:start + 10]
            own.add_rollouts([rollout("r", k, reward=float(i)) for k in batch])
        own.close()

    assert not in_threads(4, writer)
    rows = store.rollouts("r")
    assert sorted(r.task_id for r in rows) == keys
    assert store.add_rollouts([rollout("r", k) for k in keys]) == 0


def test_two_runs_write_candidates_at_once(store_url):
    LineageStore(store_url)

    def writer(i: int) -> None:
        own = LineageStore(store_url)
        own.create_run(f"w{i}", {})
        parent = None
        for k in range(15):
            cid = f"w{i}.{k}"
            own.add_candidate(cid, f"w{i}", SEED.model_copy(update={"name": f"n{k}"}), parent_id=parent,
                              round=k, status="accepted")
            own.add_decision(f"w{i}", cid, k, True, "gain")
            parent = cid
        own.close()

    assert not in_threads(2, writer)
    store = LineageStore(store_url)
    for i in range(2):
        assert len(store.candidates(f"w{i}")) == 15 and len(store.decisions(f"w{i}")) == 15
        assert store.parent_chain(f"w{i}.14") == [f"w{i}.{k}" for k in range(15)]


def test_a_whole_run_gives_the_same_lineage_on_every_backend(store_url, tmp_path):
    options = {**RUN_OPTIONS, "rounds": 2}
    policy, helper = backends()
    api.run(db=store_url, run_id="x", policy=policy, helper=helper, **options)
    reference = str(tmp_path / "reference.db")
    policy, helper = backends()
    api.run(db=reference, run_id="x", policy=policy, helper=helper, **options)
    assert fingerprint(store_url, "x") == fingerprint(reference, "x")
    nodes = LineageStore(store_url).lineage_nodes("x")
    assert [n["id"] for n in nodes] == [c.id for c in LineageStore(reference).candidates("x")]
