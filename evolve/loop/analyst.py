"""The analyst: digest the incumbent's rollouts on an evolve-split batch into bounded evidence.

Evidence has the score, parse and error rates, for label tasks the per-gold-label accuracy with
what each label was mistaken for, the prediction distribution, and a few sampled failures and
successes (input, expected, got, error). For multi-turn rollouts a sample also carries the
trajectory's decisive steps (failed tool calls, a hit limit, the last actions) and the verifier's
own output (a failing assertion, a file diff). Failures are also grouped into clusters by what went
wrong (clusters.py), the largest clusters get a contrast pair (a failure beside a comparable
success), and the optimization memory's open problems are listed. Everything fits `max_chars`: the
parts give way in a fixed order (see `Evidence.render`). It is rendered into the proposer's context
only: the critic rejects any edit that copies evolve-split inputs or answers into a harness.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evolve.bench.trajectory import counts, decisive_steps, verifier_detail
from evolve.loop.clusters import Cluster, clusters, contrast_ids
from evolve.loop.prompts import render_prompt

SUCCESS = 0.5
"""A rollout with reward >= SUCCESS counts as a success, below it as a failure."""
_CLIP = {"input": 400, "expected": 120, "got": 160, "error": 160, "verifier": 300}


class Sample(BaseModel):
    """One sampled rollout shown to the proposer."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    input: str
    expected: str
    got: str
    reward: float
    error: str | None = None
    steps: list[str] = Field(default_factory=list)
    """Decisive steps of a multi-turn trajectory (empty for single-turn rollouts)."""
    verifier: str = ""
    """The verifier's own output of a multi-turn rollout (failing assertion, diff)."""


class ContrastPair(BaseModel):
    """A failure beside a success on a task with the same gold answer or a similar input."""

    model_config = ConfigDict(extra="forbid")

    failure: Sample
    success: Sample


class LabelStat(BaseModel):
    """Accuracy on the tasks whose gold answer is one label."""

    model_config = ConfigDict(extra="forbid")

    label: str
    n: int
    correct: int
    predicted_as: dict[str, int] = Field(default_factory=dict)
    """What the policy answered on these tasks (confusion row)."""

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else 0.0


class Evidence(BaseModel):
    """A bounded evidence package about the incumbent on an evolve-split batch."""

    model_config = ConfigDict(extra="forbid")

    n: int = 0
    """Rollouts digested."""
    score: float = 0.0
    """Mean reward."""
    parse_rate: float = 1.0
    """Share of rollouts whose answer could be extracted."""
    error_rate: float = 0.0
    """Share of rollouts that failed with an error."""
    labels: list[LabelStat] = Field(default_factory=list)
    """Per-gold-label accuracy (label tasks only)."""
    predictions: dict[str, int] = Field(default_factory=dict)
    """Most frequent predictions and their counts (the rest under `(other)`)."""
    failures: list[Sample] = Field(default_factory=list)
    successes: list[Sample] = Field(default_factory=list)
    clusters: list[Cluster] = Field(default_factory=list)
    """Failures grouped by what went wrong, largest first (see clusters.py)."""
    contrasts: list[ContrastPair] = Field(default_factory=list)
    """Failures of the largest clusters beside a comparable success."""
    open_problems: list[str] = Field(default_factory=list)
    """The optimization memory's open problems (one line each)."""
    max_chars: int = 3000
    """Upper bound of `render()`."""

    def render(self) -> str:
        """The evidence as text for the proposer, at most `max_chars` characters. Parts give way in
        this order until it fits: successes, contrast pairs, failures but one, open problems, the last
        failure, clusters; then the text is cut."""
        parts = {"successes": list(self.successes), "contrasts": list(self.contrasts),
                 "failures": list(self.failures), "open_problems": list(self.open_problems),
                 "clusters": list(self.clusters)}
        order = [("successes", 0), ("contrasts", 0), ("failures", 1), ("open_problems", 0), ("failures", 0),
                 ("clusters", 0)]
        while True:
            text = render_prompt("evidence.md.j2", ev=self, **parts).strip()
            if len(text) <= self.max_chars:
                return text
            name = next((k for k, keep in order if len(parts[k]) > keep), None)
            if name is None:
                return text[: self.max_chars]
            parts[name].pop()


def _clip(text: Any, limit: int) -> str:
    value = "" if text is None else " ".join(str(text).split())
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _detail(result: Any) -> str:
    """The verifier's message of a rollout, unless it only restates the expected answer."""
    text = verifier_detail(getattr(result, "trajectory", None))
    return "" if text == "match" or text.startswith("expected ") else text


