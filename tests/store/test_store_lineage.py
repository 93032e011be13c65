"""LineageStore reads and writes, idempotent rollouts, one-line errors, networkx lineage views."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import OperationalError

from evolve.errors import StoreError
from evolve.harness import Edit, Harness, Section, apply_edits
from evolve.store import CandidateRecord, LineageStore, RolloutRecord
from evolve.store.graph import ancestors, best_path, descendants, frontier, lineage_graph

SEED = Harness(name="seed", system=(Section(name="task", text="Answer briefly."),))


def child(parent: Harness, text: str) -> tuple[Harness, list[Edit]]:
    edits = [Edit(op="replace", component="system", target="task", value=text, hypothesis=f"try {text!r}")]
    return apply_edits(parent, edits), edits


@pytest.fixture
def store(db_url: str) -> LineageStore:
    return LineageStore(db_url)


@pytest.fixture
def tree(store: LineageStore) -> LineageStore:
    """seed -> a (accepted) -> c (accepted) -> e (pending); seed -> b (rejected); a -> d (rejected)."""
    store.create_run("run1", {"rounds": 3}, seed=1, benchmark="toy", model="mock")
    store.add_candidate("seed", "run1", SEED, parent_id=None, round=0, status="seed")
    shape = [("a", "seed", 1, "accepted"), ("b", "seed", 1, "rejected_acceptance"), ("c", "a", 2, "accepted"),
             ("d", "a", 2, "rejected_critic"), ("e", "c", 3, "pending")]
    harnesses = {"seed": SEED}
    for slot, (cid, parent, rnd, status) in enumerate(shape):
        harness, edits = child(harnesses[parent], f"Answer as {cid}.")
        harnesses[cid] = harness
        store.add_candidate(cid, "run1", harness, parent_id=parent, round=rnd, slot=slot, status=status, edits=edits)
    return store


def rollout(run: str = "run1", task: str = "t1", trial: int = 0, reward: float = 1.0, version: str | None = None,
            split: str = "val") -> RolloutRecord:
    return RolloutRecord(run_id=run, harness_hash=version or SEED.version, benchmark="toy", split=split,
                         task_id=task, trial=trial, reward=reward, tokens_in=10, tokens_out=2)


def one_line_error(fn, *args, **kwargs) -> str:
    with pytest.raises(StoreError) as info:
        fn(*args, **kwargs)
    message = str(info.value)
    assert "\n" not in message
    return message


# -- runs, candidates, errors ------------------------------------------------------------------


def test_unknown_run_and_candidate_are_one_line_errors(tree: LineageStore) -> None:
    assert "unknown run 'nope'" in one_line_error(tree.get_run, "nope")
    assert "unknown candidate 'nope'" in one_line_error(tree.get_candidate, "nope")
    assert "unknown candidate 'nope'" in one_line_error(tree.resolve_candidate, "nope")
    assert "unknown harness version 'ffff'" in one_line_error(tree.get_harness, "ffff")
    assert "unknown run 'nope'" in one_line_error(tree.resolve_candidate, "best", "nope")


def test_duplicate_run_is_an_error(tree: LineageStore) -> None:
    assert "already exists" in one_line_error(tree.create_run, "run1", {})


def test_empty_database_has_no_latest_run(store: LineageStore) -> None:
    assert "no runs" in one_line_error(store.latest_run_id)
    assert "no runs" in one_line_error(store.resolve_candidate, "best")


def test_run_without_candidates_has_no_seed_or_best(store: LineageStore) -> None:
    store.create_run("empty", {})
    assert "no seed candidate" in one_line_error(store.resolve_candidate, "seed", "empty")
    assert "no accepted candidate" in one_line_error(store.resolve_candidate, "best", "empty")


def test_resolve_seed_and_best(tree: LineageStore) -> None:
    assert tree.resolve_candidate("seed").id == "seed"
    assert tree.resolve_candidate("best", "run1").id == "c"
    tree.put_state("run1", "incumbent", "a")
    assert tree.resolve_candidate("best").id == "a"


def test_candidates_edits_and_snapshots_round_trip(tree: LineageStore) -> None:
    cands = tree.candidates("run1")
    assert [c.id for c in cands] == ["seed", "a", "b", "c", "d", "e"]
    c = tree.get_candidate("c")
    assert (c.parent_id, c.round, c.status) == ("a", 2, "accepted")
    harness = tree.get_harness(c.harness_hash)
    assert harness.version == c.harness_hash and harness.section("task").text == "Answer as c."
    [edit] = tree.edits("c")
    assert (edit["op"], edit["component"], edit["target"], edit["hypothesis"]) == (
        "replace", "system", "task", "try 'Answer as c.'")
    assert [e["candidate_id"] for e in tree.run_edits("run1")] == ["a", "b", "c", "d", "e"]


def test_add_candidate_is_idempotent_and_harnesses_are_shared(store: LineageStore) -> None:
    store.create_run("r", {})
    store.add_candidate("x", "r", SEED, parent_id=None, round=0, status="seed")
    store.add_candidate("x", "r", SEED, parent_id=None, round=0, status="seed")
    store.add_candidate("y", "r", SEED.model_copy(update={"name": "renamed"}), parent_id="x", round=1)
    assert [c.id for c in store.candidates("r")] == ["x", "y"]
    assert store.get_candidate("x").harness_hash == store.get_candidate("y").harness_hash
    assert store.put_harness(SEED) == SEED.version


def test_update_candidate_and_run(tree: LineageStore) -> None:
    tree.update_candidate("e", status="rejected_acceptance", reason="inside the noise band", val_score=0.4)
    e = tree.get_candidate("e")
    assert (e.status, e.reason, e.val_score) == ("rejected_acceptance", "inside the noise band", 0.4)
    tree.update_run("run1", status="finished", summary={"best": "c"})
    assert tree.get_run("run1")["summary"] == {"best": "c"}


def test_critiques_and_decisions(tree: LineageStore) -> None:
    tree.add_critique("d", "llm", "reject", "memorizes answers", {"score": 1})
    tree.add_decision("run1", "c", 2, True, "gain above band", {"delta": 0.2})
    tree.add_decision("run1", "b", 1, False, "no gain")
    assert tree.critiques("d")[0]["details"] == {"score": 1}
    assert [(d["candidate_id"], d["accepted"]) for d in tree.decisions("run1")] == [("c", True), ("b", False)]
    assert tree.decisions(candidate_id="b")[0]["reason"] == "no gain"


# -- rollouts ----------------------------------------------------------------------------------


def test_same_rollout_key_twice_is_one_row(tree: LineageStore) -> None:
    assert tree.add_rollouts([rollout(reward=1.0)]) == 1
    assert tree.add_rollouts([rollout(reward=0.0)]) == 0
    rows = tree.rollouts("run1")
    assert len(rows) == 1 and rows[0].reward == 1.0
    assert tree.count_rollouts("run1") == 1


def test_rollout_batches_skip_known_and_duplicate_keys(tree: LineageStore) -> None:
    tree.add_rollouts([rollout(task="t1")])
    batch = [rollout(task="t1"), rollout(task="t2"), rollout(task="t2"), rollout(task="t2", trial=1),
             rollout(task="t1", split="test")]
    assert tree.add_rollouts(batch) == 3
    assert sorted((r.task_id, r.trial, r.split) for r in tree.rollouts("run1")) == [
        ("t1", 0, "test"), ("t1", 0, "val"), ("t2", 0, "val"), ("t2", 1, "val")]
    assert tree.add_rollouts(batch) == 0
    assert tree.add_rollouts([]) == 0


def test_rollout_batches_are_inserted_in_key_order(tree: LineageStore) -> None:
    # overlapping batches from concurrent writers then wait on their common keys in one order (no lock cycle)
    tree.add_rollouts([rollout(task=t) for t in ("t3", "t1", "t2")])
    assert [r.task_id for r in tree.rollouts("run1")] == ["t1", "t2", "t3"]  # rollouts() returns insertion order


class _ServerError(Exception):
    def __init__(self, sqlstate: str, text: str) -> None:
        super().__init__(text)
        self.sqlstate = sqlstate


def test_a_rollout_batch_aborted_by_a_deadlock_is_retried(tree: LineageStore, monkeypatch) -> None:
    real, calls = tree._insert_new_rollouts, []

    def aborted_once(rows):
        calls.append(len(rows))
        if len(calls) == 1:
            raise OperationalError("INSERT INTO rollouts", {}, _ServerError("40P01", "deadlock detected"))
        return real(rows)

    monkeypatch.setattr(tree, "_insert_new_rollouts", aborted_once)
    assert tree.add_rollouts([rollout(task="t1"), rollout(task="t2")]) == 2
    assert calls == [2, 2] and tree.count_rollouts("run1") == 2


def test_other_operational_errors_of_a_rollout_batch_are_not_retried(tree: LineageStore, monkeypatch) -> None:
    calls = []

    def broken(rows):
        calls.append(len(rows))
        raise OperationalError("INSERT INTO rollouts", {}, _ServerError("08006", "connection failure"))

    monkeypatch.setattr(tree, "_insert_new_rollouts", broken)
    with pytest.raises(OperationalError):
        tree.add_rollouts([rollout(task="t1")])
    assert calls == [1]


def test_rollout_batch_spanning_runs(tree: LineageStore) -> None:
    tree.create_run("run2", {})
    tree.add_rollouts([rollout(run="run2", task="t1")])
    assert tree.add_rollouts([rollout(run="run1", task="t1"), rollout(run="run2", task="t1")]) == 1
    assert (tree.count_rollouts("run1"), tree.count_rollouts("run2")) == (1, 1)


def test_rollouts_filter_by_harness_and_split(tree: LineageStore) -> None:
    other = tree.get_candidate("a").harness_hash
    tree.add_rollouts([rollout(), rollout(version=other), rollout(version=other, split="test", reward=0.0)])
    assert len(tree.rollouts("run1", harness_hash=other)) == 2
    assert [r.reward for r in tree.rollouts("run1", harness_hash=other, split="test")] == [0.0]
    assert tree.rollouts("run1")[0].trajectory is None


# -- graph views -------------------------------------------------------------------------------


def test_graph_ancestors_descendants_best_path_frontier(tree: LineageStore) -> None:
    graph = lineage_graph(tree.candidates("run1"))
    assert sorted(graph.edges) == [("a", "c"), ("a", "d"), ("c", "e"), ("seed", "a"), ("seed", "b")]
    assert ancestors(graph, "e") == ["seed", "a", "c"]
    assert ancestors(graph, "seed") == []
    assert descendants(graph, "a") == {"c", "d", "e"}
    assert descendants(graph, "e") == set()
    assert best_path(graph, "c") == ["seed", "a", "c"]
    assert frontier(graph) == ["c"]
    assert isinstance(graph.nodes["b"]["record"], CandidateRecord)


def test_frontier_with_two_accepted_branches(tree: LineageStore) -> None:
    tree.update_candidate("b", status="accepted")
    tree.update_candidate("c", status="rejected_acceptance")
    assert sorted(frontier(lineage_graph(tree.candidates("run1")))) == ["a", "b"]


def test_graph_unknown_node_is_a_store_error(tree: LineageStore) -> None:
    graph = lineage_graph(tree.candidates("run1"))
    assert "unknown candidate 'zz'" in one_line_error(ancestors, graph, "zz")
    assert "unknown candidate 'zz'" in one_line_error(descendants, graph, "zz")


def test_graph_survives_a_parent_cycle() -> None:
    def rec(cid: str, parent: str) -> CandidateRecord:
        return CandidateRecord(id=cid, run_id="r", parent_id=parent, round=0, slot=0, harness_hash="h",
                               status="accepted", origin="", reason="")

    graph = lineage_graph([rec("x", "y"), rec("y", "x")])
    assert ancestors(graph, "x") == ["y"]
