"""The closing report of a run: seed vs best on evolve / validation / test / OOD suites.

An out-of-distribution suite is held out entirely: every task of it is scored (all its splits).
"""

from __future__ import annotations

from typing import Any

from evolve.bench.stats import UNPARSED, answer_label, balanced_score, majority_baseline, prediction_distribution
from evolve.loop import decision_split
from evolve.loop.context import RoundContext
from evolve.loop.oracle import summarize
from evolve.loop.state import LoopState
from evolve.selection.guards import beyond_collapse_limit, label_shares, normalize_label

REPORT_SPLITS = ("evolve", "validation", "test")


OOD_SPLIT = "all"
"""The split name rollouts of a whole OOD suite are stored under."""


def _suites(ctx: RoundContext) -> list[tuple[str, Any, str, list[Any]]]:
    """(label, benchmark, split, tasks) of every suite in the report."""
    bench = ctx.benchmark
    suites = [(split, bench, split, bench.split(split)) for split in REPORT_SPLITS if split in bench.splits]
    for ood in ctx.parts.ood:
        tasks = [task for split in ood.splits.values() for task in split]
        suites.append((f"ood:{ood.name}", ood, OOD_SPLIT, tasks))
    return suites


async def final_report(ctx: RoundContext) -> dict[str, Any]:
    """Evaluate seed and best on every suite (not charged to the evolution budget) and summarize."""
    st = ctx.state
    seed_id, best_id = ctx.seed_id, st.incumbent_id
    harnesses = {"seed": ctx.harness(seed_id), "best": ctx.harness(best_id)}
    summary: dict[str, Any] = {"seed": {}, "best": {}, "baselines": {}, "predictions": {}}
    limit = ctx.cfg.report_limit
    for label, bench, split, all_tasks in _suites(ctx):
        tasks = all_tasks[:limit] if limit else all_tasks
        ctx.progress({"event": "report", "suite": label, "tasks": len(tasks)})
        for which, harness in harnesses.items():
            cid = seed_id if which == "seed" else best_id
            records = await ctx.oracle.evaluate(harness, bench, split, tasks, candidate_id=cid, charge=False)
            summary[which][label] = summarize(records)
            if bench.labels:
                gold = {task.id: task.target for task in tasks}
                summary[which][label]["balanced"] = balanced_score(records, gold)
                summary["predictions"].setdefault(label, {})[which] = prediction_distribution(
                    [answer_label(r.prediction, bench.labels) for r in records], [r.parsed for r in records])
        if bench.labels:
            majority_label, share = majority_baseline(tasks)
            golds = label_shares([task.target for task in tasks])
            summary["baselines"][label] = {"majority": share, "majority_label": majority_label,
                                           "gold_shares": {k: c / len(tasks) for k, c in golds.items()}}
    guards = ctx.sel.guards
    limit_args = (guards.collapse_margin, guards.collapse_min_share) if guards.collapse_margin is not None else None
    summary["flags"] = flags(summary, collapse=limit_args)
    summary.update(_lineage_facts(ctx, st, seed_id, best_id))
    return summary


def flags(summary: dict[str, Any], collapse: tuple[float, float] | None = None) -> list[str]:
    """Warnings on the reported scores: a best harness below the seed, or below the majority-class
    baseline (a harness that scores under "always answer the most frequent label" has learned nothing),
    or a gain over the seed that the balanced score does not share (it came from label bias), or,
    given `collapse` = (margin, min_share) (the collapse guard's limit), a best harness whose most
    frequent answer takes more than its gold share + margin and more than min_share of a suite."""
    out = []
    for suite, best in summary["best"].items():
        if collapse is not None and (flag := _collapse_flag(summary, suite, *collapse)):
            out.append(flag)
        seed_row = summary["seed"].get(suite, {})
        score, seed = best.get("score"), seed_row.get("score")
        if score is None:
            continue
        if seed is not None and score < seed:
            out.append(f"{suite}: best {score:.3f} is below the seed's {seed:.3f}")
        bal, seed_bal = best.get("balanced"), seed_row.get("balanced")
        if seed is not None and score > seed and bal is not None and seed_bal is not None and bal <= seed_bal:
            out.append(f"{suite}: best's gain over the seed ({score - seed:+.3f}) is label bias: its balanced "
                       f"score (mean per gold label) is {bal:.3f} vs the seed's {seed_bal:.3f}")
        base = summary["baselines"].get(suite)
        if base and base.get("majority") is not None and score < base["majority"]:
            out.append(f"{suite}: best {score:.3f} is below the majority-class baseline {base['majority']:.3f} "
                       f"(always {base['majority_label']!r})")
    return out


