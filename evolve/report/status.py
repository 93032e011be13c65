"""`evolve status` views: a table of runs and a live panel of one run, read from the store.

A run whose status is `running` but whose heartbeat is older than `STALE_AFTER_S` shows as
`stale/killed` (its process died without closing the run; `evolve resume RUN` continues it).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from rich import box
from rich.console import Group
from rich.markup import escape
from rich.table import Table

from evolve.report.tree import STATUS_LABEL
from evolve.roles import ROLES_KEY, roles_line
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
            return f"{seconds / size:.0f}{unit}"
    return f"{seconds:.0f}s"


def _best_val(run: dict[str, Any]) -> str:
    best = ((run.get("summary") or {}).get("best") or {}).get("validation")
    return f"{best['score']:.3f}" if isinstance(best, dict) and best.get("score") is not None else "-"


def run_overview(store: LineageStore, run: dict[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """One run's status line as a plain dict (also the `--json` output)."""
    now = now or datetime.now(UTC)
    counts = store.run_counts(run["id"])
    config = run.get("config") or {}
    rounds = [r for r in store.get_state(run["id"], "round_scores") or [] if isinstance(r, dict)]
    last = rounds[-1] if rounds else {}
    done = last.get("round", counts["last_round"] if counts["last_round"] is not None else -1)
    spent = last.get("rollouts_spent")
    roles = store.get_state(run["id"], ROLES_KEY) or {}
    return {
        "id": run["id"], "status": display_status(run, now), "stored_status": run["status"],
        "preset": run.get("preset", ""), "benchmark": run.get("benchmark", ""), "model": run.get("model", ""),
        "rounds_done": max(0, int(done) + 1), "rounds": config.get("rounds"),
        "candidates": counts["candidates"], "by_status": counts["by_status"], "rollouts": counts["rollouts"],
        "rollouts_spent": spent if isinstance(spent, int | float) else counts["rollouts"],
        "budget": config.get("budget"), "policy_tokens": counts["policy_tokens_in"] + counts["policy_tokens_out"],
        "incumbent": last.get("incumbent"), "incumbent_val": last.get("val_score"), "best_val": _best_val(run),
        "heartbeat": _age(run.get("heartbeat_at"), now), "created_at": str(run.get("created_at")),
        "error": run.get("error"), "roles": roles, "roles_line": roles_line(roles),
    }


def runs_table(rows: list[dict[str, Any]], *, wide: bool = True) -> Table:
    """The table of runs (one row per `run_overview`); `rollouts` are the evolution rounds' oracle rollouts.

    `wide=False` (narrow terminals) leaves out the preset · benchmark · model column.
    """
    table = Table(title="runs", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("run", overflow="fold")
    table.add_column("status", no_wrap=True)
    if wide:
        table.add_column("preset · benchmark · model", overflow="fold")
    for col in ("round", "cands", "rollouts", "tokens", "val", "heartbeat"):
        table.add_column(col, justify="right")
    for r in rows:
        style = RUN_STYLE.get(r["status"], "")
        rnd = f"{r['rounds_done']}" + (f"/{r['rounds']}" if r["rounds"] else "")
        val = f"{r['incumbent_val']:.3f}" if isinstance(r["incumbent_val"], int | float) else r["best_val"]
        spent = f"{r['rollouts_spent']:,.0f}" + (f"/{r['budget']:,}" if r["budget"] else "")
        setup = [escape(" · ".join(str(r[k]) for k in ("preset", "benchmark", "model") if r[k]))] if wide else []
        table.add_row(escape(r["id"]), f"[{style}]{r['status']}[/]", *setup, rnd, str(r["candidates"]), spent,
                      f"{r['policy_tokens']:,}", val, r["heartbeat"])
    return table


def run_panel(store: LineageStore, run_id: str, now: datetime | None = None) -> Group:
    """One run in detail: status line, rounds so far, candidates per status, model usage."""
    run = store.get_run(run_id)
    overview = run_overview(store, run, now)
    parts: list[Any] = [runs_table([overview], wide=False),
                        escape(f"preset {overview['preset']} · benchmark {overview['benchmark']} · "
                               f"model {overview['model']}")]
    if overview["roles_line"]:
        parts.append(escape(f"roles: {overview['roles_line']}"))
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
