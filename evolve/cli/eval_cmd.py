"""`evolve eval`: score a harness on a benchmark split, with a 95% CI, baselines and token cost."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from evolve.cli.common import DbOption, JsonOption, console, err_console


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _line(text: str) -> None:
    console.print(text, soft_wrap=True)


def render_report(report: dict[str, Any]) -> None:
    """Print an eval report as a few lines of text."""
    r = report
    _line(f"[bold]{escape(r['harness'])}[/bold] ({r['harness_version']}) on "
                  f"[bold]{escape(r['benchmark'])}[/bold]/{r['split']}: {r['tasks']} tasks × {r['trials']} "
                  f"trial(s), model {escape(r['model'])}")
    _line(f"score [bold]{r['score']:.3f}[/bold]  95% CI [{r['ci_low']:.3f}, {r['ci_high']:.3f}]  n={r['n']}")
    if r["majority_baseline"] is not None:
        _line(f"baselines: majority {_pct(r['majority_baseline'])} ({escape(str(r['majority_label']))}), "
                      f"best constant {_pct(r['best_constant_baseline'])} ({escape(str(r['best_constant']))})")
    if r.get("balanced") is not None:
        _line(f"balanced score {r['balanced']:.3f} (the mean per gold label: answering one label always "
              f"scores 1 / the number of labels)")
    _line(f"parse rate {r['parse_rate']:.3f}  errors {r['errors']}")
    dist = ", ".join(f"{escape(k or '(empty)')} {v:.0%}" for k, v in r["prediction_distribution"].items())
    _line(f"predictions: {dist}")
    if r.get("tool_calls") or (r.get("turns") or 0) > 1:
        failures = ", ".join(f"{k} {v}" for k, v in (r.get("failed_by_kind") or {}).items()) or "none"
        _line(f"turns/rollout {r['turns']:.2f}  tool calls/rollout {r['tool_calls']:.2f}  failures: "
              f"{escape(failures)}")
    _line(f"policy tokens/task {r['policy_tokens']:.1f}  wall {r['wall_s']:.1f} s  run {r['run_id']}")
    _line(f"[dim]a rollout's trajectory: evolve show {r['run_id']} --rollout TASK_ID[/dim]")


def eval_command(
    harness: Annotated[str, typer.Argument(
        help="Harness folder, shipped harness name, or a `json` export (harness.json or its folder).")],
    benchmark: Annotated[str | None, typer.Option("--benchmark", "-b",
                                                  help="Shipped benchmark name, folder or task file.")] = None,
    split: Annotated[str, typer.Option("--split", help="demo, evolve, validation or test.")] = "test",
    limit: Annotated[int | None, typer.Option("--limit", help="Evaluate only the first N tasks of the split.")]
    = None,
    model: Annotated[str, typer.Option("--model", "-m", help="Policy model string (see `evolve models`).")]
    = "embedded",
    trials: Annotated[int, typer.Option("--trials", help="Rollouts per task.")] = 1,
    seed: Annotated[int, typer.Option("--seed", help="Sampling seed.")] = 0,
    run: Annotated[str | None, typer.Option("--run", help="Split the benchmark (default: the run's) exactly as "
                                                          "this evolution run did.")] = None,
    db: DbOption = None,
    as_json: JsonOption = False,
) -> None:
    """Evaluate HARNESS on a benchmark split; rollouts are stored in the lineage store (a run of kind eval)."""
    from evolve.bench.evaluation import run_eval

    with Progress(TextColumn("eval"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err_console, transient=True,
                  disable=as_json or not err_console.is_terminal) as bar:
        job = bar.add_task("eval", total=None)
        report = run_eval(harness, benchmark, split=split, limit=limit, model=model, trials=trials, seed=seed,
                          db=db, run=run, progress=lambda done, total: bar.update(job, completed=done, total=total))
    if as_json:
        typer.echo(json.dumps(report))
    else:
        render_report(report)


def register(app: typer.Typer) -> None:
    """Add `evolve eval` to the app."""
    app.command("eval")(eval_command)
