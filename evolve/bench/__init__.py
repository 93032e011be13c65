"""Benchmarks (task suites, formats, splits), verifiers, the agent runtime and evaluation statistics."""

from evolve.bench.benchmark import Benchmark, BenchmarkSpec, list_benchmarks, load_benchmark
from evolve.bench.runtime import RolloutResult, evaluate, extract_answer, run_task, vote
from evolve.bench.stats import (
    best_constant_baseline,
    majority_baseline,
    mean_ci,
    parse_rate,
    prediction_distribution,
    summarize,
)
from evolve.bench.task import Task
from evolve.bench.verifiers import VERIFIERS, Verifier, VerifierResult, make_verifier

__all__ = [
    "VERIFIERS",
    "Benchmark",
    "BenchmarkSpec",
    "RolloutResult",
    "Task",
    "Verifier",
    "VerifierResult",
    "best_constant_baseline",
    "evaluate",
    "extract_answer",
    "list_benchmarks",
    "load_benchmark",
    "majority_baseline",
    "make_verifier",
    "mean_ci",
    "parse_rate",
    "prediction_distribution",
    "run_task",
    "summarize",
    "vote",
]
