"""Speed of the loop's own parts (no model calls): they must stay far below model time.

Prints `name: value` lines: analyst digests, leakage reviews, operator drafts and near-duplicate
checks per second on the default shipped benchmark.
"""

from __future__ import annotations

import asyncio
import random
import time
from types import SimpleNamespace

from evolve.bench.benchmark import load_benchmark
from evolve.harness import Edit, apply_edits, load_harness
from evolve.loop.analyst import digest
from evolve.loop.critic import LeakageCritic
from evolve.loop.novelty import near_duplicate
from evolve.loop.operators import OperatorProposer
from evolve.loop.proposer import ProposerContext
from evolve.paths import resolve_named


def rate(fn, seconds: float = 1.0) -> float:
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        fn()
        count += 1
    return count / (time.perf_counter() - start)


def main() -> None:
    bench = load_benchmark("sentiment-products")
    seed = load_harness(resolve_named("harnesses", "structured", marker="harness.yaml"))
    evolve = bench.split("evolve")
    rng = random.Random(0)
    tasks = {t.id: t for t in evolve[:24]}
    results = [SimpleNamespace(task_id=t, trial=0, reward=float(rng.random() < 0.5), prediction="positive",
                               parsed=True, error=None) for t in tasks]
    print(f"analyst_digests_per_s: {rate(lambda: digest(results, tasks, rng=random.Random(1)).render()):.0f}")
    critic = LeakageCritic(evolve, bench.denylist, bench.labels or (), demo_tasks=bench.split("demo"))
    edits = [Edit(op="add", component="system", target="check",
                  value="Read the whole review, weigh praise against complaints, then answer with one label.")]
    candidate = apply_edits(seed, edits)
    print(f"leakage_reviews_per_s: {rate(lambda: asyncio.run(critic.review(seed, candidate, edits))):.0f}")
    ops = OperatorProposer(bench.split("demo"), bench.labels or ())
    ctx = ProposerContext(incumbent=seed, budget=3)
    print(f"operator_rounds_per_s: {rate(lambda: asyncio.run(ops.propose(ctx, 4, random.Random(0)))):.0f}")
    previous = [Edit(op="add", component="system", target=f"s{i}", value=f"Instruction number {i}: " + "word " * 40)
                for i in range(200)]
    print(f"near_duplicate_checks_per_s_200_edits: {rate(lambda: near_duplicate(edits[0], previous, 0.9)):.0f}")


if __name__ == "__main__":
    main()