def _sample(result: Any, task: Any) -> Sample:
    got = result.prediction if result.prediction is not None else ""
    trajectory = getattr(result, "trajectory", None)
    turns, calls = counts(trajectory)
    agentic = turns > 1 or calls > 0
    failed = float(result.reward) < SUCCESS
    return Sample(task_id=result.task_id, input=_clip(task.input, _CLIP["input"]),
                  expected=_clip(task.target, _CLIP["expected"]), got=_clip(got, _CLIP["got"]) or "(nothing)",
                  reward=float(result.reward), error=_clip(result.error, _CLIP["error"]) or None,
                  steps=decisive_steps(trajectory) if agentic else [],
                  verifier=_clip(_detail(result), _CLIP["verifier"]) if agentic or failed else "")


def _pick(results: list[Any], tasks: Mapping[str, Any], n: int, rng: random.Random) -> list[Sample]:
    """Up to `n` results, one task at most once, spread over gold answers (round-robin)."""
    by_gold: dict[str, list[Any]] = defaultdict(list)
    seen: set[str] = set()
    shuffled = list(results)
    rng.shuffle(shuffled)
    for r in shuffled:
        if r.task_id not in seen:
            seen.add(r.task_id)
            by_gold[str(tasks[r.task_id].target)].append(r)
    groups = [by_gold[k] for k in sorted(by_gold)]
    rng.shuffle(groups)
    picked: list[Sample] = []
    while len(picked) < n and any(groups):
        for group in groups:
            if group and len(picked) < n:
                r = group.pop(0)
                picked.append(_sample(r, tasks[r.task_id]))
    return picked


def _label_stats(results: list[Any], tasks: Mapping[str, Any]) -> list[LabelStat]:
    rows: dict[str, list[Any]] = defaultdict(list)
    for r in results:
        task = tasks[r.task_id]
        if task.labels:
            rows[str(task.target)].append(r)
    stats = []
    for label in sorted(rows):
        items = rows[label]
        confusion = Counter(_clip(r.prediction, 40) or "(nothing)" for r in items if r.reward < SUCCESS)
        stats.append(LabelStat(label=label, n=len(items), correct=sum(r.reward >= SUCCESS for r in items),
                               predicted_as=dict(confusion.most_common(4))))
    return stats


def _distribution(results: list[Any], top: int = 8) -> dict[str, int]:
    counts = Counter(_clip(r.prediction, 40) or "(nothing)" for r in results)
    common = counts.most_common(top)
    dist = dict(common)
    rest = sum(counts.values()) - sum(c for _, c in common)
    if rest:
        dist["(other)"] = rest
    return dist


def digest(results: Sequence[Any], tasks: Mapping[str, Any], *, n_fail: int = 6, n_success: int = 3,
           max_chars: int = 3000, rng: random.Random | None = None,
           open_problems: Sequence[str] = ()) -> Evidence:
    """Digest rollout results (objects with task_id, trial, reward, prediction, parsed, error) of
    tasks (`tasks[task_id]` with input, target, labels) into an Evidence package.

    Deterministic for a given `rng` state, whatever the order of `results`.
    """
    rng = rng or random.Random(0)
    ordered = sorted((r for r in results if r.task_id in tasks), key=lambda r: (r.task_id, r.trial))
    if not ordered:
        return Evidence(max_chars=max_chars)
    n = len(ordered)
    failures = [r for r in ordered if r.reward < SUCCESS]
    successes = [r for r in ordered if r.reward >= SUCCESS]
    found = clusters(failures, tasks, _detail)
    by_task = {}
    for r in failures:
        by_task.setdefault(r.task_id, r)
    pairs = [ContrastPair(failure=_sample(by_task[f], tasks[f]), success=_sample(ok, tasks[s]))
             for f, s in contrast_ids(found, successes, tasks)
             for ok in [next(r for r in successes if r.task_id == s)]]
    return Evidence(
        n=n,
        score=sum(float(r.reward) for r in ordered) / n,
        parse_rate=sum(bool(r.parsed) for r in ordered) / n,
        error_rate=sum(bool(r.error) for r in ordered) / n,
        labels=_label_stats(ordered, tasks),
        predictions=_distribution(ordered),
        failures=_pick(failures, tasks, n_fail, rng),
        successes=_pick(successes, tasks, n_success, rng),
        clusters=found, contrasts=pairs, open_problems=list(open_problems),
        max_chars=max_chars,
    )
