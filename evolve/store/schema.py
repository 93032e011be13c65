"""Typed SQLAlchemy 2.0 models of the lineage store (the schema after all migrations).

The tables are created and changed only by `evolve.store.migrations`; a test checks that the
migrated database matches these models column for column.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column


class Base(DeclarativeBase):
    pass


class Run(Base):
    __tablename__ = "runs"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16), default="run")
    status: Mapped[str] = mapped_column(String(16))
    seed: Mapped[int] = mapped_column(Integer, default=0)
    benchmark: Mapped[str] = mapped_column(String(256), default="")
    model: Mapped[str] = mapped_column(String(256), default="")
    preset: Mapped[str] = mapped_column(String(64), default="")
    config: Mapped[dict[str, Any]] = mapped_column(JSON)
    summary: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    heartbeat_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class HarnessRow(Base):
    __tablename__ = "harnesses"
    hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    content: Mapped[dict[str, Any]] = mapped_column(JSON)
    name: Mapped[str] = mapped_column(String(256), default="")


class Candidate(Base):
    __tablename__ = "candidates"
    id: Mapped[str] = mapped_column(String(128), primary_key=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), index=True)
    parent_id: Mapped[str | None] = mapped_column(String(128), nullable=True, index=True)
    round: Mapped[int] = mapped_column(Integer)
    slot: Mapped[int] = mapped_column(Integer, default=0)
    harness_hash: Mapped[str] = mapped_column(ForeignKey("harnesses.hash"))
    status: Mapped[str] = mapped_column(String(32))
    origin: Mapped[str] = mapped_column(String(64), default="")
    reason: Mapped[str] = mapped_column(Text, default="")
    val_score: Mapped[float | None] = mapped_column(Float, nullable=True)
    val_ci_low: Mapped[float | None] = mapped_column(Float, nullable=True)
    val_ci_high: Mapped[float | None] = mapped_column(Float, nullable=True)
    delta: Mapped[float | None] = mapped_column(Float, nullable=True)
    policy_tokens: Mapped[float | None] = mapped_column(Float, nullable=True)
    meta: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class EditRow(Base):
    __tablename__ = "edits"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    candidate_id: Mapped[str] = mapped_column(ForeignKey("candidates.id"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    op: Mapped[str] = mapped_column(String(16))
    component: Mapped[str] = mapped_column(String(16))
    target: Mapped[str | None] = mapped_column(String(256), nullable=True)
    value: Mapped[Any] = mapped_column(JSON, nullable=True)
    hypothesis: Mapped[str] = mapped_column(Text, default="")
    origin: Mapped[str] = mapped_column(String(64), default="llm")


class Critique(Base):
    __tablename__ = "critiques"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    candidate_id: Mapped[str] = mapped_column(ForeignKey("candidates.id"), index=True)
    kind: Mapped[str] = mapped_column(String(32))
    verdict: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(Text, default="")
    details: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Decision(Base):
    __tablename__ = "decisions"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), index=True)
    candidate_id: Mapped[str] = mapped_column(ForeignKey("candidates.id"), index=True)
    round: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(32), default="acceptance")
    accepted: Mapped[bool] = mapped_column(Boolean)
    reason: Mapped[str] = mapped_column(Text)
    stats: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Rollout(Base):
    __tablename__ = "rollouts"
    __table_args__ = (
        UniqueConstraint("run_id", "harness_hash", "benchmark", "split", "task_id", "trial", name="uq_rollout"),
        Index("ix_rollouts_run_harness", "run_id", "harness_hash"),
    )
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"))
    candidate_id: Mapped[str | None] = mapped_column(String(128), nullable=True)
    harness_hash: Mapped[str] = mapped_column(String(64))
    benchmark: Mapped[str] = mapped_column(String(256))
    split: Mapped[str] = mapped_column(String(32))
    task_id: Mapped[str] = mapped_column(String(256))
    trial: Mapped[int] = mapped_column(Integer, default=0)
    reward: Mapped[float] = mapped_column(Float)
    prediction: Mapped[str | None] = mapped_column(Text, nullable=True)
    parsed: Mapped[bool] = mapped_column(Boolean, default=True)
    tokens_in: Mapped[int] = mapped_column(Integer, default=0)
    tokens_out: Mapped[int] = mapped_column(Integer, default=0)
    latency_s: Mapped[float] = mapped_column(Float, default=0.0)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    trajectory: Mapped[Any] = mapped_column(JSON, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class RubricRow(Base):
    __tablename__ = "rubrics"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), index=True)
    version: Mapped[int] = mapped_column(Integer)
    round: Mapped[int] = mapped_column(Integer)
    content: Mapped[dict[str, Any]] = mapped_column(JSON)
    agreement: Mapped[float | None] = mapped_column(Float, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class SurrogateScore(Base):
    __tablename__ = "surrogate_scores"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    candidate_id: Mapped[str] = mapped_column(ForeignKey("candidates.id"), index=True)
    kind: Mapped[str] = mapped_column(String(32))
    rubric_version: Mapped[int | None] = mapped_column(Integer, nullable=True)
    score: Mapped[float] = mapped_column(Float)
    details: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ModelCall(Base):
    __tablename__ = "model_calls"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(64), index=True)
    role: Mapped[str] = mapped_column(String(16))
    model: Mapped[str] = mapped_column(String(256))
    calls: Mapped[int] = mapped_column(Integer, default=1)
    tokens_in: Mapped[int] = mapped_column(Integer, default=0)
    tokens_out: Mapped[int] = mapped_column(Integer, default=0)
    latency_s: Mapped[float] = mapped_column(Float, default=0.0)
    cached: Mapped[int] = mapped_column(Integer, default=0)
    errors: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class RunState(Base):
    __tablename__ = "run_state"
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id"), primary_key=True)
    key: Mapped[str] = mapped_column(String(256), primary_key=True)
    value: Mapped[Any] = mapped_column(JSON, nullable=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
