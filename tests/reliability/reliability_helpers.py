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


def describe_schema(engine) -> dict[str, dict]:
    """Tables as the database reports them (portable across dialects): columns, primary keys,
    indexes, unique constraints and foreign keys."""
    from sqlalchemy import inspect

    insp = inspect(engine)
    return {name: {
        "columns": {c["name"]: (_type_name(c["type"]), bool(c["nullable"])) for c in insp.get_columns(name)},
        "primary_key": tuple(insp.get_pk_constraint(name)["constrained_columns"]),
        "indexes": sorted((i["name"], tuple(i["column_names"]), bool(i["unique"])) for i in insp.get_indexes(name)
                          if not i.get("duplicates_constraint")),  # PostgreSQL lists a unique constraint's index
        "uniques": sorted(tuple(u["column_names"]) for u in insp.get_unique_constraints(name)),
        "foreign_keys": sorted((tuple(f["constrained_columns"]), f["referred_table"], tuple(f["referred_columns"]))
                               for f in insp.get_foreign_keys(name)),
    } for name in insp.get_table_names()}


def describe_models() -> dict[str, dict]:
    """The same description derived from the ORM models."""
    from evolve.store.schema import Base

    return {table.name: {
        "columns": {c.name: (_type_name(c.type), bool(c.nullable)) for c in table.columns},
        "primary_key": tuple(c.name for c in table.primary_key.columns),
        "indexes": sorted((i.name, tuple(c.name for c in i.columns), bool(i.unique)) for i in table.indexes),
        "uniques": sorted(tuple(c.name for c in u.columns) for u in table.constraints
                          if type(u).__name__ == "UniqueConstraint"),
        "foreign_keys": sorted(((f.parent.name,), f.column.table.name, (f.column.name,)) for f in table.foreign_keys),
    } for table in Base.metadata.sorted_tables}


def _type_name(t) -> str:
    """A type's family (reflection names types per dialect: DOUBLE PRECISION vs FLOAT, TIMESTAMP vs DATETIME)."""
    py = getattr(t, "python_type", None)
    try:
        return py.__name__ if py else type(t).__name__
    except NotImplementedError:
        return type(t).__name__
