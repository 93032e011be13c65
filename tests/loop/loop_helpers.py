"""Small builders shared by the loop tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evolve.bench.task import Task
from evolve.harness import Example, Harness, Section, Skill

LABELS = ("even", "odd")


def parity_tasks(prefix: str, numbers: range) -> list[Task]:
    return [Task(id=f"{prefix}-{n:03d}", input=f"Is the number {n} even or odd? Answer with even or odd.",
                 target="even" if n % 2 == 0 else "odd", labels=LABELS) for n in numbers]


def harness(**kw: Any) -> Harness:
    base = dict(
        name="h",
        system=(Section(name="role", text="You are a careful assistant."),
                Section(name="format", text="Give the final answer alone on the last line.")),
        skills=(Skill(name="check", description="Check the answer.", body="Re-read the question."),
                Skill(name="format-answer", description="Answer format.", body="Write one word.")),
        examples=(Example(input="Is 2 even or odd?", output="even"),),
    )
    base.update(kw)
    return Harness(**base)


@dataclass
class Result:
    """Stands in for a rollout result (task_id, trial, reward, prediction, parsed, error)."""

    task_id: str
    reward: float
    prediction: str | None
    parsed: bool = True
    error: str | None = None
    trial: int = 0


@dataclass
class Hist:
    """Stands in for one history entry (one edit of one candidate)."""

    round: int
    component: str
    verdict: str
    delta: float | None
    op: str = "add"
    target: str | None = None
    hypothesis: str = ""
    candidate_id: str = "c"
