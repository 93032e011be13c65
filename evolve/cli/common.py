"""Options and helpers shared by the command modules."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evolve.errors import StoreError
from evolve.paths import default_db_url
from evolve.report.text import console, err_console
from evolve.store import LineageStore, normalize_url

__all__ = ["DbOption", "JsonOption", "console", "err_console", "open_store"]

DbOption = Annotated[
    str | None,
    typer.Option("--db", help="Lineage database: a SQLAlchemy URL or a SQLite file path (default: runs/evolve.db)."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text.")]


def open_store(db: str | None) -> LineageStore:
    """Open an existing lineage database for reading commands (a missing SQLite file is an error, not
    a new empty database)."""
    url = normalize_url(db or default_db_url(), create_dirs=False)
    if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
        path = Path(url.removeprefix("sqlite:///"))
        if not path.is_file():
            raise StoreError(f"no lineage database at {path}; start a run with `evolve run` or pass --db")
    return LineageStore(url)
