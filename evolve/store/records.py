"""Plain records passed to and from the lineage store (no SQL here)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RolloutRecord:
    """One scored attempt of one harness on one task."""

    run_id: str
    harness_hash: str
    benchmark: str
    split: str
    task_id: str
    reward: float
    trial: int = 0
    candidate_id: str | None = None
    prediction: str | None = None
    parsed: bool = True
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    error: str | None = None
    trajectory: Any = None

    @property
    def key(self) -> tuple[str, str, str, str, str, int]:
        return (self.run_id, self.harness_hash, self.benchmark, self.split, self.task_id, self.trial)


@dataclass(frozen=True)
class CandidateRecord:
    """A node of the lineage tree as read back from the store."""

    id: str
    run_id: str
    parent_id: str | None
    round: int
    slot: int
    harness_hash: str
    status: str
    origin: str
    reason: str
    val_score: float | None = None
    val_ci_low: float | None = None
    val_ci_high: float | None = None
    delta: float | None = None
    policy_tokens: float | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CallRecord:
    """Aggregated model usage for one role and model."""

    role: str
    model: str
    calls: int = 1
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    cached: int = 0
    errors: int = 0


CANDIDATE_STATUSES = (
    "seed",
    "pending",
    "evaluated",
    "accepted",
    "rejected_critic",
    "rejected_acceptance",
    "rejected_invalid",
    "rejected_budget",
    "pruned",
    "ablation",
)
