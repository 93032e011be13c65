"""Oracle rollouts needed by the bandit allocators vs uniform full evaluation.

Synthetic, seeded candidate pools: 12 candidates, 200 tasks, binary rewards that are fixed per
(candidate, task) (a temperature-0 policy). Outcomes come from a latent task difficulty shared by
all harnesses plus harness-specific noise (latent correlation 1/(1+sigma^2)): candidate c solves
task i when -z_i + sigma*e_ci is among its top round(p_c*N) values, so its score is exactly p_c.
The incumbent scores p0 ~ U(0.3, 0.6); the best candidate p0 + U(0.02, 0.2); every other
candidate is below the best by a gap ~ U(0.02, 0.2). The incumbent's validation results are known
(the loop caches them), as they are for uniform evaluation.

Correct = the candidate finally picked (the survivors of the allocation get full evaluation, the
best full score wins) is the true best. Uniform full evaluation is always correct and costs
candidates x tasks rollouts. The ratio is the allocator's mean rollouts (allocation plus full
evaluation of survivors) over that, at >= 95% correctness.

Prints `name: value` lines; `bandit_rollout_ratio` is the default preset's allocator
(successive halving, default settings) on the sigma=0.5 pool.
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

N_CANDIDATES, N_TASKS, REPLICATES = 12, 200, 200


def make_pool(seed: int, sigma: float, n_cand: int = N_CANDIDATES, n_tasks: int = N_TASKS
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


async def run_once(cfg: AllocatorConfig, seed: int, sigma: float) -> tuple[int, bool]:
    inc, cands, best = make_pool(seed, sigma)
    ids = [f"t{i}" for i in range(N_TASKS)]
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


def measure(cfg: AllocatorConfig, sigma: float, replicates: int = REPLICATES) -> tuple[float, float]:
    """(mean rollouts / uniform rollouts, share correct)."""
    results = [asyncio.run(run_once(cfg, seed, sigma)) for seed in range(replicates)]
    uniform = N_CANDIDATES * N_TASKS
    return float(np.mean([c for c, _ in results])) / uniform, float(np.mean([ok for _, ok in results]))


def main() -> int:
    start = time.perf_counter()
    default = AllocatorConfig()
    for sigma in (0.5, 1.0):
        for name in ("successive_halving", "ucb", "thompson"):
            ratio, correct = measure(default.model_copy(update={"name": name}), sigma)
            print(f"bandit_{name}_sigma{sigma:g}_ratio: {ratio:.3f}")
            print(f"bandit_{name}_sigma{sigma:g}_correct: {correct:.3f}")
    ratio, correct = measure(default, 0.5)
    print(f"bandit_rollout_ratio: {ratio:.3f}")
    print(f"bandit_rollout_ratio_correct: {correct:.3f}")
    print("bandit_pool: candidates=%d tasks=%d replicates=%d" % (N_CANDIDATES, N_TASKS, REPLICATES))
    print("surrogate_agreement: n/a (no recorded run available to this script)")
    print(f"bandit_bench_seconds: {time.perf_counter() - start:.1f}")
    return 0 if correct >= 0.95 and ratio <= 1 / 3 else 1


if __name__ == "__main__":
    sys.exit(main())
