"""LineageStore: the only module that speaks SQL.

Storage model: a run owns candidates; each candidate points to its parent and to a
content-addressed harness snapshot (`harnesses.hash` = the harness version id, so identical
harnesses are stored once). Edits, critiques, surrogate scores and decisions hang off candidates.
Rollouts are keyed by (run, harness version, benchmark, split, task, trial) and inserted
idempotently, so a resumed run never duplicates one and re-evaluating a harness reuses its
rollouts. `run_state` holds small JSON values (memory, step results) for exact resume.

Any SQLAlchemy URL works; SQLite (the default) runs in WAL mode with a busy timeout so readers
never block a writing run.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, delete, event, func, insert, literal, select, update
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, IntegrityError, OperationalError
from sqlalchemy.exc import NoSuchModuleError as _NoSuchModule

from evolve.errors import StoreError
from evolve.harness.model import Harness
from evolve.store import schema as s
from evolve.store.migrations import migrate
from evolve.store.records import CallRecord, CandidateRecord, RolloutRecord


def _now() -> datetime:
    return datetime.now(UTC)


def normalize_url(url_or_path: str | Path, *, create_dirs: bool = True) -> str:
    """Accept a SQLAlchemy URL or a file path (a path means SQLite; its folder is created unless
    `create_dirs` is false)."""
    text = str(url_or_path)
    if "://" in text:
        return text
    path = Path(text).expanduser()
    if create_dirs:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"database {text}: cannot create its folder {str(path.parent)!r}: "
                             f"{exc.strerror or exc}") from None
    return f"sqlite:///{path}"


def _shown(url: str) -> str:
    """A database URL as it may be shown: without its password."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


def _is_deadlock(exc: OperationalError) -> bool:
    """Whether the server aborted this transaction to break a lock cycle (PostgreSQL's SQLSTATE 40P01)."""
    return getattr(exc.orig, "sqlstate", None) == "40P01" or "deadlock detected" in str(exc.orig)


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    cur.execute("PRAGMA busy_timeout=60000")
    cur.execute("PRAGMA journal_mode=WAL")
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def make_engine(url: str) -> Engine:
    try:
        if url.startswith("sqlite"):
            engine = create_engine(url, connect_args={"timeout": 60})
            event.listen(engine, "connect", _sqlite_pragmas)
        else:
            engine = create_engine(url, pool_pre_ping=True)
    except (ArgumentError, _NoSuchModule, ImportError) as exc:
        raise StoreError(f"unusable database URL {_shown(url)!r}: {exc}") from None
    return engine


