"""Scripted proposers in whole mock runs: a competent proposer that reads the evidence and a
cheating one that copies evolve-split content (see tests/loop/scripted.py).

The policy knows every answer but says it only when the harness carries a one-word format rule
and a rule for the label it is biased against; the runs have LLM drafts only (no operators), on
sentiment-products with its OOD sibling sentiment-restaurants. Prints `name: value` lines.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "loop"))

from scripted import CheatingProposer, CompetentProposer, run_table, scripted_run

from evolve.bench.benchmark import load_benchmark


def main() -> None:
    ids = load_benchmark("sentiment-products").split_ids()["evolve"]
    with tempfile.TemporaryDirectory() as tmp:
        for name, proposer in (("competent", CompetentProposer()), ("cheating", CheatingProposer(ids))):
            db = str(Path(tmp) / f"{name}.db")
            start = time.perf_counter()
            table = run_table(db, scripted_run(db, proposer))
            for key, value in table.items():
                shown = f"{value:+.3f}" if isinstance(value, float) else value
                print(f"scripted_{name}_{key}: {shown}")
            print(f"scripted_{name}_seconds: {time.perf_counter() - start:.1f}")


if __name__ == "__main__":
    main()
