"""The loop on an agent suite with a scripted mock policy: it discovers the reusable mechanism that makes
the policy succeed (verify before answering), and the gain holds on the out-of-distribution sibling."""

from __future__ import annotations

import asyncio

import pytest
from agent_mocks import MECHANISM, repo_fix_policy
from engine_mocks import helper_answer

from evolve import api
from evolve.backends.mock import MockBackend
from evolve.bench.benchmark import load_benchmark
from evolve.bench.evaluation import resolve_harness
from evolve.bench.runtime import evaluate
from evolve.harness import Edit, apply_edits
from evolve.store import LineageStore


def _solutions() -> dict[str, dict[str, str]]:
    suites = [load_benchmark(name) for name in ("repo-fix", "repo-fix-ood")]
    return {t.input: t.meta["solution"] for s in suites for tasks in s.splits.values() for t in tasks}


def _score(harness, suite: str, n: int = 3) -> float:
    bench = load_benchmark(suite)
    results = asyncio.run(evaluate(harness, bench.split("test")[:n], MockBackend(repo_fix_policy(_solutions())),
                                   bench.verifier))
    return sum(r.reward for r in results) / len(results)


def test_the_mock_policy_needs_the_mechanism():
    seed = resolve_harness("agent")
    assert _score(seed, "repo-fix", 2) == 0.0
    verify = apply_edits(seed, [Edit(op="set", component="control", target="flow.verify_before_answer", value=True)])
    assert _score(verify, "repo-fix", 2) == 1.0
    prompt = apply_edits(seed, [Edit(op="add", component="system", target="check", value=f"Always {MECHANISM}.")])
    assert _score(prompt, "repo-fix-ood", 2) == 1.0
    planned = apply_edits(seed, [Edit(op="set", component="control", target="flow.plan_then_act", value=True)])
    assert _score(planned, "repo-fix", 2) == 0.0


@pytest.mark.slow
def test_loop_discovers_verify_before_answer_and_it_holds_out_of_distribution(tmp_path):
    db = str(tmp_path / "agent.db")
    summary = api.run(db=db, run_id="agent", benchmark="repo-fix", harness="agent", rounds=1, seed=0, budget=300,
                      cache=False, evolve_batch=4, report_limit=4,
                      proposer={"llm_drafts": 0, "operator_drafts": 3, "operators": ["flow"]},
                      selection={"guards.min_validation_tasks": 6},  # the suite has 6 validation tasks
                      policy=MockBackend(repo_fix_policy(_solutions())), helper=MockBackend(helper_answer))
    store = LineageStore(db)
    best = store.resolve_candidate("best", "agent")
    edits = store.edits(best.id)
    assert best.status == "accepted" and [(e["component"], e["target"], e["value"]) for e in edits] == [
        ("control", "flow.verify_before_answer", True)]
    assert summary["seed"]["test"]["score"] == 0.0 and summary["best"]["test"]["score"] == 1.0
    ood = summary["seed"]["ood:repo-fix-ood"]["score"], summary["best"]["ood:repo-fix-ood"]["score"]
    assert ood == (0.0, 1.0)
    rejected = {tuple((e["target"], e["value"]) for e in store.edits(c.id)) for c in store.candidates("agent")
                if c.status.startswith("rejected")}
    assert (("flow.plan_then_act", True),) in rejected  # a mechanism that does not help is not taken
    rollout = next(r for r in store.task_rollouts("agent", store.rollouts("agent", harness_hash=best.harness_hash,
                                                                          split="test")[0].task_id,
                                                  harness_hash=best.harness_hash))
    assert any(s.get("kind") == "verify" for s in rollout.trajectory)
