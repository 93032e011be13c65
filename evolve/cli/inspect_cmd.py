"""`evolve lineage | show | diff | export | status`: read what runs stored (safe while a run writes)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.live import Live
from rich.markup import escape
from rich.table import Table

from evolve.bench.trajectory import counts, render_text
from evolve.cli.common import DbOption, JsonOption, console, open_store
from evolve.errors import ConfigError, StoreError
from evolve.harness import diff_harnesses, render_files
from evolve.report.export import EXAMPLE_PLACEMENTS, EXPORT_FORMATS, convert_examples, export_candidate, export_notes
from evolve.report.status import any_live, run_overview, run_panel, runs_table
from evolve.report.text import print_diff
from evolve.report.tree import (
    COMPACT_AFTER,
    as_dot,
    as_mermaid,
    edit_line,
    lineage_json,
    load_lineage,
    path_tree,
    rich_tree,
    score_text,
)
from evolve.roles import ROLES_KEY, roles_line
from evolve.store import LineageStore

TREE_FORMATS = ("tree", "json", "dot", "mermaid")
RunOption = Annotated[str | None, typer.Option("--run", help="Run for 'best'/'seed' (default: the latest run).")]


def _run_id(store: LineageStore, run: str | None) -> str:
    return store.latest_run_id() if run in (None, "latest") else store.get_run(run)["id"]


def lineage(
    run: Annotated[str, typer.Argument(help="Run id, or 'latest'.")] = "latest",
    fmt: Annotated[str, typer.Option("--format", help="tree | json | dot | mermaid")] = "tree",
    db: DbOption = None,
) -> None:
    """Show a run's lineage: every candidate with status, validation score and Δ with CI, tokens, hypotheses."""
    if fmt not in TREE_FORMATS:
        raise ConfigError(f"unknown --format {fmt!r}; valid: {', '.join(TREE_FORMATS)}")
    store = open_store(db)
    run_id = _run_id(store, run)
    if fmt == "json":
        typer.echo(lineage_json(store, run_id), nl=False)
        return
    if fmt == "tree" and store.count_candidates(run_id) > COMPACT_AFTER:
        console.print(path_tree(store, run_id))
        return
    data = load_lineage(store, run_id)
    if fmt == "tree":
        console.print(rich_tree(data))
    elif fmt == "dot":
        typer.echo(as_dot(data), nl=False)
    else:
        typer.echo(as_mermaid(data), nl=False)


def _rollout_summary(store: LineageStore, run_id: str, version: str) -> dict[str, dict[str, Any]]:
    return {f"{r['benchmark']}/{r['split']}": {"n": r["n"], "mean": r["mean_reward"], "parse_rate": r["parse_rate"],
                                               "tokens": (r["tokens_in"] or 0) + (r["tokens_out"] or 0)}
            for r in store.rollout_summary(run_id) if r["harness_hash"] == version}