def _collapse_flag(summary: dict[str, Any], suite: str, margin: float, min_share: float) -> str | None:
    """The best harness answers one label far beyond that label's share of the gold answers."""
    shares = (summary.get("predictions") or {}).get(suite, {}).get("best") or {}
    gold = (summary["baselines"].get(suite) or {}).get("gold_shares")
    merged: dict[str, float] = {}
    for answer, share in shares.items():
        if answer not in (UNPARSED, "(other)") and normalize_label(answer):
            merged[normalize_label(answer)] = merged.get(normalize_label(answer), 0.0) + share
    if not merged or gold is None:
        return None
    answer, share = max(merged.items(), key=lambda item: item[1])
    gold_share = gold.get(answer, 0.0)
    if beyond_collapse_limit(share, gold_share, margin=margin, min_share=min_share):
        return (f"{suite}: best answers {answer!r} on {share:.0%} of tasks vs {gold_share:.0%} in the gold "
                f"answers: it has collapsed onto one label")
    return None


def _lineage_facts(ctx: RoundContext, st: LoopState, seed_id: str, best_id: str) -> dict[str, Any]:
    accepted = []
    for cid in st.accepted_chain:
        for e in ctx.store.edits(cid):
            accepted.append({"candidate_id": cid, "op": e["op"], "component": e["component"],
                             "target": e["target"], "hypothesis": e["hypothesis"], "origin": e["origin"]})
    cands = ctx.store.candidates(ctx.run_id)
    statuses: dict[str, int] = {}
    for c in cands:
        statuses[c.status] = statuses.get(c.status, 0) + 1
    failed = [r for r in ctx.store.rollouts(ctx.run_id) if r.error]
    return {
        "run_id": ctx.run_id, "seed_id": seed_id, "best_id": best_id,
        "rounds_run": st.next_round, "stopped": st.stopped,
        "rollouts_spent": st.rollouts_spent, "budget": ctx.parts.budget, "budget_spent": st.budget_spent,
        "rollouts_total": ctx.store.count_rollouts(ctx.run_id),
        "failed_rollouts": len(failed), "failed_by_kind": _error_kinds(failed), "candidates": statuses,
        "accepted_edits": accepted, "proposer_disabled": st.proposer_disabled,
        "rounds": [{k: r.get(k) for k in ("round", "val_score", "accepted", "drafts", "rejections")}
                   for r in st.round_scores],
        "usage": ctx.store.usage_by_role(ctx.run_id), "decision_tasks": _decision_tasks(ctx),
    }


def _decision_tasks(ctx: Any) -> dict[str, int] | None:
    """How many validation tasks the decisions rested on, of how many (None: decided on the evolve batch)."""
    if ctx.sel.acceptance.split != "validation":
        return None
    return {"n": decision_split.size(ctx.benchmark, ctx.sel, ctx.cfg), "of": len(ctx.benchmark.split("validation"))}


def _error_kinds(failed: list[Any]) -> dict[str, int]:
    """Failed rollouts per error kind (the text before the first colon, e.g. `Timeout`, `RateLimitError`)."""
    kinds: dict[str, int] = {}
    for r in failed:
        kind = r.error.split(":", 1)[0].strip()[:60] or "error"
        kinds[kind] = kinds.get(kind, 0) + 1
    return dict(sorted(kinds.items()))
