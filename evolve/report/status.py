"""`evolve status` views: a table of runs and a live panel of one run, read from the store.

A run whose status is `running` but whose heartbeat is older than `STALE_AFTER_S` shows as
`stale/killed` (its process died without closing the run; `evolve resume RUN` continues it).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rich.console import Group
from rich.markup import escape
from rich.table import Table

from evolve.report.tree import STATUS_LABEL
from evolve.store import LineageStore

STALE_AFTER_S = 60.0
RUN_STYLE = {"running": "bold cyan", "finished": "green", "failed": "red", "stale/killed": "bold yellow"}


def _utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def display_status(run: dict[str, Any], now: datetime | None = None) -> str:
    """The stored status, or `stale/killed` for a running run without a recent heartbeat."""
    if run["status"] != "running":
        return run["status"]
    now = now or datetime.now(UTC)
    beat = _utc(run.get("heartbeat_at")) or _utc(run.get("updated_at"))
    if beat is None or (now - beat).total_seconds() > STALE_AFTER_S:
        return "stale/killed"
    return "running"


def _age(value: datetime | None, now: datetime) -> str:
    value = _utc(value)
    if value is None:
        return "-"
    seconds = max(0.0, (now - value).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit} ago"
    return f"{seconds:.0f}s ago"


def _best_val(run: dict[str, Any]) -> str:
    best = ((run.get("summary") or {}).get("best") or {}).get("validation")
    return f"{best['score']:.3f}" if isinstance(best, dict) and best.get("score") is not None else "-"


def run_overview(store: LineageStore, run: dict[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """One run's status line as a plain dict (also the `--json` output)."""
    now = now or datetime.now(UTC)
    counts = store.run_counts(run["id"])
    budget = (run.get("config") or {}).get("budget")
    rounds = store.get_state(run["id"], "round_scores") or []
    val = rounds[-1].get("val_score") if rounds and isinstance(rounds[-1], dict) else None
    return {
        "id": run["id"], "status": display_status(run, now), "stored_status": run["status"],
        "preset": run.get("preset", ""), "benchmark": run.get("benchmark", ""), "model": run.get("model", ""),
        "round": counts["last_round"], "rounds": (run.get("config") or {}).get("rounds"),
        "candidates": counts["candidates"], "by_status": counts["by_status"], "rollouts": counts["rollouts"],
        "budget": budget, "policy_tokens": counts["policy_tokens_in"] + counts["policy_tokens_out"],
        "incumbent_val": val, "best_val": _best_val(run),
        "heartbeat": _age(run.get("heartbeat_at"), now), "created_at": str(run.get("created_at")),
        "error": run.get("error"),
    }


def runs_table(rows: list[dict[str, Any]]) -> Table:
    """The table of runs (one row per `run_overview`)."""
    table = Table(title="runs", title_justify="left")
    for col in ("run", "status", "preset", "benchmark", "model", "round", "candidates", "rollouts / budget",
                "tokens", "val (incumbent)", "heartbeat"):
        table.add_column(col, overflow="fold")
    for r in rows:
        style = RUN_STYLE.get(r["status"], "")
        rnd = "-" if r["round"] is None else f"{r['round']}" + (f"/{r['rounds']}" if r["rounds"] else "")
        val = f"{r['incumbent_val']:.3f}" if isinstance(r["incumbent_val"], int | float) else r["best_val"]
        table.add_row(escape(r["id"]), f"[{style}]{r['status']}[/]", escape(str(r["preset"])),
                      escape(str(r["benchmark"])), escape(str(r["model"])), rnd, str(r["candidates"]),
                      f"{r['rollouts']}" + (f" / {r['budget']}" if r["budget"] else ""), f"{r['policy_tokens']:,}",
                      val, r["heartbeat"])
    return table


def run_panel(store: LineageStore, run_id: str, now: datetime | None = None) -> Group:
    """One run in detail: status line, rounds so far, candidates per status, model usage."""
    run = store.get_run(run_id)
    overview = run_overview(store, run, now)
    parts: list[Any] = [runs_table([overview])]
    rounds = store.get_state(run_id, "round_scores") or []
    if rounds:
        table = Table(title="rounds", title_justify="left")
        for col in ("round", "incumbent", "val", "evolve", "rollouts spent", "tokens"):
            table.add_column(col)
        for r in rounds[-15:]:
            table.add_row(*(_cell(r.get(k)) for k in ("round", "incumbent", "val_score", "evolve_score",
                                                       "rollouts_spent", "tokens")))
        parts.append(table)
    if overview["by_status"]:
        parts.append("candidates: " + ", ".join(
            f"{STATUS_LABEL.get(k, k)} {v}" for k, v in sorted(overview["by_status"].items())))
    usage = store.usage_by_role(run_id)
    if usage:
        parts.append("model usage: " + ", ".join(
            f"{role} {u['calls']} calls {(u['tokens_in'] or 0) + (u['tokens_out'] or 0):,} tok"
            for role, u in sorted(usage.items())))
    if overview["error"]:
        parts.append(f"[red]error:[/] {escape(str(overview['error']))}")
    return Group(*parts)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    return escape(str(value))


def any_live(store: LineageStore, run_id: str | None) -> bool:
    """Whether the watched run (or any run) is still running with a recent heartbeat."""
    runs = [store.get_run(run_id)] if run_id else store.list_runs()
    return any(display_status(r) == "running" for r in runs)
