"""The closing report of a run: seed vs best on evolve / validation / test / OOD suites."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evolve.bench.benchmark import load_benchmark
from evolve.bench.stats import majority_baseline, prediction_distribution
from evolve.errors import EvolveError
from evolve.loop.oracle import summarize
from evolve.loop.state import LoopState

if TYPE_CHECKING:
    from evolve.loop.engine import Engine

REPORT_SPLITS = ("evolve", "validation", "test")


def _suites(engine: Engine) -> list[tuple[str, Any, str]]:
    """(label, benchmark, split) of every suite in the report."""
    bench = engine.parts.benchmark
    suites = [(split, bench, split) for split in REPORT_SPLITS if split in bench.splits]
    for ref in engine.cfg.ood if engine.cfg.ood is not None else list(bench.ood):
        try:
            ood = load_benchmark(ref, seed=engine.cfg.seed)
        except EvolveError as exc:
            engine.progress({"event": "warning", "message": f"OOD suite {ref!r} skipped: {exc}"})
            continue
        split = "test" if "test" in ood.splits else next(iter(ood.splits))
        suites.append((f"ood:{ood.name}", ood, split))
    return suites


async def final_report(engine: Engine, st: LoopState) -> dict[str, Any]:
    """Evaluate seed and best on every suite (not charged to the evolution budget) and summarize."""
    seed_id, best_id = f"{engine.run_id}.seed", st.incumbent_id
    harnesses = {"seed": engine.harness(seed_id), "best": engine.harness(best_id)}
    summary: dict[str, Any] = {"seed": {}, "best": {}, "baselines": {}, "predictions": {}}
    limit = engine.cfg.report_limit
    for label, bench, split in _suites(engine):
        tasks = bench.split(split)[:limit] if limit else bench.split(split)
        engine.progress({"event": "report", "suite": label, "tasks": len(tasks)})
        for which, harness in harnesses.items():
            cid = seed_id if which == "seed" else best_id
            records = await engine.oracle.evaluate(harness, bench, split, tasks, candidate_id=cid, charge=False)
            summary[which][label] = summarize(records)
            if bench.labels:
                summary["predictions"].setdefault(label, {})[which] = prediction_distribution(
                    [r.prediction for r in records], [r.parsed for r in records])
        if bench.labels:
            majority_label, share = majority_baseline(tasks)
            summary["baselines"][label] = {"majority": share, "majority_label": majority_label}
    summary.update(_lineage_facts(engine, st, seed_id, best_id))
    return summary


def _lineage_facts(engine: Engine, st: LoopState, seed_id: str, best_id: str) -> dict[str, Any]:
    accepted = []
    for cid in st.accepted_chain:
        for e in engine.store.edits(cid):
            accepted.append({"candidate_id": cid, "op": e["op"], "component": e["component"],
                             "target": e["target"], "hypothesis": e["hypothesis"], "origin": e["origin"]})
    cands = engine.store.candidates(engine.run_id)
    statuses: dict[str, int] = {}
    for c in cands:
        statuses[c.status] = statuses.get(c.status, 0) + 1
    failed = [r for r in engine.store.rollouts(engine.run_id) if r.error]
    return {
        "run_id": engine.run_id, "seed_id": seed_id, "best_id": best_id,
        "rounds_run": st.next_round, "stopped": st.stopped,
        "rollouts_spent": st.rollouts_spent, "budget": engine.cfg.budget,
        "rollouts_total": engine.store.count_rollouts(engine.run_id),
        "failed_rollouts": len(failed), "failed_by_kind": _error_kinds(failed), "candidates": statuses,
        "accepted_edits": accepted,
        "usage": engine.store.usage_by_role(engine.run_id),
    }


def _error_kinds(failed: list[Any]) -> dict[str, int]:
    """Failed rollouts per error kind (the text before the first colon, e.g. `Timeout`, `RateLimitError`)."""
    kinds: dict[str, int] = {}
    for r in failed:
        kind = r.error.split(":", 1)[0].strip()[:60] or "error"
        kinds[kind] = kinds.get(kind, 0) + 1
    return dict(sorted(kinds.items()))
