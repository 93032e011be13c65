"""The compact lineage tree of a large run is read with a few queries and shows the path to the best."""

from __future__ import annotations

import random
import sys
from pathlib import Path

from typer.testing import CliRunner

from evolve.cli.app import app
from evolve.report.tree import MAX_PATH_SHOWN, load_lineage
from evolve.store import LineageStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "perf"))
from bench_lineage import RUN, fill


def test_large_run_tree_shows_the_best_path_with_counts(tmp_path):
    db = tmp_path / "large.db"
    store = LineageStore(db)
    fill(store, 24_000, random.Random(1), per_round=20)
    lineage = load_lineage(store, RUN)
    path = lineage.best_path()
    assert len(path) > MAX_PATH_SHOWN
    result = CliRunner().invoke(app, ["lineage", RUN, "--db", str(db)], terminal_width=200)
    assert result.exit_code == 0, result.output
    out = result.output
    assert f"{len(path)} steps" in out and "24000 candidates" in out
    assert f"… {len(path) - MAX_PATH_SHOWN} more steps of the path" in out
    assert f"{path[0]} seed" in out and f"{path[-1]} accepted ★ best" in out
    hidden = path[10]
    assert f"{hidden} accepted" not in out
    kids = lineage.children()
    last_rejected = sum(1 for ch in kids.get(path[-1], []) if ch["status"] == "rejected_acceptance")
    if last_rejected:
        assert f"{last_rejected} rejected by acceptance" in out.split(f"{path[-1]} accepted")[1]
