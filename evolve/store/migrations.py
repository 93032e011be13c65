"""Named, append-only schema migrations (simonw/llm style).

Each migration is a function `mNNN_description(conn)`; `migrate(engine)` applies the ones not yet
recorded in `_evolve_migrations`, in list order, each in its own transaction. Never edit a
shipped migration: add a new one. Table shapes inside a migration are frozen copies, so an old
database and a new one end in the same schema.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy import (
    JSON,
    Boolean,
    Column,
    DateTime,
    Engine,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    inspect,
    text,
)
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError, OperationalError, ProgrammingError

MIGRATIONS: list[Callable[[Connection], None]] = []
migration = MIGRATIONS.append

_TRACK = MetaData()
_migrations_table = Table(
    "_evolve_migrations",
    _TRACK,
    Column("name", String(128), primary_key=True),
    Column("applied_at", DateTime(timezone=True)),
)


def _ts(name: str, nullable: bool = False) -> Column:
    return Column(name, DateTime(timezone=True), nullable=nullable)


@migration
def m001_initial(conn: Connection) -> None:
    md = MetaData()
    Table(
        "runs",
        md,
        Column("id", String(64), primary_key=True),
        Column("status", String(16), nullable=False),
        Column("seed", Integer, nullable=False),
        Column("benchmark", String(256), nullable=False),
        Column("model", String(256), nullable=False),
        Column("preset", String(64), nullable=False),
        Column("config", JSON, nullable=False),
        Column("summary", JSON, nullable=True),
        Column("error", Text, nullable=True),
        _ts("created_at"),
        _ts("updated_at"),
    )
    Table(
        "harnesses",
        md,
        Column("hash", String(64), primary_key=True),
        Column("content", JSON, nullable=False),
        Column("name", String(256), nullable=False),
    )
    Table(
        "candidates",
        md,
        Column("id", String(128), primary_key=True),
        Column("run_id", ForeignKey("runs.id"), index=True, nullable=False),
        Column("parent_id", String(128), nullable=True, index=True),
        Column("round", Integer, nullable=False),
        Column("slot", Integer, nullable=False),
        Column("harness_hash", ForeignKey("harnesses.hash"), nullable=False),
        Column("status", String(32), nullable=False),
        Column("origin", String(64), nullable=False),
        Column("reason", Text, nullable=False),
        Column("val_score", Float, nullable=True),
        Column("val_ci_low", Float, nullable=True),
        Column("val_ci_high", Float, nullable=True),
        Column("delta", Float, nullable=True),
        Column("policy_tokens", Float, nullable=True),
        Column("meta", JSON, nullable=False),
        _ts("created_at"),
    )
    Table(
        "edits",
        md,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("candidate_id", ForeignKey("candidates.id"), index=True, nullable=False),
        Column("position", Integer, nullable=False),
        Column("op", String(16), nullable=False),
        Column("component", String(16), nullable=False),
        Column("target", String(256), nullable=True),
        Column("value", JSON, nullable=True),
        Column("hypothesis", Text, nullable=False),
        Column("origin", String(64), nullable=False),
    )
    Table(
        "critiques",
        md,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("candidate_id", ForeignKey("candidates.id"), index=True, nullable=False),
        Column("kind", String(32), nullable=False),
        Column("verdict", String(16), nullable=False),
        Column("reason", Text, nullable=False),
        Column("details", JSON, nullable=False),
        _ts("created_at"),
    )
    Table(
        "decisions",
        md,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("run_id", ForeignKey("runs.id"), index=True, nullable=False),
        Column("candidate_id", ForeignKey("candidates.id"), index=True, nullable=False),
        Column("round", Integer, nullable=False),
        Column("kind", String(32), nullable=False),
        Column("accepted", Boolean, nullable=False),
        Column("reason", Text, nullable=False),
        Column("stats", JSON, nullable=False),
        _ts("created_at"),
    )
    Table(
        "rollouts",
        md,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("run_id", ForeignKey("runs.id"), nullable=False),
        Column("candidate_id", String(128), nullable=True),
        Column("harness_hash", String(64), nullable=False),
        Column("benchmark", String(256), nullable=False),
        Column("split", String(32), nullable=False),
        Column("task_id", String(256), nullable=False),
        Column("trial", Integer, nullable=False),
        Column("reward", Float, nullable=False),
        Column("prediction", Text, nullable=True),
        Column("parsed", Boolean, nullable=False),
        Column("tokens_in", Integer, nullable=False),
        Column("tokens_out", Integer, nullable=False),
        Column("latency_s", Float, nullable=False),
        Column("error", Text, nullable=True),
        Column("trajectory", JSON, nullable=True),
        _ts("created_at"),
        UniqueConstraint("run_id", "harness_hash", "benchmark", "split", "task_id", "trial", name="uq_rollout"),
        Index("ix_rollouts_run_harness", "run_id", "harness_hash"),
    )
    md.create_all(conn)


@migration
def m002_selection_and_accounting(conn: Connection) -> None:
    md = MetaData()
    Table("runs", md, Column("id", String(64), primary_key=True))
    Table("candidates", md, Column("id", String(128), primary_key=True))
    Table(
        "rubrics",
        md,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("run_id", ForeignKey("runs.id"), index=True, nullable=False),
        Column("version", Integer, nullable=False),
        Column("round", Integer, nullable=False),
        Column("content", JSON, nullable=False),
        Column("agreement", Float, nullable=True),
        _ts("created_at"),
    )
    Table(
        "surrogate_scores",
        md,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("candidate_id", ForeignKey("candidates.id"), index=True, nullable=False),
        Column("kind", String(32), nullable=False),
        Column("rubric_version", Integer, nullable=True),
        Column("score", Float, nullable=False),
        Column("details", JSON, nullable=False),
        _ts("created_at"),
    )
    Table(
        "model_calls",
        md,
        Column("id", Integer, primary_key=True, autoincrement=True),
        Column("run_id", String(64), index=True, nullable=False),
        Column("role", String(16), nullable=False),
        Column("model", String(256), nullable=False),
        Column("calls", Integer, nullable=False),
        Column("tokens_in", Integer, nullable=False),
        Column("tokens_out", Integer, nullable=False),
        Column("latency_s", Float, nullable=False),
        Column("cached", Integer, nullable=False),
        Column("errors", Integer, nullable=False),
        _ts("created_at"),
    )
    Table(
        "run_state",
        md,
        Column("run_id", ForeignKey("runs.id"), primary_key=True),
        Column("key", String(256), primary_key=True),
        Column("value", JSON, nullable=True),
        _ts("updated_at"),
    )
    for name in ("rubrics", "surrogate_scores", "model_calls", "run_state"):
        md.tables[name].create(conn, checkfirst=True)
    existing = {c["name"] for c in inspect(conn).get_columns("runs")}
    if "kind" not in existing:
        kind_type = String(16).compile(dialect=conn.dialect)
        conn.execute(text(f"ALTER TABLE runs ADD COLUMN kind {kind_type} NOT NULL DEFAULT 'run'"))
    if "heartbeat_at" not in existing:
        ts_type = DateTime(timezone=True).compile(dialect=conn.dialect)
        conn.execute(text(f"ALTER TABLE runs ADD COLUMN heartbeat_at {ts_type}"))


def applied(engine: Engine) -> list[str]:
    """Names of the migrations recorded in the database."""
    with engine.connect() as conn:
        if not inspect(conn).has_table("_evolve_migrations"):
            return []
        return [r[0] for r in conn.execute(_migrations_table.select().order_by(_migrations_table.c.applied_at))]


def migrate(engine: Engine, upto: str | None = None) -> list[str]:
    """Apply pending migrations (all, or up to and including `upto`); return the names applied now.

    Safe when several processes open a new database at once: each migration's record is inserted
    first, in the migration's own transaction, so a second process blocks on that row until the
    first commits, then finds it taken (IntegrityError) and skips the migration.
    """
    for attempt in range(3):
        try:
            with engine.begin() as conn:
                _TRACK.create_all(conn)
            break
        except (OperationalError, ProgrammingError, IntegrityError):  # PostgreSQL: a concurrent CREATE TABLE won
            if attempt == 2:
                raise
    done = set(applied(engine))
    now_applied = []
    for fn in MIGRATIONS:
        if fn.__name__ not in done:
            try:
                with engine.begin() as conn:
                    conn.execute(_migrations_table.insert().values(name=fn.__name__, applied_at=datetime.now(UTC)))
                    fn(conn)
                now_applied.append(fn.__name__)
            except IntegrityError:
                pass  # applied by another process meanwhile
        if upto and fn.__name__ == upto:
            break
    return now_applied
