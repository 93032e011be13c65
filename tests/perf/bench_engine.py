"""Engine overhead: a whole run with a zero-latency mock backend; prints `engine_rollouts_per_s`.

Every rollout is rendered, scored, stored in the lineage database (SQLite file) and read back by
the selection steps, so the figure is the engine's own cost per rollout. Target: >= 2000/s.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "loop"))

from engine_mocks import backends

from evolve import api
from evolve.store import LineageStore


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "bench.db")
        policy, helper = backends()
        start = time.perf_counter()
        api.run(db=db, run_id="bench", policy=policy, helper=helper, benchmark="sentiment-products", rounds=6,
                seed=0, budget=5000, cache=False, trials=3)
        elapsed = time.perf_counter() - start
        rollouts = LineageStore(db).count_rollouts("bench")
    print(f"engine_rollouts: {rollouts}")
    print(f"engine_run_s: {elapsed:.2f}")
    print(f"engine_rollouts_per_s: {rollouts / elapsed:.0f}")


if __name__ == "__main__":
    main()
