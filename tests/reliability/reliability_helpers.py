"""Shared builders of the reliability tests: fault-injected mock backends and a lineage fingerprint."""

from __future__ import annotations

import json
from typing import Any

from engine_mocks import helper_answer, policy_answer

from evolve.backends.faults import FaultRates, FaultyBackend
from evolve.backends.mock import MockBackend
from evolve.store import LineageStore
from evolve.store.records import CANDIDATE_STATUSES

TERMINAL = set(CANDIDATE_STATUSES) - {"pending", "evaluated"}


def faulty_backends(rate: float, seed: int = 1) -> tuple[FaultyBackend, FaultyBackend]:
    """The engine-test mock policy and helper, each behind a fault injector at `rate`."""
    policy = FaultyBackend(MockBackend(policy_answer), FaultRates.uniform(rate, seed=seed))
    helper = FaultyBackend(MockBackend(helper_answer), FaultRates.uniform(rate, seed=seed + 1))
    return policy, helper


def fingerprint(db: str, run_id: str) -> dict[str, Any]:
    """Every row a run owns, in a comparable form (ids, statuses, scores, edits, decisions, rollouts)."""
    store = LineageStore(db)
    try:
        cands = [(c.id, c.parent_id, c.status, c.harness_hash, c.val_score, c.delta, c.reason)
                 for c in store.candidates(run_id)]
        edits = [(e["candidate_id"], e["position"], e["op"], e["component"], e["target"], json.dumps(e["value"]))
                 for e in store.run_edits(run_id)]
        decisions = sorted((d["candidate_id"], d["kind"], d["accepted"], d["reason"])
                           for d in store.decisions(run_id))
        rollouts = sorted(r.key + (r.reward, r.error or "") for r in store.rollouts(run_id))
        critiques = sorted((c[0], x["kind"], x["verdict"]) for c in cands for x in store.critiques(c[0]))
        run = store.get_run(run_id)
        summary = {k: run["summary"][k] for k in ("seed", "best", "best_id", "candidates", "failed_rollouts")}
        return {"candidates": cands, "edits": edits, "decisions": decisions, "rollouts": rollouts,
                "critiques": critiques, "summary": summary, "status": run["status"]}
    finally:
        store.close()