def show(
    candidate: Annotated[str, typer.Argument(help="Candidate id, 'best' or 'seed' (or an eval run id with "
                                                  "--rollout).")],
    run: RunOption = None,
    rollout: Annotated[str | None, typer.Option("--rollout", help="Task id: print that rollout's trajectory "
                                                                   "(turns, tool calls, observations, verifier "
                                                                   "output).")] = None,
    split: Annotated[str | None, typer.Option("--split", help="With --rollout: the split of the rollout.")] = None,
    trial: Annotated[int, typer.Option("--trial", help="With --rollout: which trial.")] = 0,
    as_json_out: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Show one candidate: harness, edits, critiques, decision with its statistics, rollout summary; or with
    --rollout TASK_ID one rollout's trajectory (of a candidate, or of an `evolve eval` run)."""
    store = open_store(db)
    if rollout is not None:
        show_rollout(store, candidate, rollout, run=run, split=split, trial=trial, as_json=as_json_out)
        return
    c = store.resolve_candidate(candidate, run)
    harness = store.get_harness(c.harness_hash)
    edits, crits, decs = store.edits(c.id), store.critiques(c.id), store.decisions(candidate_id=c.id)
    summary = _rollout_summary(store, c.run_id, c.harness_hash)
    roles = store.get_state(c.run_id, ROLES_KEY) or {}
    if as_json_out:
        typer.echo(json.dumps({
            "candidate": c.__dict__, "harness": harness.model_dump(mode="json"), "edits": edits,
            "critiques": crits, "decisions": decs, "rollouts": summary, "roles": roles,
        }, indent=2, default=str, ensure_ascii=False))
        return
    console.rule(f"candidate {escape(c.id)}")
    console.print(f"run {c.run_id}  round {c.round}  parent {c.parent_id}  status {c.status}  origin {c.origin}  "
                  f"version {c.harness_hash}", markup=False)
    if roles:
        console.print(f"roles: {roles_line(roles)}", markup=False)
    scores = score_text(c.__dict__)
    if scores:
        console.print(scores, markup=False)
    if c.reason:
        console.print(f"reason: {c.reason}", markup=False)
    for line in repair_lines(c.meta or {}):
        console.print(line, markup=False)
    _table("edits", ["#", "op", "component", "target", "hypothesis"],
           [[str(e["position"]), e["op"], e["component"], str(e["target"] or ""), e["hypothesis"]] for e in edits])
    reasoning = (c.meta or {}).get("reasoning") or []
    if reasoning:
        _table("edit reasoning", ["#", "failure cluster", "expected effect", "specificity risk"],
               [[str(i), r.get("target_failure_cluster", ""), r.get("expected_effect", ""),
                 r.get("specificity_risk", "")] for i, r in enumerate(reasoning)])
    _table("critiques", ["kind", "verdict", "reason"], [[x["kind"], x["verdict"], x["reason"]] for x in crits])
    _table("decisions", ["kind", "accepted", "reason", "statistics"],
           [[d["kind"], str(d["accepted"]), d["reason"], _stats(d["stats"])] for d in decs])
    _table("rollouts", ["benchmark/split", "n", "mean reward", "parse rate", "tokens"],
           [[k, str(v["n"]), f"{v['mean']:.3f}", f"{v['parse_rate'] or 0:.2f}", str(v["tokens"])]
            for k, v in sorted(summary.items())])
    console.rule("harness")
    for rel, text in render_files(harness).items():
        console.print(rel, style="bold", markup=False)
        console.print(text, markup=False, highlight=False)


def repair_lines(meta: dict[str, Any]) -> list[str]:
    """The critic repair of a candidate: the revision it got, or the draft it revises."""
    lines = []
    repair = meta.get("repair")
    if repair:
        lines.append(f"critic repair: revised as {repair.get('candidate')}: {repair.get('outcome', '')}")
    if meta.get("repair_of"):
        lines.append(f"revision of {meta['repair_of']} after the critic's reason: {meta.get('critic_reason', '')}")
    return lines


def _rollout_of(store: LineageStore, ref: str, task_id: str, run: str | None, split: str | None,
                trial: int) -> Any:
    try:
        run_id, version = store.get_run(ref)["id"], None
    except StoreError:
        c = store.resolve_candidate(ref, run)
        run_id, version = c.run_id, c.harness_hash
    found = [r for r in store.task_rollouts(run_id, task_id, harness_hash=version, split=split) if r.trial == trial]
    if not found:
        where = f"split {split!r}, " if split else ""
        raise StoreError(f"no rollout of task {task_id!r} ({where}trial {trial}) for {ref!r} in run {run_id!r}")
    return found[-1]


def show_rollout(store: LineageStore, ref: str, task_id: str, *, run: str | None = None, split: str | None = None,
                 trial: int = 0, as_json: bool = False) -> None:
    """Print one stored rollout with its trajectory step by step."""
    r = _rollout_of(store, ref, task_id, run, split, trial)
    if as_json:
        typer.echo(json.dumps(r.__dict__, indent=2, default=str, ensure_ascii=False))
        return
    turns, calls = counts(r.trajectory)
    console.rule(f"rollout {escape(r.task_id)} · trial {r.trial} · {escape(r.benchmark)}/{r.split}")
    console.print(f"run {r.run_id}  harness {r.harness_hash}  reward {r.reward:.3f}  turns {turns}  tool calls "
                  f"{calls}  tokens {r.tokens_in} in / {r.tokens_out} out  {r.latency_s:.1f}s", markup=False)
    if r.error:
        console.print(f"error: {r.error}", markup=False, style="red")
    for head, body in render_text(r.trajectory):
        console.print(head, style="bold cyan", markup=False)
        console.print(body, markup=False, highlight=False)


def _stats(stats: dict[str, Any] | None) -> str:
    return ", ".join(f"{k}={v:+.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in (stats or {}).items())


def _table(title: str, columns: list[str], rows: list[list[str]]) -> None:
    if not rows:
        return
    table = Table(title=title, show_lines=False, title_justify="left")
    for col in columns:
        table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(*(escape(cell) for cell in row))
    console.print(table)


def diff(
    a: Annotated[str, typer.Argument(help="Candidate id (or best/seed).")],
    b: Annotated[str, typer.Argument(help="Candidate id (or best/seed).")],
    run: RunOption = None,
    db: DbOption = None,
) -> None:
    """Per-component colored unified diff between two stored candidates, with the edits in between."""
    store = open_store(db)
    ca, cb = store.resolve_candidate(a, run), store.resolve_candidate(b, run)
    print_diff(diff_harnesses(store.get_harness(ca.harness_hash), store.get_harness(cb.harness_hash), ca.id, cb.id))
    if cb.parent_id == ca.id:
        for e in store.edits(cb.id):
            console.print(f"edit: {edit_line(e)}", markup=False, style="dim")


def export_cmd(
    candidate: Annotated[str, typer.Argument(help="Candidate id, or 'best' / 'seed'.")],
    fmt: Annotated[str, typer.Option("--format", help=" | ".join(EXPORT_FORMATS))] = "skills",
    out: Annotated[Path, typer.Option("--out", help="Output folder.")] = Path("export"),
    run: RunOption = None,
    allow_leaks: Annotated[bool, typer.Option("--allow-leaks", help="Export even if the leakage screen "
                                                                     "finds evolve-split content.")] = False,
    examples_as: Annotated[str | None, typer.Option(
        "--examples-as", help="Convert the few-shot placement: turns | system (exports a different harness than "
                              "the one evaluated; default: keep it).")] = None,
    db: DbOption = None,
) -> None:
    """Export a candidate's harness for production use (after a leakage screen against the evolve split)."""
    if fmt not in EXPORT_FORMATS:
        raise ConfigError(f"unknown --format {fmt!r}; valid: {', '.join(EXPORT_FORMATS)}")
    if examples_as is not None and examples_as not in EXAMPLE_PLACEMENTS:
        raise ConfigError(f"--examples-as {examples_as!r} is unknown; valid: {', '.join(EXAMPLE_PLACEMENTS)}")
    store = open_store(db)
    files, prov = export_candidate(store, candidate, fmt, out, run_id=run, allow_leaks=allow_leaks,
                                   examples_as=examples_as)
    findings = prov.leakage.get("findings") or []
    if findings:
        console.print(f"[yellow]exported despite {len(findings)} leakage finding(s) (--allow-leaks)[/]")
    console.print(f"wrote {len(files)} file(s) to {escape(str(out))} (harness {prov.version}, "
                  f"candidate {escape(str(prov.candidate_id))})")
    if prov.evaluated_version:
        console.print(f"[yellow]converted: examples as {examples_as}; the run evaluated harness "
                      f"{prov.evaluated_version}, this export is {prov.version}[/]")
    evaluated = store.get_harness(store.resolve_candidate(candidate, run).harness_hash)
    for note in export_notes(convert_examples(evaluated, examples_as), fmt, out):
        console.print(note, markup=False, soft_wrap=True)  # not wrapped: paths stay whole


def status(
    run: Annotated[str | None, typer.Argument(help="Run id for a detailed view (default: all runs).")] = None,
    watch: Annotated[bool, typer.Option("--watch", help="Refresh from the database until no run is live.")] = False,
    interval: Annotated[float, typer.Option("--interval", help="Seconds between refreshes with --watch.")] = 2.0,
    as_json_out: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Runs in the database; running ones live. A running run without heartbeat for a minute is stale/killed."""
    store = open_store(db)
    run_id = None if run is None else store.get_run(run)["id"]

    def view() -> Any:
        if run_id:
            return run_panel(store, run_id)
        return runs_table([run_overview(store, r) for r in store.list_runs()], wide=console.width >= 120)

    if as_json_out:
        runs = [store.get_run(run_id)] if run_id else store.list_runs()
        typer.echo(json.dumps([run_overview(store, r) for r in runs], indent=2, default=str))
        return
    if not run_id and not store.list_runs():
        console.print("no runs in this database yet; start one with `evolve run`")
        return
    if not watch:
        console.print(view())
        if any_live(store, run_id):
            console.print("[dim]a run is live: `evolve status --watch` refreshes this view[/]")
        return
    with Live(view(), console=console, refresh_per_second=4, transient=False) as live:
        while any_live(store, run_id):
            time.sleep(max(0.05, interval))
            live.update(view())
        live.update(view())  # the end state: a run can finish between a refresh and the liveness check


def register(app: typer.Typer) -> None:
    app.command("lineage")(lineage)
    app.command("show")(show)
    app.command("diff")(diff)
    app.command("export")(export_cmd)
    app.command("status")(status)
