"""`evolve run` and `evolve resume`: start or continue an evolution run with live progress."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.live import Live
from rich.table import Table

from evolve.cli.common import DbOption, JsonOption, console, err_console
from evolve.run_config import PRESETS, make_config

ApiBaseOption = Annotated[str | None, typer.Option(help="API base URL of this role's model (default: the "
                                                       "inherited role's when the model is inherited).")]


class _Progress:
    """Renders engine events as one live status table (stderr, so --json output stays clean).

    The table appears with the first event, so an error found while the run is being set up
    (a missing benchmark, a malformed task file) prints alone, without an empty status table.
    """

    def __init__(self) -> None:
        self.live: Live | None = None
        self.state: dict[str, Any] = {"round": "-", "score": None, "spent": 0, "budget": 0, "tokens": 0,
                                      "candidates": 0, "phase": "starting"}

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event["event"]
        if kind == "round_start":
            self.state.update(round=f"{event['round'] + 1}/{event['rounds']}", phase="proposing")
        elif kind == "candidate":
            self.state["candidates"] += 1
            self.state["phase"] = "screening and evaluating"
        elif kind == "round_end":
            self.state.update(score=event["score"], spent=event["spent"], budget=event["budget"],
                              tokens=event["tokens"], phase=event.get("stopped") or "round done")
        elif kind == "report":
            self.state["phase"] = f"final report: {event['suite']} ({event['tasks']} tasks)"
        elif kind == "warning":
            err_console.print(f"[yellow]warning:[/yellow] {event['message']}", markup=True)
        if self.live is None:
            self.live = Live(self.render(), console=err_console, refresh_per_second=4, transient=False)
            self.live.start()
        else:
            self.live.update(self.render())

    def stop(self) -> None:
        """End the live table (if it was shown); its last frame stays on screen."""
        if self.live is None:
            return
        self.live.stop()
        if not err_console.is_terminal:
            err_console.line()  # off a terminal the last frame ends without one: errors and the summary start a line

    def render(self) -> Table:
        s = self.state
        table = Table(show_header=False, box=None)
        table.add_row("round", str(s["round"]))
        table.add_row("best validation score", "-" if s["score"] is None else f"{s['score']:.3f}")
        table.add_row("oracle rollouts", f"{s['spent']} / {s['budget']}")
        table.add_row("model tokens", str(s["tokens"]))
        table.add_row("candidates", str(s["candidates"]))
        table.add_row("now", s["phase"])
        return table


def _print_summary(summary: dict[str, Any]) -> None:
    table = Table(title=f"run {summary['run_id']}: seed vs best")
    for col in ("suite", "seed", "best", "Δ", "majority", "seed tok/task", "best tok/task"):
        table.add_column(col)
    for suite, seed in summary["seed"].items():
        best = summary["best"].get(suite, {})
        base = summary.get("baselines", {}).get(suite, {}).get("majority")

        def fmt(x: dict[str, Any]) -> str:
            if x.get("score") is None:
                return "-"
            return f"{x['score']:.3f} [{x['ci_low']:.2f},{x['ci_high']:.2f}] n={x['n']}"

        delta = (best.get("score") or 0) - (seed.get("score") or 0)
        table.add_row(suite, fmt(seed), fmt(best), f"{delta:+.3f}", "-" if base is None else f"{base:.3f}",
                      f"{seed.get('policy_tokens') or 0:.0f}", f"{best.get('policy_tokens') or 0:.0f}")
    console.print(table)
    _print_labels(summary)
    console.print(f"rollouts spent {summary['rollouts_spent']} of {summary['budget']} "
                  f"(+{summary['rollouts_total'] - summary['rollouts_spent']} for reporting), "
                  f"failed rollouts {summary['failed_rollouts']}, candidates {summary['candidates']}")
    if (decided := summary.get("decision_tasks")) and decided["n"] < decided["of"]:
        console.print(f"decisions on a sample of {decided['n']} of the {decided['of']} validation tasks "
                      f"(acceptance.validation_tasks; the table scores the whole split)")
    if summary.get("stopped"):
        console.print(f"stopped early: {summary['stopped']}")
    for flag in summary.get("flags") or []:
        console.print(f"warning: {flag}", style="bold yellow", markup=False)
    _print_rounds(summary)
    if summary["accepted_edits"]:
        console.rule("accepted edits")
        for e in summary["accepted_edits"]:
            console.print(f"{e['candidate_id']}: {e['op']} {e['component']} {e['target'] or ''} "
                          f"[{e['origin']}] {e['hypothesis']}", markup=False)
    else:
        console.print("no edit was accepted: the seed harness remains the best")
    console.print(f"inspect: evolve lineage {summary['run_id']} · export: evolve export best --run "
                  f"{summary['run_id']} --format skills --out export/")


def _top_answer(shares: dict[str, float] | None) -> str:
    if not shares:
        return "-"
    answer, share = next(iter(shares.items()))
    return f"{answer or '(empty)'} {share:.0%}"


def _print_labels(summary: dict[str, Any]) -> None:
    """Label suites: the balanced score (mean per gold label) and the most frequent answer, seed and best."""
    preds = summary.get("predictions") or {}
    if not preds:
        return
    table = Table(title="label suites: balanced score (mean per gold label) and most frequent answer")
    for col in ("suite", "seed balanced", "best balanced", "seed answers", "best answers"):
        table.add_column(col)
    for suite, by_which in preds.items():
        bal = [(summary.get(w) or {}).get(suite, {}).get("balanced") for w in ("seed", "best")]
        table.add_row(suite, *("-" if b is None else f"{b:.3f}" for b in bal),
                      _top_answer(by_which.get("seed")), _top_answer(by_which.get("best")))
    console.print(table)


def _print_rounds(summary: dict[str, Any]) -> None:
    """Per round: drafts per source (produced/valid/evaluated/admissible/accepted) and rejections by kind."""
    rounds = summary.get("rounds") or []
    if not rounds:
        return
    table = Table(title="drafts per round: produced / valid / evaluated / admissible / accepted")
    for col in ("round", "val score", "drafts by source", "rejected because"):
        table.add_column(col)
    for r in rounds:
        cells = (r.get("drafts") or {}).items()
        drafts = "; ".join(f"{src} " + "/".join(str(d.get(k, 0)) for k in ("produced", "valid", "evaluated",
                                                                            "admissible", "accepted"))
                           for src, d in cells)
        why = ", ".join(f"{k} {v}" for k, v in (r.get("rejections") or {}).items())
        score = r.get("val_score")
        table.add_row(str(r["round"]), "-" if score is None else f"{score:.3f}", drafts or "-", why or "-")
    console.print(table)
    if summary.get("proposer_disabled"):
        console.print(f"LLM proposer: {summary['proposer_disabled']}", markup=False)


def _json_summary(summary: dict[str, Any]) -> str:
    keys = ("run_id", "seed", "best", "baselines", "flags", "predictions", "seed_id", "best_id", "rollouts_spent",
            "budget", "budget_spent", "failed_rollouts", "failed_by_kind", "candidates", "accepted_edits", "stopped",
            "proposer_disabled", "rounds", "decision_tasks")
    return json.dumps({k: summary.get(k) for k in keys}, indent=2, default=str)


def _drive(fn: Any, as_json: bool, **kwargs: Any) -> None:
    if as_json:
        summary = fn(progress=None, **kwargs)
        typer.echo(_json_summary(summary))
        return
    progress = _Progress()
    try:
        summary = fn(progress=progress, **kwargs)
    finally:
        progress.stop()
    _print_summary(summary)


def run(
    config: Annotated[Path | None, typer.Option("--config", "-c", help="YAML run file; options override it.")] = None,
    benchmark: Annotated[str | None, typer.Option(help="Benchmark: shipped name, folder or task file.")] = None,
    ood: Annotated[list[str] | None, typer.Option("--ood", help="Out-of-distribution suite (repeatable).")] = None,
    harness: Annotated[str | None, typer.Option(help="Seed harness: shipped name, folder or JSON bundle.")] = None,
    model: Annotated[str | None, typer.Option(help="Policy model (embedded, mock, openai/..., hosted_vllm/...).")]
    = None,
    api_base: Annotated[str | None, typer.Option(help="API base URL of the policy model.")] = None,
    proposer_model: Annotated[str | None, typer.Option(
        help="Proposer model (default: the policy's); 'none': operators only, no LLM proposer.")] = None,
    proposer_api_base: ApiBaseOption = None,
    critic_model: Annotated[str | None, typer.Option(help="Critic model (LLM review; also reviews operator "
                                                          "drafts when set; default: the proposer's).")] = None,
    critic_api_base: ApiBaseOption = None,
    judge_model: Annotated[str | None, typer.Option(help="Judge model (rubric surrogate and the `judge` "
                                                         "verifier; default: the critic's).")] = None,
    judge_api_base: ApiBaseOption = None,
    preset: Annotated[str | None, typer.Option(help=f"Preset: {' | '.join(PRESETS)}.")] = None,
    rounds: Annotated[int | None, typer.Option(help="Evolution rounds.")] = None,
    budget: Annotated[int | None, typer.Option(help="Oracle rollouts for the evolution.")] = None,
    seed: Annotated[int | None, typer.Option(help="Random seed of the run's choices.")] = None,
    split_seed: Annotated[int | None, typer.Option(
        help="Seed of the benchmark's split shuffle (default: the benchmark's own, as `evolve eval` uses).")] = None,
    evolve_batch: Annotated[int | None, typer.Option(help="Evolve-split tasks the analyst reads per round.")]
    = None,
    trials: Annotated[int | None, typer.Option(help="Trials per task.")] = None,
    report_limit: Annotated[int | None, typer.Option(help="Cap tasks per split in the final report.")] = None,
    run_id: Annotated[str | None, typer.Option(help="Run id (default: generated).")] = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Disable the response cache.")] = False,
    executor: Annotated[str | None, typer.Option(help="Where rollouts run: local | ray (default: local).")] = None,
    ray_address: Annotated[str | None, typer.Option(help="Ray cluster to join (default: start a local one).")]
    = None,
    workers: Annotated[int | None, typer.Option(help="Rollout workers with --executor ray (default: 8).")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print what the budget buys; call no model.")] = False,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Evolve a harness on a benchmark and report seed vs best on evolve / validation / test / OOD."""
    cfg = make_config(config, benchmark=benchmark, ood=ood or None, harness=harness, model=model, api_base=api_base,
                      proposer_model=proposer_model, proposer_api_base=proposer_api_base,
                      critic_model=critic_model, critic_api_base=critic_api_base, judge_model=judge_model,
                      judge_api_base=judge_api_base, preset=preset, rounds=rounds,
                      budget=budget, seed=seed, split_seed=split_seed, evolve_batch=evolve_batch, trials=trials,
                      report_limit=report_limit,
                      cache=False if no_cache else None, executor=executor, ray_address=ray_address,
                      workers=workers)
    from evolve import api  # the engine and its numerical libraries load only for these commands

    if dry_run:
        typer.echo(json.dumps(api.dry_run(cfg), indent=2))
        return
    _drive(api.run, as_json, config=cfg, db=db, run_id=run_id)


def resume(
    run_id: Annotated[str, typer.Argument(help="Run to continue.")],
    api_base: Annotated[str | None, typer.Option(help="API base URL of the policy (stored with credentials "
                                                      "masked: pass it again when it has some).")] = None,
    proposer_api_base: ApiBaseOption = None,
    critic_api_base: ApiBaseOption = None,
    judge_api_base: ApiBaseOption = None,
    executor: Annotated[str | None, typer.Option(help="Where rollouts run now: local | ray (default: as stored).")]
    = None,
    ray_address: Annotated[str | None, typer.Option(help="Ray cluster to continue on (default: as stored).")]
    = None,
    as_json: JsonOption = False,
    db: DbOption = None,
) -> None:
    """Continue a stopped or killed run exactly where it left off (on the same or another Ray cluster)."""
    from evolve import api

    bases = {"proposer": proposer_api_base, "critic": critic_api_base, "judge": judge_api_base}
    _drive(api.resume, as_json, run_id=run_id, db=db, api_base=api_base, api_bases=bases, executor=executor,
           ray_address=ray_address)


def register(app: typer.Typer) -> None:
    app.command("run")(run)
    app.command("resume")(resume)
