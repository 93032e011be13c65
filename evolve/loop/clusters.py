"""Failure clusters and success/failure contrast pairs of the analyst's evidence.

A cluster groups the failures of one batch by what went wrong: for label tasks the gold label and
the answer given instead (`gold negative → answered positive`), otherwise the kind of failure and
the verifier's (or the error's) message with quoted text and numbers masked, so failures of the
same mechanism fall together whatever the task. A contrast pair puts a failure of one of the
largest clusters beside a success on a task with the same gold answer (label tasks) or, failing
that, the most similar input, so a proposer can see what differed.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_WORD = re.compile(r"\w+")
MAX_CLUSTERS = 6
MAX_PAIRS = 2


class Cluster(BaseModel):
    """Failures that went wrong the same way."""

    model_config = ConfigDict(extra="forbid")

    key: str
    n: int
    task_ids: list[str]
    """Members (the evidence shows counts only; ids pick contrast pairs)."""


def _mask(text: str, limit: int = 90) -> str:
    value = " ".join(_NUMBER.sub("#", _QUOTED.sub("'…'", text or "")).split())
    return value if len(value) <= limit else value[: limit - 1] + "…"


def cluster_key(result: Any, task: Any, detail: str) -> str:
    """What went wrong with one failed rollout (see module docstring)."""
    if result.error:
        return f"error: {_mask(str(result.error))}"
    if task.labels:
        got = str(result.prediction or "").strip()
        answered = next((lab for lab in task.labels if lab.casefold() == got.casefold()), None)
        return f"gold {task.target} → answered {answered or '(no valid label)'}"
    if not result.parsed:
        return f"no answer extracted: {_mask(detail)}" if detail else "no answer extracted"
    return f"wrong answer: {_mask(detail)}" if detail else "wrong answer"


def clusters(failures: list[Any], tasks: Mapping[str, Any], detail: Callable[[Any], str]) -> list[Cluster]:
    """The largest failure clusters (at most MAX_CLUSTERS), largest first, ties by key."""
    groups: dict[str, list[str]] = defaultdict(list)
    for r in failures:
        key = cluster_key(r, tasks[r.task_id], detail(r))
        if r.task_id not in groups[key]:
            groups[key].append(r.task_id)
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:MAX_CLUSTERS]
    return [Cluster(key=k, n=len(ids), task_ids=ids) for k, ids in ranked]


def _overlap(a: str, b: str) -> float:
    wa, wb = set(_WORD.findall(a.casefold())), set(_WORD.findall(b.casefold()))
    return len(wa & wb) / max(1, len(wa | wb))


def contrast_ids(found: list[Cluster], successes: list[Any], tasks: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(failed task id, succeeded task id) pairs: one per largest cluster, at most MAX_PAIRS."""
    pairs: list[tuple[str, str]] = []
    used: set[str] = set()
    ok_ids = sorted({r.task_id for r in successes})
    for cluster in found:
        if len(pairs) >= MAX_PAIRS or not ok_ids:
            break
        fail = tasks[cluster.task_ids[0]]
        same = [i for i in ok_ids if i not in used and str(tasks[i].target) == str(fail.target)]
        pool = same or [i for i in ok_ids if i not in used]
        if not pool:
            break
        best = max(pool, key=lambda i: (_overlap(str(tasks[i].input), str(fail.input)), i))
        used.add(best)
        pairs.append((fail.id, best))
    return pairs