class LineageStore:
    """Read and write runs, candidates, edits, critiques, rubrics, rollouts and decisions."""

    def __init__(self, url: str | Path, *, migrate_schema: bool = True) -> None:
        self.url = normalize_url(url)
        self.engine = make_engine(self.url)
        if migrate_schema:
            try:
                migrate(self.engine)
            except DBAPIError as exc:
                reason = (str(exc.orig).strip().splitlines() or ["error"])[0]
                raise StoreError(f"cannot open database {_shown(self.url)}: {reason}") from None

    def close(self) -> None:
        self.engine.dispose()

    # -- runs ----------------------------------------------------------------------------------

    def create_run(self, run_id: str, config: dict[str, Any], *, seed: int = 0, benchmark: str = "",
                   model: str = "", preset: str = "", kind: str = "run", status: str = "running") -> None:
        now = _now()
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(s.Run).values(
                    id=run_id, kind=kind, status=status, seed=seed, benchmark=benchmark, model=model,
                    preset=preset, config=config, created_at=now, updated_at=now, heartbeat_at=now,
                ))
        except IntegrityError:
            raise StoreError(f"run {run_id!r} already exists; use `evolve resume {run_id}`") from None

    def get_run(self, run_id: str) -> dict[str, Any]:
        with self.engine.connect() as conn:
            row = conn.execute(select(s.Run.__table__).where(s.Run.id == run_id)).mappings().first()
        if row is None:
            raise StoreError(f"unknown run {run_id!r}; see `evolve status` for the runs in this database")
        return dict(row)

    def list_runs(self, kind: str | None = None) -> list[dict[str, Any]]:
        stmt = select(s.Run.__table__).order_by(s.Run.created_at)
        if kind:
            stmt = stmt.where(s.Run.kind == kind)
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(stmt).mappings()]

    def update_run(self, run_id: str, **values: Any) -> None:
        values["updated_at"] = _now()
        with self.engine.begin() as conn:
            conn.execute(update(s.Run).where(s.Run.id == run_id).values(**values))

    def heartbeat(self, run_id: str) -> None:
        self.update_run(run_id, heartbeat_at=_now())

    def latest_run_id(self, kind: str = "run") -> str:
        runs = self.list_runs(kind)
        if not runs:
            raise StoreError("no runs in this database yet; start one with `evolve run`")
        return runs[-1]["id"]

    # -- harnesses and candidates --------------------------------------------------------------

    def put_harness(self, harness: Harness) -> str:
        version = harness.version
        try:
            with self.engine.begin() as conn:
                exists = conn.execute(select(s.HarnessRow.hash).where(s.HarnessRow.hash == version)).first()
                if exists is None:
                    conn.execute(insert(s.HarnessRow).values(
                        hash=version, content=harness.model_dump(mode="json"), name=harness.name))
        except IntegrityError:  # a concurrent writer stored the same snapshot first: content-addressed, so equal
            pass
        return version

    def get_harness(self, version: str) -> Harness:
        with self.engine.connect() as conn:
            row = conn.execute(select(s.HarnessRow.content).where(s.HarnessRow.hash == version)).first()
        if row is None:
            raise StoreError(f"unknown harness version {version!r}")
        return Harness.model_validate(row[0])

    def add_candidate(self, candidate_id: str, run_id: str, harness: Harness, *, parent_id: str | None,
                      round: int, slot: int = 0, status: str = "pending", origin: str = "",
                      edits: Sequence[Any] = (), meta: dict[str, Any] | None = None) -> None:
        """Store a candidate with its harness snapshot and its edits (one transaction; idempotent)."""
        version = self.put_harness(harness)
        with self.engine.begin() as conn:
            if conn.execute(select(s.Candidate.id).where(s.Candidate.id == candidate_id)).first():
                return
            conn.execute(insert(s.Candidate).values(
                id=candidate_id, run_id=run_id, parent_id=parent_id, round=round, slot=slot,
                harness_hash=version, status=status, origin=origin, reason="", meta=meta or {},
                created_at=_now(),
            ))
            if edits:
                conn.execute(insert(s.EditRow), [
                    {"candidate_id": candidate_id, "position": i, "op": e.op, "component": e.component,
                     "target": None if e.target is None else str(e.target), "value": e.value,
                     "hypothesis": e.hypothesis, "origin": e.origin}
                    for i, e in enumerate(edits)
                ])

    def update_candidate(self, candidate_id: str, **values: Any) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(s.Candidate).where(s.Candidate.id == candidate_id).values(**values))

    def get_candidate(self, candidate_id: str) -> CandidateRecord:
        with self.engine.connect() as conn:
            row = conn.execute(
                select(s.Candidate.__table__).where(s.Candidate.id == candidate_id)).mappings().first()
        if row is None:
            raise StoreError(f"unknown candidate {candidate_id!r}; see `evolve lineage RUN` for candidate ids")
        return _candidate(row)

    def candidates(self, run_id: str) -> list[CandidateRecord]:
        stmt = (select(s.Candidate.__table__).where(s.Candidate.run_id == run_id)
                .order_by(s.Candidate.round, s.Candidate.slot, s.Candidate.id))
        with self.engine.connect() as conn:
            return [_candidate(r) for r in conn.execute(stmt).mappings()]

    def edits(self, candidate_id: str) -> list[dict[str, Any]]:
        stmt = select(s.EditRow.__table__).where(s.EditRow.candidate_id == candidate_id).order_by(
            s.EditRow.position)
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(stmt).mappings()]

    def run_edits(self, run_id: str) -> list[dict[str, Any]]:
        """All edits of a run with their candidate's round and status."""
        e, c = s.EditRow.__table__, s.Candidate.__table__
        stmt = (select(e, c.c.round, c.c.status, c.c.delta).join(c, c.c.id == e.c.candidate_id)
                .where(c.c.run_id == run_id).order_by(c.c.round, c.c.slot, e.c.position))
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(stmt).mappings()]

    # -- critiques, decisions, rubrics, surrogate scores ---------------------------------------

    def add_critique(self, candidate_id: str, kind: str, verdict: str, reason: str,
                     details: dict[str, Any] | None = None) -> None:
        with self.engine.begin() as conn:
            conn.execute(insert(s.Critique).values(
                candidate_id=candidate_id, kind=kind, verdict=verdict, reason=reason, details=details or {},
                created_at=_now()))

    def critiques(self, candidate_id: str) -> list[dict[str, Any]]:
        stmt = select(s.Critique.__table__).where(s.Critique.candidate_id == candidate_id).order_by(s.Critique.id)
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(stmt).mappings()]

    def add_decision(self, run_id: str, candidate_id: str, round: int, accepted: bool, reason: str,
                     stats: dict[str, Any] | None = None, kind: str = "acceptance") -> None:
        with self.engine.begin() as conn:
            conn.execute(insert(s.Decision).values(
                run_id=run_id, candidate_id=candidate_id, round=round, kind=kind, accepted=accepted,
                reason=reason, stats=stats or {}, created_at=_now()))

    def decisions(self, run_id: str | None = None, candidate_id: str | None = None) -> list[dict[str, Any]]:
        stmt = select(s.Decision.__table__).order_by(s.Decision.id)
        if run_id:
            stmt = stmt.where(s.Decision.run_id == run_id)
        if candidate_id:
            stmt = stmt.where(s.Decision.candidate_id == candidate_id)
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(stmt).mappings()]

    def add_rubric(self, run_id: str, version: int, round: int, content: dict[str, Any],
                   agreement: float | None = None) -> None:
        with self.engine.begin() as conn:
            conn.execute(insert(s.RubricRow).values(
                run_id=run_id, version=version, round=round, content=content, agreement=agreement,
                created_at=_now()))

    def rubrics(self, run_id: str) -> list[dict[str, Any]]:
        stmt = select(s.RubricRow.__table__).where(s.RubricRow.run_id == run_id).order_by(s.RubricRow.id)
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(stmt).mappings()]

    def add_surrogate_score(self, candidate_id: str, kind: str, score: float, *,
                            rubric_version: int | None = None, details: dict[str, Any] | None = None) -> None:
        with self.engine.begin() as conn:
            conn.execute(insert(s.SurrogateScore).values(
                candidate_id=candidate_id, kind=kind, score=score, rubric_version=rubric_version,
                details=details or {}, created_at=_now()))

    def surrogate_scores(self, run_id: str) -> list[dict[str, Any]]:
        ss, c = s.SurrogateScore.__table__, s.Candidate.__table__
        stmt = (select(ss, c.c.round).join(c, c.c.id == ss.c.candidate_id)
                .where(c.c.run_id == run_id).order_by(ss.c.id))
        with self.engine.connect() as conn:
            return [dict(r) for r in conn.execute(stmt).mappings()]

    # -- rollouts and accounting ---------------------------------------------------------------

    def add_rollouts(self, records: Iterable[RolloutRecord]) -> int:
        """Insert rollouts, skipping any whose key is already stored; return how many were new."""
        rows = {r.key: r for r in records}
        if not rows:
            return 0
        for attempt in range(5):
            try:
                return self._insert_new_rollouts(rows)
            except IntegrityError:  # a concurrent writer stored some of these keys first: skip those too
                if attempt == 4:
                    raise
            except OperationalError as exc:  # the server broke a lock cycle by aborting this batch: try again
                if attempt == 4 or not _is_deadlock(exc):
                    raise
        return 0

    def _insert_new_rollouts(self, rows: dict[tuple, RolloutRecord]) -> int:
        t = s.Rollout.__table__
        with self.engine.begin() as conn:
            existing = set(conn.execute(
                select(t.c.run_id, t.c.harness_hash, t.c.benchmark, t.c.split, t.c.task_id, t.c.trial)
                .where(t.c.run_id.in_({r.run_id for r in rows.values()}),
                       t.c.harness_hash.in_({r.harness_hash for r in rows.values()}))
            ).all())
            # in key order: writers whose batches overlap then wait on their common keys in one order,
            # which cannot form the lock cycle PostgreSQL reports as a deadlock
            new = [rows[k] for k in sorted(rows) if k not in existing]
            if new:
                now = _now()
                conn.execute(insert(t), [
                    {"run_id": r.run_id, "candidate_id": r.candidate_id, "harness_hash": r.harness_hash,
                     "benchmark": r.benchmark, "split": r.split, "task_id": r.task_id, "trial": r.trial,
                     "reward": r.reward, "prediction": r.prediction, "parsed": r.parsed,
                     "tokens_in": r.tokens_in, "tokens_out": r.tokens_out, "latency_s": r.latency_s,
                     "error": r.error, "trajectory": r.trajectory, "created_at": now}
                    for r in new
                ])
        return len(new)

    def rollouts(self, run_id: str, *, harness_hash: str | None = None, split: str | None = None,
                 benchmark: str | None = None, with_trajectory: bool = False) -> list[RolloutRecord]:
        t = s.Rollout.__table__
        cols = [c for c in t.c if with_trajectory or c.name != "trajectory"]
        stmt = select(*cols).where(t.c.run_id == run_id)
        if harness_hash:
            stmt = stmt.where(t.c.harness_hash == harness_hash)
        if split:
            stmt = stmt.where(t.c.split == split)
        if benchmark:
            stmt = stmt.where(t.c.benchmark == benchmark)
        with self.engine.connect() as conn:
            rows = conn.execute(stmt.order_by(t.c.id)).mappings().all()
        fields = RolloutRecord.__dataclass_fields__
        return [RolloutRecord(**{k: v for k, v in r.items() if k in fields}) for r in rows]

    def task_rollouts(self, run_id: str, task_id: str, *, harness_hash: str | None = None,
                      split: str | None = None) -> list[RolloutRecord]:
        """The rollouts of one task in a run (with their trajectories), oldest first."""
        t = s.Rollout.__table__
        stmt = select(*t.c).where(t.c.run_id == run_id, t.c.task_id == task_id)
        if harness_hash:
            stmt = stmt.where(t.c.harness_hash == harness_hash)
        if split:
            stmt = stmt.where(t.c.split == split)
        with self.engine.connect() as conn:
            rows = conn.execute(stmt.order_by(t.c.id)).mappings().all()
        fields = RolloutRecord.__dataclass_fields__
        return [RolloutRecord(**{k: v for k, v in r.items() if k in fields}) for r in rows]

    def count_rollouts(self, run_id: str) -> int:
        t = s.Rollout.__table__
        with self.engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(t).where(t.c.run_id == run_id)).scalar_one()

    def add_calls(self, run_id: str, calls: Sequence[CallRecord]) -> None:
        if not calls:
            return
        now = _now()
        with self.engine.begin() as conn:
            conn.execute(insert(s.ModelCall), [
                {"run_id": run_id, "role": c.role, "model": c.model, "calls": c.calls, "tokens_in": c.tokens_in,
                 "tokens_out": c.tokens_out, "latency_s": c.latency_s, "cached": c.cached, "errors": c.errors,
                 "created_at": now} for c in calls
            ])

    def usage_by_role(self, run_id: str) -> dict[str, dict[str, float]]:
        t = s.ModelCall.__table__
        stmt = (select(t.c.role, func.sum(t.c.calls), func.sum(t.c.tokens_in), func.sum(t.c.tokens_out),
                       func.sum(t.c.latency_s), func.sum(t.c.cached), func.sum(t.c.errors))
                .where(t.c.run_id == run_id).group_by(t.c.role))
        with self.engine.connect() as conn:
            return {r[0]: {"calls": r[1], "tokens_in": r[2], "tokens_out": r[3], "latency_s": r[4],
                           "cached": r[5], "errors": r[6]} for r in conn.execute(stmt)}

    # -- run state (memory, memoized steps) ----------------------------------------------------

    def put_state(self, run_id: str, key: str, value: Any) -> None:
        t = s.RunState.__table__
        with self.engine.begin() as conn:
            conn.execute(delete(t).where(t.c.run_id == run_id, t.c.key == key))
            conn.execute(insert(t).values(run_id=run_id, key=key, value=value, updated_at=_now()))

    def get_state(self, run_id: str, key: str, default: Any = None) -> Any:
        t = s.RunState.__table__
        with self.engine.connect() as conn:
            row = conn.execute(select(t.c.value).where(t.c.run_id == run_id, t.c.key == key)).first()
        return default if row is None else row[0]

    def state_keys(self, run_id: str, prefix: str = "") -> list[str]:
        t = s.RunState.__table__
        stmt = select(t.c.key).where(t.c.run_id == run_id, t.c.key.startswith(prefix)).order_by(t.c.key)
        with self.engine.connect() as conn:
            return [r[0] for r in conn.execute(stmt)]

    # -- bulk writes and aggregate reads (reports, status, benchmarks) -------------------------

    def bulk_add_candidates(self, candidates: Sequence[CandidateRecord],
                            edits: dict[str, Sequence[Any]] | None = None) -> int:
        """Insert many candidates (and their edits) in one transaction; for imports, tests and benchmarks.

        Each candidate's `harness_hash` must already be stored (`put_harness`); ids must be new.
        """
        if not candidates:
            return 0
        now = _now()
        with self.engine.begin() as conn:
            conn.execute(insert(s.Candidate), [
                {"id": c.id, "run_id": c.run_id, "parent_id": c.parent_id, "round": c.round, "slot": c.slot,
                 "harness_hash": c.harness_hash, "status": c.status, "origin": c.origin, "reason": c.reason,
                 "val_score": c.val_score, "val_ci_low": c.val_ci_low, "val_ci_high": c.val_ci_high,
                 "delta": c.delta, "policy_tokens": c.policy_tokens, "meta": c.meta or {}, "created_at": now}
                for c in candidates
            ])
            edit_rows = [
                {"candidate_id": cid, "position": i, "op": e.op, "component": e.component,
                 "target": None if e.target is None else str(e.target), "value": e.value,
                 "hypothesis": e.hypothesis, "origin": e.origin}
                for cid, items in (edits or {}).items() for i, e in enumerate(items)
            ]
            if edit_rows:
                conn.execute(insert(s.EditRow), edit_rows)
        return len(candidates)

    def bulk_add_decisions(self, run_id: str, decisions: Sequence[dict[str, Any]]) -> int:
        """Insert many decisions ({candidate_id, round, accepted, reason, stats, kind?}) in one transaction."""
        if not decisions:
            return 0
        now = _now()
        with self.engine.begin() as conn:
            conn.execute(insert(s.Decision), [
                {"run_id": run_id, "candidate_id": d["candidate_id"], "round": d["round"],
                 "kind": d.get("kind", "acceptance"), "accepted": d["accepted"], "reason": d["reason"],
                 "stats": d.get("stats") or {}, "created_at": now} for d in decisions])
        return len(decisions)

    def child_status_counts(self, run_id: str, parent_ids: Sequence[str]) -> dict[str, dict[str, int]]:
        """Per parent id: how many children it has in each status (one grouped query)."""
        c = s.Candidate.__table__
        out: dict[str, dict[str, int]] = {}
        with self.engine.connect() as conn:
            for start in range(0, len(parent_ids), 500):
                chunk = list(parent_ids[start:start + 500])
                stmt = (select(c.c.parent_id, c.c.status, func.count())
                        .where(c.c.run_id == run_id, c.c.parent_id.in_(chunk)).group_by(c.c.parent_id, c.c.status))
                for parent, status, n in conn.execute(stmt):
                    out.setdefault(parent, {})[status] = n
        return out

    def count_candidates(self, run_id: str) -> int:
        c = s.Candidate.__table__
        with self.engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(c).where(c.c.run_id == run_id)).scalar_one()

    def lineage_nodes(self, run_id: str, ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Every candidate of a run as a plain JSON-ready dict with its edit summaries, in round/slot order.

        Keys: id, parent_id, round, slot, status, origin, reason, version (harness hash), val_score,
        val_ci [low, high], delta, delta_ci and delta_c (the acceptance decision's `ci_dS` and `dC`),
        policy_tokens, edits
        [{op, component, target, hypothesis}]. No harness snapshots: the fast path of lineage views.
        """
        c, e = s.Candidate.__table__, s.EditRow.__table__
        stmt = (select(c.c.id, c.c.parent_id, c.c.round, c.c.slot, c.c.status, c.c.origin, c.c.reason,
                       c.c.harness_hash, c.c.val_score, c.c.val_ci_low, c.c.val_ci_high, c.c.delta,
                       c.c.policy_tokens, e.c.op, e.c.component, e.c.target, e.c.hypothesis)
                .select_from(c.outerjoin(e, e.c.candidate_id == c.c.id)).where(c.c.run_id == run_id)
                .order_by(c.c.round, c.c.slot, c.c.id, e.c.position))
        if ids is not None:
            stmt = stmt.where(c.c.id.in_(list(ids)))
        nodes: list[dict[str, Any]] = []
        node: dict[str, Any] = {"id": None}
        with self.engine.connect() as conn:
            for (cid, parent, rnd, slot, status, origin, reason, version, val, lo, hi, delta, tokens,
                 op, component, target, hypothesis) in conn.execute(stmt).all():
                if cid != node["id"]:
                    node = {"id": cid, "parent_id": parent, "round": rnd, "slot": slot, "status": status,
                            "origin": origin, "reason": reason, "version": version, "val_score": val,
                            "val_ci": [lo, hi], "delta": delta, "policy_tokens": tokens, "edits": []}
                    nodes.append(node)
                if op is not None:
                    node["edits"].append({"op": op, "component": component, "target": target,
                                          "hypothesis": hypothesis})
            d = s.Decision.__table__
            dstmt = (select(d.c.candidate_id, d.c.stats)
                     .where(d.c.run_id == run_id, d.c.kind == "acceptance").order_by(d.c.id))
            if ids is not None:
                dstmt = dstmt.where(d.c.candidate_id.in_(list(ids)))
            ci = dict(conn.execute(dstmt).all())
        for n in nodes:
            stats = ci.get(n["id"]) or {}
            n["delta_ci"], n["delta_c"] = stats.get("ci_dS"), stats.get("dC")
        return nodes

    def lineage_json_rows(self, run_id: str) -> list[str] | None:
        """`lineage_nodes` as one JSON text per candidate, built by SQLite's JSON functions (several
        times faster for large runs); None on other databases (use `lineage_nodes`)."""
        if self.engine.dialect.name != "sqlite":
            return None
        with self.engine.connect() as conn:  # the driver's cursor: no per-row result processing
            cursor = conn.connection.driver_connection.execute(_LINEAGE_JSON_SQL, {"run_id": run_id})
            return [row[0] for row in cursor.fetchall()]

    def parent_chain(self, candidate_id: str) -> list[str]:
        """Ids from the root down to `candidate_id` (empty when it is unknown); one recursive query."""
        c = s.Candidate.__table__
        chain = select(c.c.id, c.c.parent_id, literal(0).label("depth")).where(c.c.id == candidate_id) \
            .cte("chain", recursive=True)
        chain = chain.union_all(select(c.c.id, c.c.parent_id, (chain.c.depth + 1).label("depth"))
                                .where(c.c.id == chain.c.parent_id, chain.c.depth < 100_000))
        with self.engine.connect() as conn:
            rows = conn.execute(select(chain.c.id).order_by(chain.c.depth.desc())).all()
        return [r[0] for r in rows]

    def last_accepted(self, run_id: str) -> str | None:
        """The latest accepted (or seed) candidate of a run in round/slot order."""
        c = s.Candidate.__table__
        stmt = (select(c.c.id).where(c.c.run_id == run_id, c.c.status.in_(("accepted", "seed")))
                .order_by(c.c.round.desc(), c.c.slot.desc(), c.c.id.desc()).limit(1))
        with self.engine.connect() as conn:
            row = conn.execute(stmt).first()
        return None if row is None else row[0]

    def rollout_summary(self, run_id: str) -> list[dict[str, Any]]:
        """Per (harness, benchmark, split): rollouts, mean reward, parse rate, tokens, errors."""
        t = s.Rollout.__table__
        stmt = (select(t.c.harness_hash, t.c.benchmark, t.c.split, func.count(), func.avg(t.c.reward),
                       func.avg(t.c.parsed), func.sum(t.c.tokens_in), func.sum(t.c.tokens_out),
                       func.count(t.c.error), func.min(t.c.created_at), func.max(t.c.created_at))
                .where(t.c.run_id == run_id).group_by(t.c.harness_hash, t.c.benchmark, t.c.split))
        keys = ("harness_hash", "benchmark", "split", "n", "mean_reward", "parse_rate", "tokens_in", "tokens_out",
                "errors", "first_at", "last_at")
        with self.engine.connect() as conn:
            return [dict(zip(keys, r, strict=True)) for r in conn.execute(stmt)]

    def rollout_examples(self, run_id: str, harness_hash: str, *, limit: int = 5,
                         with_trajectory: bool = False) -> list[RolloutRecord]:
        """A few rollouts of one harness, failures first (lowest reward), for reports."""
        t = s.Rollout.__table__
        cols = [c for c in t.c if with_trajectory or c.name != "trajectory"]
        stmt = (select(*cols).where(t.c.run_id == run_id, t.c.harness_hash == harness_hash)
                .order_by(t.c.reward, t.c.id).limit(limit))
        with self.engine.connect() as conn:
            rows = conn.execute(stmt).mappings().all()
        fields = RolloutRecord.__dataclass_fields__
        return [RolloutRecord(**{k: v for k, v in r.items() if k in fields}) for r in rows]

    def run_counts(self, run_id: str) -> dict[str, Any]:
        """Candidates per status, last round, rollouts and policy tokens of a run (for `evolve status`)."""
        c, t = s.Candidate.__table__, s.Rollout.__table__
        with self.engine.connect() as conn:
            by_status = dict(conn.execute(select(c.c.status, func.count()).where(c.c.run_id == run_id)
                                          .group_by(c.c.status)).all())
            last_round = conn.execute(select(func.max(c.c.round)).where(c.c.run_id == run_id)).scalar()
            n, tin, tout = conn.execute(select(func.count(), func.sum(t.c.tokens_in), func.sum(t.c.tokens_out))
                                        .where(t.c.run_id == run_id)).one()
        return {"candidates": sum(by_status.values()), "by_status": by_status, "last_round": last_round,
                "rollouts": n, "policy_tokens_in": tin or 0, "policy_tokens_out": tout or 0}

    def last_rollout_id(self, run_id: str) -> int:
        """The largest rollout row id of a run (0 when it has none)."""
        t = s.Rollout.__table__
        with self.engine.connect() as conn:
            return int(conn.execute(select(func.max(t.c.id)).where(t.c.run_id == run_id)).scalar() or 0)

    def purge_round(self, run_id: str, round: int, *, rollouts_after: int | None = None) -> int:
        """Delete what a partially done round wrote (candidates with their edits, critiques, surrogate
        scores and decisions, and the round's rubrics). Rollouts stay and are reused, except those with
        an id above `rollouts_after` (the rollouts the round ran, so that a rerun charges them again).
        Returns the number of candidates removed."""
        c = s.Candidate.__table__
        with self.engine.begin() as conn:
            if rollouts_after is not None:
                ro = s.Rollout.__table__
                conn.execute(delete(ro).where(ro.c.run_id == run_id, ro.c.id > rollouts_after))
            ids = [r[0] for r in conn.execute(select(c.c.id).where(c.c.run_id == run_id, c.c.round == round))]
            if ids:
                for table in (s.EditRow, s.Critique, s.SurrogateScore, s.Decision):
                    t = table.__table__
                    conn.execute(delete(t).where(t.c.candidate_id.in_(ids)))
                conn.execute(delete(c).where(c.c.id.in_(ids)))
            r = s.RubricRow.__table__
            conn.execute(delete(r).where(r.c.run_id == run_id, r.c.round == round))
            d = s.Decision.__table__
            conn.execute(delete(d).where(d.c.run_id == run_id, d.c.round == round))
        return len(ids)

    # -- resolution ----------------------------------------------------------------------------

    def resolve_candidate(self, ref: str, run_id: str | None = None) -> CandidateRecord:
        """A candidate by id, or `best` / `seed` of a run (the latest run when not given)."""
        if ref in ("best", "seed"):
            run_id = self.get_run(run_id)["id"] if run_id else self.latest_run_id()
            cands = self.candidates(run_id)
            if ref == "seed":
                seeds = [c for c in cands if c.parent_id is None]
                if not seeds:
                    raise StoreError(f"run {run_id!r} has no seed candidate yet")
                return seeds[0]
            best = self.get_state(run_id, "incumbent")
            if best:
                return self.get_candidate(best)
            accepted = [c for c in cands if c.status in ("accepted", "seed")]
            if not accepted:
                raise StoreError(f"run {run_id!r} has no accepted candidate yet")
            return accepted[-1]
        return self.get_candidate(ref)


_LINEAGE_JSON_SQL = """
SELECT json_object(
  'id', c.id, 'parent_id', c.parent_id, 'round', c.round, 'slot', c.slot, 'status', c.status,
  'origin', c.origin, 'reason', c.reason, 'version', c.harness_hash, 'val_score', c.val_score,
  'val_ci', json_array(c.val_ci_low, c.val_ci_high), 'delta', c.delta, 'policy_tokens', c.policy_tokens,
  'delta_ci', (SELECT json(json_extract(d.stats, '$.ci_dS')) FROM decisions AS d
               WHERE d.candidate_id = c.id AND d.kind = 'acceptance' ORDER BY d.id DESC LIMIT 1),
  'delta_c', (SELECT json_extract(d.stats, '$.dC') FROM decisions AS d
              WHERE d.candidate_id = c.id AND d.kind = 'acceptance' ORDER BY d.id DESC LIMIT 1),
  'edits', (SELECT json_group_array(json_object('op', e.op, 'component', e.component, 'target', e.target,
                                                'hypothesis', e.hypothesis))
            FROM (SELECT * FROM edits WHERE edits.candidate_id = c.id ORDER BY edits.position) AS e))
FROM candidates AS c WHERE c.run_id = :run_id ORDER BY c.round, c.slot, c.id
"""


def _candidate(row: Any) -> CandidateRecord:
    fields = CandidateRecord.__dataclass_fields__
    data = {k: v for k, v in dict(row).items() if k in fields}
    data["meta"] = data.get("meta") or {}
    return CandidateRecord(**data)
