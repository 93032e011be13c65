"""The loop's state between rounds, stored as one JSON value so a killed run resumes exactly.

Everything else a round needs (candidates, edits, rollouts, decisions) is in the lineage store;
this snapshot holds what is derived from them plus the optimizer's own memory.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

STATE_KEY = "loop_state"


class HistoryEntry(BaseModel):
    """One evaluated (or screened) edit and its verdict, shown to the proposer."""

    model_config = ConfigDict(extra="forbid")

    round: int
    candidate_id: str
    component: str
    op: str
    target: str | None = None
    hypothesis: str = ""
    verdict: str
    """accepted | rejected | stopped_early | budget | critic_reject | invalid | duplicate | screened_out | pruned"""
    delta: float | None = None
    """ΔS of the candidate on the acceptance split (None when not evaluated)."""


class LoopState(BaseModel):
    """Snapshot written after every completed round."""

    model_config = ConfigDict(extra="forbid")

    next_round: int = 0
    incumbent_id: str
    incumbent_score: float | None = None
    best_ever: float | None = None
    scores: list[float] = Field(default_factory=list)
    """Incumbent acceptance-split score after each round (stall detection)."""
    round_scores: list[dict[str, Any]] = Field(default_factory=list)
    history: list[HistoryEntry] = Field(default_factory=list)
    accepted_chain: list[str] = Field(default_factory=list)
    """Accepted candidate ids from the seed to the incumbent, in order."""
    accepted_counts: dict[str, int] = Field(default_factory=dict)
    tried: list[str] = Field(default_factory=list)
    banned: list[str] = Field(default_factory=list)
    """Novelty keys of the banned directions still in force (shown to the proposer)."""
    bans: list[dict[str, Any]] = Field(default_factory=list)
    """Every banned direction with its round (`evolve.loop.bans.Ban`)."""
    memory: dict[str, Any] = Field(default_factory=dict)
    damper: dict[str, Any] = Field(default_factory=dict)
    rollouts_spent: int = 0
    rubric: dict[str, Any] | None = None
    rubric_version: int = 0
    rubric_agreement: float | None = None
    """Agreement of the current rubric with the oracle at the last re-alignment."""
    surrogate_history: list[dict[str, Any]] = Field(default_factory=list)
    """(candidate text, oracle score) pairs that train the learned surrogate."""
    stopped: str | None = None
    """Why the evolution ended early (budget, stall...), if it did."""
    budget_spent: dict[str, float] = Field(default_factory=dict)
    """The run's budget ledger (`Budget.snapshot()`), restored on resume."""
    rollout_mark: int | None = None
    """Last rollout id stored before the current round started (a purged round's rollouts are above it)."""
    llm_valid: list[bool] = Field(default_factory=list)
    """Per LLM draft so far, whether it was valid (applied, changed the harness)."""
    proposer_disabled: str | None = None
    """When and why the LLM proposer stopped getting slots (None while it has them)."""
    ablated: dict[str, int] = Field(default_factory=dict)
    """Accepted candidate id -> round of its last leave-one-out ablation."""

    def record(self, t: int, candidate_id: str, edits: list[Any], verdict: str, delta: float | None) -> None:
        """Add a candidate's edits to the history with their verdict; evaluated components count as tried."""
        for e in edits:
            self.history.append(HistoryEntry(round=t, candidate_id=candidate_id, component=e.component, op=e.op,
                                             target=None if e.target is None else str(e.target),
                                             hypothesis=e.hypothesis, verdict=verdict, delta=delta))
            if verdict not in ("critic_reject", "invalid", "duplicate", "screened_out", "budget") \
                    and e.component not in self.tried:
                self.tried.append(e.component)
