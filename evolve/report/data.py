"""Everything the HTML report shows about one run, read from the store into plain values."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evolve.bench.trajectory import counts, render_text
from evolve.report.status import run_overview
from evolve.report.svg import Series, bar_chart, line_chart, progress_bar
from evolve.report.tree import STATUS_COLOR, STATUS_LABEL, Lineage, edit_line, load_lineage
from evolve.report.tree_svg import tree_svg
from evolve.store import LineageStore

SPLIT_ORDER = ("evolve", "validation", "test")
AGREEMENT_TARGET = 0.9


@dataclass
class ReportData:
    """Values for `report.html.j2` (text is raw here; the template escapes it)."""

    run: dict[str, Any]
    overview: dict[str, Any]
    counts: list[tuple[str, str, int]]
    tree: str
    hidden: int
    charts: dict[str, str]
    splits: list[dict[str, Any]]
    accepted: list[dict[str, Any]]
    rejected: list[dict[str, Any]]
    rubrics: list[dict[str, Any]]
    usage: list[dict[str, Any]]
    examples: list[dict[str, Any]]
    best: str | None
    notes: list[str] = field(default_factory=list)
    round_rows: list[dict[str, Any]] = field(default_factory=list)
    """Per round: val score, drafts per source (produced/valid/evaluated/admissible/accepted), rejections."""
    proposer_note: str | None = None
    """When and why the LLM proposer lost its slots, if it did."""


def _split_names(summary: dict[str, Any]) -> list[str]:
    names = {k for part in ("seed", "best") for k in (summary.get(part) or {}) if isinstance(k, str)}
    ordered = [s for s in SPLIT_ORDER if s in names]
    return ordered + sorted(n for n in names if n not in SPLIT_ORDER)


def split_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Seed vs best per split from the run summary (missing parts stay None)."""
    rows = []
    for name in _split_names(summary):
        seed = (summary.get("seed") or {}).get(name) or {}
        best = (summary.get("best") or {}).get(name) or {}
        delta = None
        if isinstance(seed.get("score"), int | float) and isinstance(best.get("score"), int | float):
            delta = best["score"] - seed["score"]
        rows.append({"split": name, "seed": seed, "best": best, "delta": delta})
    return rows


def _ci(part: dict[str, Any]) -> tuple[float, float] | None:
    lo, hi = part.get("ci_low"), part.get("ci_high")
    return (lo, hi) if isinstance(lo, int | float) and isinstance(hi, int | float) else None


def _round_chart(lineage: Lineage, rounds: list[dict[str, Any]]) -> str:
    series = []
    for key, name in (("evolve_score", "incumbent on evolve"), ("val_score", "incumbent on validation")):
        pts = [(r["round"], r[key]) for r in rounds if isinstance(r.get(key), int | float)]
        if pts:
            series.append(Series(name, pts))
    by_status: dict[str, list[tuple[float, float]]] = {}
    for n in lineage.nodes:
        if n["val_score"] is not None:
            by_status.setdefault(n["status"], []).append((n["round"], n["val_score"]))
    series += [Series(STATUS_LABEL.get(s, s), pts, color=STATUS_COLOR.get(s, ""), dots=True)
               for s, pts in sorted(by_status.items())]
    return line_chart("Score per round (lines: incumbent; dots: candidates on validation)", series,
                      chart_id="chart-rounds", ylabel="score", width=680)


def _split_chart(rows: list[dict[str, Any]]) -> str:
    groups = [r["split"] for r in rows]
    bars = [("seed", [r["seed"].get("score") for r in rows]), ("best", [r["best"].get("score") for r in rows])]
    errors = [[_ci(r["seed"]) for r in rows], [_ci(r["best"]) for r in rows]]
    return bar_chart("Seed vs best per split (95% CI)", groups, bars, errors=errors, chart_id="chart-splits",
                     ylabel="score", width=640)


def _token_chart(rows: list[dict[str, Any]], rounds: list[dict[str, Any]]) -> str:
    groups = [r["split"] for r in rows if r["seed"].get("policy_tokens") or r["best"].get("policy_tokens")]
    if groups:
        pick = [r for r in rows if r["split"] in groups]
        bars = [("seed", [r["seed"].get("policy_tokens") for r in pick]),
                ("best", [r["best"].get("policy_tokens") for r in pick])]
        return bar_chart("Policy tokens per task", groups, bars, chart_id="chart-tokens", ylabel="tokens")
    pts = [(r["round"], r["tokens"]) for r in rounds if isinstance(r.get("tokens"), int | float)]
    return line_chart("Tokens spent", [Series("tokens", pts)], chart_id="chart-tokens", ylabel="tokens")


def _budget_charts(overview: dict[str, Any], rounds: list[dict[str, Any]]) -> str:
    pts = [(r["round"], r["rollouts_spent"]) for r in rounds if isinstance(r.get("rollouts_spent"), int | float)]
    used = pts[-1][1] if pts else overview["rollouts"]  # the budget covers the rounds; final reporting is extra
    meter = progress_bar("Oracle rollout budget (evolution rounds)", used, overview.get("budget"),
                         chart_id="chart-budget", unit="rollouts")
    if not pts:
        return meter
    budget = overview.get("budget")
    hline = (float(budget), "budget") if isinstance(budget, int | float) else None
    return meter + line_chart("Rollouts spent by round", [Series("rollouts spent", pts)], chart_id="chart-spent",
                              ylabel="rollouts", hline=hline)


