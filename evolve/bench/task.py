"""A task: one input for the policy and the target its answer is scored against."""

from __future__ import annotations

import hashlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Task(BaseModel):
    """One benchmark item. Immutable; `id` is stable across loads (from the file or a content hash)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    """Stable identifier: the file's own id, else `t-` + a hash of input and target."""
    input: str
    """What the policy sees as the last user message."""
    target: str
    """Reference answer (a label, a value, or for code tasks the unit tests)."""
    labels: tuple[str, ...] | None = None
    """Valid answers for label tasks (None for open answers)."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """Anything else (source line, template number, entry point of a code task...)."""


def content_id(input_text: str, target: str) -> str:
    """The stable id of a task that has none: `t-` + 12 hex digits of sha256(input, target)."""
    digest = hashlib.sha256(f"{input_text}\x00{target}".encode()).hexdigest()
    return f"t-{digest[:12]}"


def make_tasks(rows: list[dict[str, Any]], labels: tuple[str, ...] | None) -> list[Task]:
    """Build tasks from `{"id"?, "input", "target", "meta"?}` rows; duplicate ids get a `-N` suffix."""
    seen: dict[str, int] = {}
    tasks = []
    for row in rows:
        base = str(row.get("id") or content_id(row["input"], row["target"]))
        count = seen.get(base, 0)
        seen[base] = count + 1
        task_id = base if count == 0 else f"{base}-{count + 1}"
        tasks.append(Task(id=task_id, input=row["input"], target=row["target"], labels=labels,
                          meta=row.get("meta") or {}))
    return tasks
