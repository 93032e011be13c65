"""Statistics of an evaluation: mean with a 95% CI, label baselines, prediction distribution, parse rate."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from evolve.bench.task import Task
from evolve.bench.trajectory import counts
from evolve.bench.verifiers import Verifier

Z95 = 1.959963984540054
UNPARSED = "(unparsed)"


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion."""
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def bootstrap_ci(values: Sequence[float], rng: random.Random, resamples: int = 2000) -> tuple[float, float]:
    """Percentile bootstrap 95% interval of the mean."""
    n = len(values)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(resamples))
    return (means[int(0.025 * resamples)], means[min(resamples - 1, int(0.975 * resamples))])


def mean_ci(values: Sequence[float], rng: random.Random | None = None) -> tuple[float, float, float]:
    """(mean, low, high): Wilson interval for 0/1 values, else a seeded percentile bootstrap."""
    values = [float(v) for v in values]
    if not values:
        return (0.0, 0.0, 0.0)
    mean = sum(values) / len(values)
    if all(v in (0.0, 1.0) for v in values):
        low, high = wilson(sum(values), len(values))
    else:
        low, high = bootstrap_ci(values, rng or random.Random(0))
    return (mean, min(low, mean), max(high, mean))


def task_rewards(results: Sequence[Any]) -> dict[str, list[float]]:
    """Rewards per task id, one per trial (a failed rollout counts 0)."""
    out: dict[str, list[float]] = {}
    for r in results:
        out.setdefault(r.task_id, []).append(0.0 if r.error else float(r.reward))
    return out


def score_ci(results: Sequence[Any]) -> tuple[float, float, float, int]:
    """(score, low, high, tasks): the one score definition of evolve. Trials of a task are averaged
    first; the 95% interval is over the per-task means (Wilson for 0/1 means, else a seeded bootstrap)."""
    per_task = task_rewards(results)
    if not per_task:
        return 0.0, 0.0, 0.0, 0
    mean, low, high = mean_ci([sum(v) / len(v) for v in per_task.values()])
    return mean, low, high, len(per_task)


def balanced_score(results: Sequence[Any], gold: dict[str, str]) -> float | None:
    """The mean over gold labels of the score on that label's tasks (balanced accuracy, the mean recall
    per label, for a 0/1 reward): a harness that answers one label always scores 1/L whatever the
    label priors, so a gain in plain score that this does not share came from leaning toward the
    split's frequent label. None with fewer than two gold labels among the tasks scored."""
    per_task = task_rewards(results)
    by_label: dict[str, list[float]] = {}
    for task, rewards in per_task.items():
        if task in gold:
            by_label.setdefault(gold[task], []).append(sum(rewards) / len(rewards))
    if len(by_label) < 2:
        return None
    return sum(sum(v) / len(v) for v in by_label.values()) / len(by_label)


def majority_baseline(tasks: Sequence[Task]) -> tuple[str | None, float]:
    """The most frequent target and the accuracy of always answering it."""
    if not tasks:
        return (None, 0.0)
    target, count = Counter(t.target for t in tasks).most_common(1)[0]
    return (target, count / len(tasks))


def best_constant_baseline(tasks: Sequence[Task], verifier: Verifier,
                           candidates: Sequence[str] | None = None) -> tuple[str | None, float]:
    """The constant answer (from `candidates`, default the labels and targets) with the highest mean reward."""
    if not tasks:
        return (None, 0.0)
    pool = list(candidates) if candidates is not None else sorted(
        {label for t in tasks for label in (t.labels or ())} | {t.target for t in tasks})
    best: tuple[str | None, float] = (None, 0.0)
    for answer in pool:
        mean = sum(verifier.score(t, answer).reward for t in tasks) / len(tasks)
        if mean > best[1]:
            best = (answer, mean)
    return best


