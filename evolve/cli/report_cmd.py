"""`evolve report RUN --out report.html`: one self-contained HTML file about a run; `evolve compare DB...`:
finished runs grouped by benchmark and preset, as medians and ranges over seeds."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evolve.cli.common import DbOption, JsonOption, console, err_console, open_store
from evolve.errors import ConfigError
from evolve.report.compare import DEFAULT_REFERENCE, tables, warnings
from evolve.report.compare import compare as compare_runs
from evolve.report.html import write_report


def report(
    run: Annotated[str, typer.Argument(help="Run id, or 'latest'.")] = "latest",
    out: Annotated[Path, typer.Option("--out", help="HTML file (or folder) to write.")] = Path("report.html"),
    db: DbOption = None,
) -> None:
    """Write a self-contained HTML report: lineage tree, scores per round and split, tokens, budget, agreement."""
    store = open_store(db)
    run_id = store.latest_run_id() if run == "latest" else store.get_run(run)["id"]
    path = write_report(store, run_id, out)
    console.print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB)", markup=False)


def compare(
    dbs: Annotated[list[str] | None, typer.Argument(
        help="Lineage databases (SQLite file paths or SQLAlchemy URLs; default: runs/evolve.db).")] = None,
    reference: Annotated[str | None, typer.Option(
        "--reference", help="Preset the others are compared with (default: unregularized, where present).")] = None,
    benchmark: Annotated[str | None, typer.Option("--benchmark", help="Only the runs of this benchmark.")] = None,
    as_json: JsonOption = False,
) -> None:
    """Compare presets over seeds: per benchmark and preset, the median and range of seed → best on every
    held-out split, tokens per task and rollouts, and whether each preset is at or above the reference
    (by median, and seed by seed: on how many seeds ahead, tied, behind)."""
    runs = []
    for db in dbs or [None]:
        store = open_store(db)
        try:
            runs.extend(store.list_runs(kind="run"))
        finally:
            store.close()
    result = compare_runs(runs, reference=reference or DEFAULT_REFERENCE, benchmark=benchmark)
    presets = sorted({g.preset for g in result.groups})
    if reference is not None and reference not in presets:
        raise ConfigError(f"--reference: no finished run of preset {reference!r}; "
                          f"the runs are of: {', '.join(presets)}")
    if as_json:
        console.print_json(result.model_dump_json())
        return
    for table in tables(result):
        console.print(table)
    for line in warnings(result):
        err_console.print(f"warning: {line}", markup=False)


def register(app: typer.Typer) -> None:
    """Add `evolve report` and `evolve compare`."""
    app.command("report")(report)
    app.command("compare")(compare)