def _agreement_chart(rubrics: list[dict[str, Any]]) -> str:
    rows = [r for r in rubrics if r.get("agreement") is not None]
    return bar_chart("Surrogate–oracle agreement per rubric version", [f"v{r['version']}" for r in rows],
                     [("agreement", [r["agreement"] for r in rows])], chart_id="chart-agreement",
                     ylabel="agreement", hline=(AGREEMENT_TARGET, "target 0.9"))


def _usage_chart(usage: list[dict[str, Any]]) -> str:
    return bar_chart("Model tokens by role", [u["role"] for u in usage],
                     [("tokens in", [u["tokens_in"] for u in usage]), ("tokens out", [u["tokens_out"] for u in usage])],
                     chart_id="chart-usage", ylabel="tokens")


def _edit_rows(lineage: Lineage) -> tuple[list[dict], list[dict]]:
    accepted, rejected = [], []
    for n in lineage.nodes:
        edits = n["edits"]
        if n["status"] == "accepted":
            accepted += [{"candidate": n["id"], "round": n["round"], "edit": edit_line({**e, "hypothesis": ""}),
                          "hypothesis": e["hypothesis"], "delta": n["delta"], "delta_ci": n.get("delta_ci"),
                          "val": n["val_score"], "delta_c": n.get("delta_c"), "reason": n["reason"]} for e in edits]
        elif n["status"].startswith("rejected") or n["status"] == "pruned":
            rejected.append({"candidate": n["id"], "round": n["round"], "status": STATUS_LABEL.get(n["status"]),
                             "reason": n["reason"], "edits": [edit_line(e) for e in edits]})
    return accepted, rejected


def _example(r: Any, candidate: str | None) -> dict[str, Any]:
    """One rollout for the report; multi-turn ones carry their trajectory (steps) and an anchor to it."""
    turns, calls = counts(r.trajectory)
    agentic = turns > 1 or calls > 0
    return {"split": r.split, "task_id": r.task_id, "reward": r.reward, "prediction": r.prediction or "",
            "error": r.error or "", "trial": r.trial, "turns": turns, "tool_calls": calls,
            "anchor": f"rollout-{r.split}-{r.task_id}-{r.trial}" if agentic else "",
            "steps": render_text(r.trajectory, width=1500) if agentic else [],
            "show": f"evolve show {candidate} --rollout {r.task_id} --split {r.split} --trial {r.trial}"}


def collect(store: LineageStore, run_id: str, *, max_rejected: int = 200, examples: int = 6) -> ReportData:
    """Read one run into ReportData (charts rendered as inline SVG)."""
    run = store.get_run(run_id)
    overview = run_overview(store, run)
    lineage = load_lineage(store, run_id)
    rounds = [r for r in store.get_state(run_id, "round_scores") or [] if isinstance(r, dict) and "round" in r]
    rows = split_rows(run.get("summary") or {})
    rubrics = store.rubrics(run_id)
    usage = [{"role": role, **u} for role, u in sorted(store.usage_by_role(run_id).items())]
    accepted, rejected = _edit_rows(lineage)
    svg, hidden = tree_svg(lineage)
    best_hash = next((n["version"] for n in lineage.nodes if n["id"] == lineage.best), None)
    sample = store.rollout_examples(run_id, best_hash, limit=examples, with_trajectory=True) if best_hash else []
    charts = {"rounds": _round_chart(lineage, rounds), "splits": _split_chart(rows),
              "tokens": _token_chart(rows, rounds), "budget": _budget_charts(overview, rounds),
              "agreement": _agreement_chart(rubrics), "usage": _usage_chart(usage)}
    counts = [(s, STATUS_LABEL.get(s, s), c) for s, c in sorted(overview["by_status"].items())]
    notes = [] if rows else ["the run has no seed-vs-best summary yet (it is still running or failed early)"]
    notes += [f"warning: {flag}" for flag in (run.get("summary") or {}).get("flags") or []]
    notes += _decision_note((run.get("summary") or {}).get("decision_tasks"))
    return ReportData(
        run=run, overview=overview, counts=counts, tree=svg, hidden=hidden, charts=charts, splits=rows,
        accepted=accepted, rejected=rejected[-max_rejected:], rubrics=rubrics, usage=usage,
        examples=[_example(r, lineage.best) for r in sample],
        best=lineage.best, notes=notes,
        round_rows=[{"round": r["round"], "val_score": r.get("val_score"), "drafts": r.get("drafts") or {},
                     "rejections": r.get("rejections") or {}} for r in rounds],
        proposer_note=next((r["proposer_disabled"] for r in reversed(rounds) if r.get("proposer_disabled")), None))


def _decision_note(decided: Any) -> list[str]:
    """A note when decisions rested on a sample of the validation split (`acceptance.validation_tasks`)."""
    if not isinstance(decided, dict) or not isinstance(decided.get("n"), int) or decided["n"] >= decided.get("of", 0):
        return []
    return [f"decisions rested on a sample of {decided['n']} of the {decided['of']} validation tasks "
            f"(acceptance.validation_tasks); the split table scores the whole split"]
