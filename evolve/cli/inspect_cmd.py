"""`evolve lineage | show | diff | export | status`: read what runs stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from evolve.cli.common import DbOption, JsonOption, console, open_store
from evolve.errors import ConfigError
from evolve.harness import diff_harnesses
from evolve.report.export import EXPORT_FORMATS, export
from evolve.report.text import print_diff
from evolve.report.tree import as_dot, as_json, as_mermaid, rich_tree

TREE_FORMATS = ("tree", "json", "dot", "mermaid")


def _hypotheses(store, run_id: str) -> dict[str, list[str]]:
    result: dict[str, list[str]] = {}
    for e in store.run_edits(run_id):
        result.setdefault(e["candidate_id"], []).append(
            f"{e['op']} {e['component']}{' ' + e['target'] if e['target'] else ''}: {e['hypothesis']}")
    return result


def lineage(
    run: Annotated[str, typer.Argument(help="Run id, or 'latest'.")] = "latest",
    fmt: Annotated[str, typer.Option("--format", help="tree | json | dot | mermaid")] = "tree",
    db: DbOption = None,
) -> None:
    """Show a run's lineage tree: every candidate with status, score, Δ, tokens and hypotheses."""
    if fmt not in TREE_FORMATS:
        raise ConfigError(f"unknown --format {fmt!r}; valid: {', '.join(TREE_FORMATS)}")
    store = open_store(db)
    run_id = store.latest_run_id() if run == "latest" else store.get_run(run)["id"]
    cands = store.candidates(run_id)
    if fmt == "tree":
        console.print(rich_tree(run_id, cands, _hypotheses(store, run_id)))
    elif fmt == "json":
        typer.echo(json.dumps(as_json(run_id, cands, _hypotheses(store, run_id)), indent=2))
    elif fmt == "dot":
        typer.echo(as_dot(run_id, cands), nl=False)
    else:
        typer.echo(as_mermaid(cands), nl=False)


def show(
    candidate: Annotated[str, typer.Argument(help="Candidate id, 'best' or 'seed' (of the latest run).")],
    run: Annotated[str | None, typer.Option("--run", help="Run for 'best'/'seed'.")] = None,
    as_json_out: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Show one candidate: harness, edits, critiques, decision and rollout summary."""
    store = open_store(db)
    c = store.resolve_candidate(candidate, run)
    harness = store.get_harness(c.harness_hash)
    edits, crits, decs = store.edits(c.id), store.critiques(c.id), store.decisions(candidate_id=c.id)
    rolls = store.rollouts(c.run_id, harness_hash=c.harness_hash)
    by_split: dict[str, list[float]] = {}
    for r in rolls:
        by_split.setdefault(f"{r.benchmark}/{r.split}", []).append(r.reward)
    summary = {k: {"n": len(v), "mean": sum(v) / len(v)} for k, v in sorted(by_split.items())}
    if as_json_out:
        typer.echo(json.dumps({
            "candidate": c.__dict__, "harness": harness.model_dump(mode="json"), "edits": edits,
            "critiques": crits, "decisions": decs, "rollouts": summary,
        }, indent=2, default=str))
        return
    console.rule(f"candidate {c.id}")
    console.print(f"run {c.run_id}  round {c.round}  parent {c.parent_id}  status [bold]{c.status}[/bold]  "
                  f"origin {c.origin}  version {c.harness_hash}")
    if c.reason:
        console.print(f"reason: {c.reason}", markup=False)
    _table("edits", ["#", "op", "component", "target", "hypothesis"],
           [[str(e["position"]), e["op"], e["component"], str(e["target"] or ""), e["hypothesis"]] for e in edits])
    _table("critiques", ["kind", "verdict", "reason"], [[x["kind"], x["verdict"], x["reason"]] for x in crits])
    _table("decisions", ["kind", "accepted", "reason"],
           [[d["kind"], str(d["accepted"]), d["reason"]] for d in decs])
    _table("rollouts", ["benchmark/split", "n", "mean reward"],
           [[k, str(v["n"]), f"{v['mean']:.3f}"] for k, v in summary.items()])
    console.rule("harness")
    from evolve.harness import render_files

    for rel, text in render_files(harness).items():
        console.print(f"[bold]{rel}[/bold]")
        console.print(text, markup=False, highlight=False)


def _table(title: str, columns: list[str], rows: list[list[str]]) -> None:
    if not rows:
        return
    table = Table(title=title, show_lines=False)
    for col in columns:
        table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(*row)
    console.print(table)


def diff(
    a: Annotated[str, typer.Argument(help="Candidate id (or best/seed).")],
    b: Annotated[str, typer.Argument(help="Candidate id (or best/seed).")],
    run: Annotated[str | None, typer.Option("--run")] = None,
    db: DbOption = None,
) -> None:
    """Per-component colored diff between two stored candidates."""
    store = open_store(db)
    ca, cb = store.resolve_candidate(a, run), store.resolve_candidate(b, run)
    print_diff(diff_harnesses(store.get_harness(ca.harness_hash), store.get_harness(cb.harness_hash), ca.id, cb.id))


def export_cmd(
    candidate: Annotated[str, typer.Argument(help="Candidate id, or 'best' / 'seed'.")],
    fmt: Annotated[str, typer.Option("--format", help=" | ".join(EXPORT_FORMATS))] = "skills",
    out: Annotated[Path, typer.Option("--out", help="Output folder.")] = Path("export"),
    run: Annotated[str | None, typer.Option("--run")] = None,
    db: DbOption = None,
) -> None:
    """Export a candidate's harness for production use."""
    store = open_store(db)
    c = store.resolve_candidate(candidate, run)
    harness = store.get_harness(c.harness_hash)
    run_row = store.get_run(c.run_id)
    provenance = {"run_id": c.run_id, "candidate_id": c.id, "version": c.harness_hash,
                  "val_score": c.val_score, "model": run_row["model"], "benchmark": run_row["benchmark"]}
    files = export(harness, fmt, out, provenance)
    console.print(f"wrote {len(files)} file(s) to {out}")


def register(app: typer.Typer) -> None:
    app.command("lineage")(lineage)
    app.command("show")(show)
    app.command("diff")(diff)
    app.command("export")(export_cmd)