def answer_label(prediction: str | None, labels: Sequence[str] | None) -> str | None:
    """The label a label verifier reads in `prediction` (earliest mention), else the prediction itself.

    "This review is positive, as it ..." counts as `positive`: distributions and the collapse guard
    then count what the verifier scored, not the wording around it.
    """
    if prediction is None or not labels:
        return prediction
    from evolve.bench.verifiers import LabelChoice

    return LabelChoice().extract(tuple(labels), prediction) or prediction


def prediction_distribution(predictions: Sequence[str | None], parsed: Sequence[bool] | None = None,
                            top: int = 10) -> dict[str, float]:
    """Share of each answer (unparsed ones pooled as `(unparsed)`), the `top` most frequent, then `(other)`."""
    if not predictions:
        return {}
    flags = parsed if parsed is not None else [p is not None for p in predictions]
    keys = [(" ".join(p.split())[:40] if p is not None else "") if ok else UNPARSED
            for p, ok in zip(predictions, flags, strict=True)]
    counts = Counter(keys)
    n = len(keys)
    out = {k: c / n for k, c in counts.most_common(top)}
    rest = n - sum(c for _, c in counts.most_common(top))
    if rest:
        out["(other)"] = rest / n
    return out


def parse_rate(parsed: Sequence[bool]) -> float:
    return sum(1 for p in parsed if p) / len(parsed) if parsed else 0.0


def summarize(results: Sequence[Any], tasks: Sequence[Task], verifier: Verifier,
              labels: Sequence[str] | None) -> dict[str, Any]:
    """The figures `evolve eval` prints, from RolloutResults (or records) and the tasks evaluated."""
    mean, low, high, n_tasks = score_ci(results)
    label_task = bool(labels)
    majority = majority_baseline(tasks) if label_task else (None, None)
    frequency = Counter(t.target for t in tasks)
    ordered = sorted(labels or (), key=lambda label: -frequency[label])  # ties go to the majority label
    constant = best_constant_baseline(tasks, verifier, ordered) if label_task else (None, None)
    normalized = _normalized(results, tasks, verifier)
    n = len(results)
    return {
        "score": mean, "ci_low": low, "ci_high": high, "n": n_tasks, "rollouts": n, "tasks": len(tasks),
        "parse_rate": parse_rate([r.parsed for r in results]),
        "errors": sum(1 for r in results if r.error),
        "majority_baseline": majority[1], "majority_label": majority[0],
        "best_constant_baseline": constant[1], "best_constant": constant[0],
        "balanced": balanced_score(results, {t.id: t.target for t in tasks}) if label_task else None,
        "prediction_distribution": prediction_distribution(normalized, [r.parsed for r in results]),
        "policy_tokens": sum(r.tokens_in + r.tokens_out for r in results) / n_tasks if n_tasks else 0.0,
        "tokens_in": sum(r.tokens_in for r in results), "tokens_out": sum(r.tokens_out for r in results),
        **agent_figures(results),
    }


def agent_figures(results: Sequence[Any]) -> dict[str, Any]:
    """Mean turns and tool calls per rollout, and the failures per kind (`TurnLimit`, `Timeout`, ...)."""
    n = len(results)
    pairs = [counts(getattr(r, "trajectory", None)) for r in results]
    kinds = Counter(r.error.split(":", 1)[0].strip()[:60] or "error" for r in results if r.error)
    return {"turns": sum(t for t, _ in pairs) / n if n else 0.0,
            "tool_calls": sum(c for _, c in pairs) / n if n else 0.0,
            "failed_by_kind": dict(sorted(kinds.items()))}


def _normalized(results: Sequence[Any], tasks: Sequence[Task], verifier: Verifier) -> list[str | None]:
    """The verifier's normalized answers (cheap verifiers only; others keep the raw prediction)."""
    if getattr(verifier, "blocking", False) or hasattr(verifier, "ascore"):
        return [r.prediction for r in results]
    by_id = {t.id: t for t in tasks}
    out = []
    for r in results:
        task = by_id.get(r.task_id)
        if task is None or r.prediction is None:
            out.append(r.prediction)
        else:
            out.append(verifier.score(task, r.prediction).normalized or r.prediction)
    return out
