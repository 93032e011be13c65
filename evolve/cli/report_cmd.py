"""`evolve report RUN --out report.html`: one self-contained HTML file about a run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evolve.cli.common import DbOption, console, open_store
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


def register(app: typer.Typer) -> None:
    """Add `evolve report`."""
    app.command("report")(report)
