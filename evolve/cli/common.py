"""Options and helpers shared by the command modules."""

from __future__ import annotations

from typing import Annotated

import typer

from evolve.paths import default_db_url
from evolve.report.text import console, err_console
from evolve.store import LineageStore

__all__ = ["DbOption", "JsonOption", "console", "err_console", "open_store"]

DbOption = Annotated[
    str | None,
    typer.Option("--db", help="Lineage database: a SQLAlchemy URL or a SQLite file path [default: runs/evolve.db]."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text.")]


def open_store(db: str | None) -> LineageStore:
    return LineageStore(db or default_db_url())
