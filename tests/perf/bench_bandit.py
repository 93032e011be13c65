"""Oracle rollouts needed by the bandit allocators vs uniform full evaluation.

Synthetic, seeded candidate pools: 12 candidates, binary rewards that are fixed per (candidate,
task) (a temperature-0 policy). Outcomes come from a latent task difficulty shared by all
harnesses plus harness-specific noise (sigma = 0.5: latent correlation 0.8; a candidate then
disagrees with the incumbent on about 21% of the tasks): candidate c solves task i when
-z_i + sigma*e_ci is among its top round(p_c*N) values, so its score is exactly p_c. The incumbent
scores p0 ~ U(0.3, 0.6); the best candidate p0 + U(0.02, 0.2); every other candidate is below the
best by a gap ~ U(0.02, 0.2). The incumbent's validation results are known (the loop caches
them), as they are for uniform evaluation.

Correct = the candidate finally picked (survivors of the allocation get full evaluation, the best
full score wins) is the true best. Uniform full evaluation is always correct and costs
candidates x tasks rollouts. A ratio is the allocator's mean rollouts (allocation plus full
evaluation of the survivors) over that; it counts only at >= 95% correctness.

`bandit_rollout_ratio` is the default allocator (rrsi preset) on 400-task pools. The savings
shrink with fewer tasks (close candidates need most of the tasks to be told apart whatever the
split size): the 100- and 200-task figures are printed too. Prints `name: value` lines.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time

import numpy as np

from evolve.selection.bandit import allocate
from evolve.selection.budget import Budget
from evolve.selection.config import AllocatorConfig, BudgetLimits

N_CANDIDATES, N_TASKS, SIGMA = 12, 400, 0.5
SEED0 = 1000
"""First pool seed (pools 0-199 were used while choosing the allocator defaults; these are fresh)."""


def make_pool(seed: int, sigma: float, n_tasks: int, n_cand: int = N_CANDIDATES
              ) -> tuple[np.ndarray, np.ndarray, int]:
    """(incumbent outcomes (N,), candidate outcomes (K, N), index of the true best)."""
    gen = np.random.default_rng(seed)
    difficulty = gen.normal(size=n_tasks)
    p0 = gen.uniform(0.3, 0.6)
    best = p0 + gen.uniform(0.02, 0.2)
    targets = np.concatenate([[best], best - gen.uniform(0.02, 0.2, size=n_cand - 1)])
    targets = np.clip(targets, 0.0, 1.0)

    def outcomes(p: float) -> np.ndarray:
        latent = -difficulty + sigma * gen.normal(size=n_tasks)
        k = round(p * n_tasks)
        out = np.zeros(n_tasks)
        out[np.argsort(-latent)[:k]] = 1.0
        return out

    inc = outcomes(p0)
    cands = np.stack([outcomes(p) for p in targets])
    perm = gen.permutation(n_cand)
    return inc, cands[perm], int(np.argmax(perm == 0))


async def run_once(cfg: AllocatorConfig, seed: int, sigma: float, n_tasks: int) -> tuple[int, bool]:
    inc, cands, best = make_pool(seed, sigma, n_tasks)
    ids = [f"t{i}" for i in range(n_tasks)]
    names = [f"c{k}" for k in range(len(cands))]
    table = {"inc": inc, **{n: cands[k] for k, n in enumerate(names)}}

    async def evaluate(cid: str, tasks: list[str]) -> dict[str, float]:
        return {t: float(table[cid][int(t[1:])]) for t in tasks}

    budget = Budget(BudgetLimits(oracle_rollouts=None, surrogate_calls=None, proposer_tokens=None))
    known = {"inc": {t: float(inc[i]) for i, t in enumerate(ids)}}
    res = await allocate(cfg, names, "inc", ids, evaluate, budget, random.Random(seed), known=known)
    cost = res.rollouts
    full = {}
    for cid in res.survivors:
        seen = res.rewards[cid]
        cost += sum(1 for t in ids if t not in seen)
        full[cid] = float(table[cid].mean())
    pick = max(res.survivors, key=lambda c: full[c]) if res.survivors else None
    return cost, pick == names[best]


def measure(cfg: AllocatorConfig, *, n_tasks: int = N_TASKS, sigma: float = SIGMA, replicates: int = 200
            ) -> tuple[float, float]:
    """(mean rollouts / uniform rollouts, share of pools where the true best was picked)."""
    results = [asyncio.run(run_once(cfg, seed, sigma, n_tasks)) for seed in range(SEED0, SEED0 + replicates)]
    uniform = N_CANDIDATES * n_tasks
    return float(np.mean([c for c, _ in results])) / uniform, float(np.mean([ok for _, ok in results]))


def recorded_agreement() -> str:
    """Mean rubric agreement of the latest recorded run in the default lineage database, if any."""
    from evolve.paths import home

    db = home() / "evolve.db"
    if not db.is_file():
        return "n/a (no recorded run in the default lineage database)"
    from evolve.store.lineage import LineageStore

    store = LineageStore(str(db), migrate_schema=False)
    try:
        for run in reversed(store.list_runs()):
            values = [r["agreement"] for r in store.rubrics(run["id"]) if r["agreement"] is not None]
            if values:
                return f"{sum(values) / len(values):.3f} (run {run['id']}, {len(values)} rubric versions)"
    except Exception as exc:  # an old or foreign database: report, do not fail the benchmark
        return f"n/a (lineage database unreadable: {type(exc).__name__})"
    finally:
        store.close()
    return "n/a (no recorded run with rubric agreement)"


def main() -> int:
    start = time.perf_counter()
    default = AllocatorConfig()
    ratio, correct = measure(default)
    print(f"bandit_rollout_ratio: {ratio:.3f}")
    print(f"bandit_rollout_ratio_correct: {correct:.3f}")
    print(f"bandit_pool: allocator={default.name} candidates={N_CANDIDATES} tasks={N_TASKS} sigma={SIGMA} "
          f"replicates=200")
    for n_tasks in (100, 200):
        r, c = measure(default, n_tasks=n_tasks, replicates=100)
        print(f"bandit_rollout_ratio_{n_tasks}_tasks: {r:.3f}")
        print(f"bandit_rollout_ratio_{n_tasks}_tasks_correct: {c:.3f}")
    for name in ("successive_halving", "thompson"):
        r, c = measure(default.model_copy(update={"name": name}), replicates=100)
        print(f"bandit_{name}_ratio: {r:.3f}")
        print(f"bandit_{name}_correct: {c:.3f}")
    print(f"surrogate_agreement: {recorded_agreement()}")
    print(f"bandit_bench_seconds: {time.perf_counter() - start:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
