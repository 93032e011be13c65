"""`evolve lineage RUN --format json` on a store with 100,000 candidates, end to end.

Fills a fresh SQLite store (in a temporary folder) with one run of 100,000 candidates: 1,000
rounds of 100 children of the incumbent, every verdict kind, one edit with a hypothesis and one
acceptance decision (with its statistics) each.
Then times the command in a new process (interpreter start, imports, query, rendering, writing
the JSON), best of 3, and also the rich tree and the HTML report of the same run.

Prints `name: value` lines; `lineage_100k_s` (wall, best of 3) must stay under 2 seconds.
`lineage_100k_cpu_s` is the command's CPU time and `load_average_1m` the machine's load, since
wall time on a shared machine grows with the load.
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evolve.harness import Edit, Harness, Section
from evolve.store import CandidateRecord, LineageStore

N = 100_000
RUN = "bench-100k"
STATUSES = ("rejected_critic", "rejected_acceptance", "rejected_acceptance", "pruned", "evaluated")


def fill(store: LineageStore, n: int, rng: random.Random, per_round: int = 100) -> None:
    """Rounds of `per_round` children of the incumbent; about 70% of rounds accept one of them."""
    store.create_run(RUN, {"budget": 10 * n, "rounds": n // per_round}, benchmark="bench", model="mock",
                     preset="rrsi", status="finished")
    versions = [store.put_harness(Harness(system=(Section(name="role", text=f"variant {i}"),))) for i in range(50)]
    batch = [CandidateRecord("c0", RUN, None, 0, 0, versions[0], "seed", "seed", "", 0.5, 0.45, 0.55, None, 120.0)]
    edits: dict[str, list[Edit]] = {}
    decisions: list[dict] = []
    incumbent = "c0"
    for i in range(1, n):
        rnd, slot = 1 + (i - 1) // per_round, (i - 1) % per_round
        winner = slot == per_round - 1 and rng.random() < 0.7
        status = "accepted" if winner else rng.choice(STATUSES)
        cid, score = f"c{i}", rng.random()
        batch.append(CandidateRecord(cid, RUN, incumbent, rnd, slot, versions[i % 50], status, "llm", f"reason {i}",
                                     score, score - 0.05, score + 0.05, rng.uniform(-0.1, 0.1), rng.uniform(80, 400)))
        edits[cid] = [Edit(op="replace", component="system", target="role", value=f"v{i}",
                           hypothesis=f"hypothesis number {i} about answer formatting")]
        if status != "rejected_critic":
            d_s = rng.uniform(-0.1, 0.1)
            decisions.append({"candidate_id": cid, "round": rnd, "accepted": winner, "reason": f"rule {i}",
                              "stats": {"dS": d_s, "dC": 0.1, "delta": 0.05, "ci_dS": [d_s - 0.05, d_s + 0.05]}})
        if slot == per_round - 1 and winner:
            incumbent = cid
        if len(batch) >= 10_000:
            store.bulk_add_candidates(batch, edits)
            store.bulk_add_decisions(RUN, decisions)
            batch, edits, decisions = [], {}, []
    store.bulk_add_candidates(batch, edits)
    store.bulk_add_decisions(RUN, decisions)
    store.put_state(RUN, "incumbent", incumbent)


def timed(args: list[str], out: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one `evolve` command in a new process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with out.open("w") as sink:
        subprocess.run([sys.executable, "-m", "evolve", *args], stdout=sink, check=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "lineage.db"
        store = LineageStore(db)
        start = time.perf_counter()
        fill(store, N, random.Random(0))
        fill_s = time.perf_counter() - start
        store.close()
        out = Path(tmp) / "lineage.json"
        # bytecode cached as in an installed package (in the temporary folder, whatever PYTHONDONTWRITEBYTECODE says)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        timed(["--help"], Path(tmp) / "help.txt", env)
        runs = [timed(["lineage", RUN, "--format", "json", "--db", str(db)], out, env) for _ in range(3)]
        data = json.loads(out.read_text())
        assert len(data["candidates"]) == N, len(data["candidates"])
        tree_s, _ = timed(["lineage", RUN, "--db", str(db)], Path(tmp) / "tree.txt", env)
        report_s, _ = timed(["report", RUN, "--out", str(Path(tmp) / "r.html"), "--db", str(db)], Path(tmp) / "r", env)
    wall, cpu = min(runs)
    print(f"lineage_100k_fill_s: {fill_s:.2f}")
    print(f"lineage_100k_s: {wall:.2f}")
    print(f"lineage_100k_cpu_s: {cpu:.2f}")
    print(f"lineage_100k_tree_s: {tree_s:.2f}")
    print(f"report_100k_s: {report_s:.2f}")
    print(f"load_average_1m: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
