"""Fixtures of the report tests: a store holding the fixture lineage and a CLI invoker."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from lineage_fixture import RUN, build_fixture, write_benchmark
from typer.testing import CliRunner

from evolve.harness import Harness
from evolve.store import LineageStore


@dataclass
class Fixture:
    store: LineageStore
    harnesses: dict[str, Harness]
    db_url: str
    bench: Path


@pytest.fixture
def fx(db_url: str, tmp_path: Path):
    bench = write_benchmark(tmp_path / "fixture-bench.jsonl")
    store = LineageStore(db_url)
    harnesses = build_fixture(store, RUN, benchmark=str(bench))
    yield Fixture(store, harnesses, db_url, bench)
    store.close()


@pytest.fixture
def cli(fx: Fixture, monkeypatch: pytest.MonkeyPatch):
    from evolve.cli.app import app
    from evolve.report.text import console

    monkeypatch.setattr(console, "_width", 240)  # restored to None after: later tests read COLUMNS again

    def invoke(*args: str, db: bool = True):
        result = CliRunner().invoke(app, [*args, *(["--db", fx.db_url] if db else [])])
        if result.exception and not isinstance(result.exception, SystemExit):
            raise result.exception
        return result

    return invoke
