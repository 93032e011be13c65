"""Cost of sandboxed tool calls and of agent rollouts on a workspace suite.

1. One sandboxed call of a built-in tool (`calculator`, and `run_tests` on a repo-fix workspace):
   median wall milliseconds over 20 calls (a fresh isolated process each).
2. Agent rollouts of repo-fix with the scripted mock policy of the tests (zero model latency):
   rollouts per second and tool calls per rollout, i.e. what the sandbox costs a whole rollout.

Prints `name: value` lines.
"""

from __future__ import annotations

import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from evolve.backends.mock import MockBackend
from evolve.bench.benchmark import load_benchmark
from evolve.bench.evaluation import resolve_harness
from evolve.bench.runtime import evaluate
from evolve.bench.tools import builtin_tool, call_tool
from evolve.harness import Edit, apply_edits

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "loop"))
from agent_mocks import repo_fix_policy


def _median_ms(tool: str, arguments: dict, workspace: Path | None, n: int = 20) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        call_tool([builtin_tool(tool)], tool.replace("_", "-"), arguments, workspace=workspace)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def calls() -> None:
    bench = load_benchmark("repo-fix")
    task = bench.split("test")[0]
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        shutil.copytree(task.meta["workspace"], workspace)
        print(f"tool_call_ms_calculator: {_median_ms('calculator', {'expression': '6 * 7'}, None):.1f}")
        print(f"tool_call_ms_run_tests: {_median_ms('run_tests', {}, workspace):.1f}")


def rollouts() -> None:
    bench = load_benchmark("repo-fix")
    tasks = [t for split in bench.splits.values() for t in split]
    solutions = {t.input: t.meta["solution"] for t in tasks}
    harness = apply_edits(resolve_harness("agent"), [Edit(op="set", component="control",
                                                           target="flow.verify_before_answer", value=True)])
    start = time.perf_counter()
    results = asyncio.run(evaluate(harness, tasks, MockBackend(repo_fix_policy(solutions)), bench.verifier))
    wall = time.perf_counter() - start
    tool_calls = sum(sum(1 for s in r.trajectory if s["role"] == "tool") for r in results)
    print(f"agent_rollouts_per_s_mock: {len(results) / wall:.2f}")
    print(f"agent_tool_calls_per_rollout: {tool_calls / len(results):.1f}")
    print(f"agent_score_mock_verify: {sum(r.reward for r in results) / len(results):.3f}")


if __name__ == "__main__":
    calls()
    rollouts()
