"""The Python API behind `evolve run` and `evolve resume` (usable from notebooks and scripts).

    import evolve
    summary = evolve.run(benchmark="sentiment", model="embedded", rounds=3, seed=1)
    print(summary["run_id"], summary["best"]["test"]["score"])
"""

from __future__ import annotations

import asyncio
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evolve.backends.redact import redact
from evolve.errors import ConfigError, StoreError
from evolve.loop.engine import Engine, Progress
from evolve.loop.setup import build_parts
from evolve.paths import default_db_url
from evolve.roles import ROLES_KEY, public_roles
from evolve.run_config import RunConfig, make_config
from evolve.store import LineageStore

RESUMABLE = ("running", "stopped", "failed")


def new_run_id() -> str:
    return f"run-{datetime.now(UTC):%Y%m%d-%H%M%S}-{os.urandom(2).hex()}"


API_BASE_FIELDS = ("api_base", "proposer_api_base", "critic_api_base", "judge_api_base")


def _stored_config(config: RunConfig) -> dict[str, Any]:
    data = config.model_dump(mode="json")
    for key in API_BASE_FIELDS:
        if data.get(key):
            data[key] = redact(data[key])
    return data


def run(config: RunConfig | None = None, *, file: str | Path | None = None, db: str | None = None,
        run_id: str | None = None, policy: Any = None, helper: Any = None, backends: dict[str, Any] | None = None,
        progress: Progress | None = None, **options: Any) -> dict[str, Any]:
    """Start a run and return its summary (`run_id`, per-split `seed` and `best` scores, ...).

    `policy` / `helper` inject backend objects (e.g. a MockBackend) instead of model strings: `helper`
    serves proposer, critic and judge; `backends` injects per role (`proposer`, `critic`, `judge`).
    """
    config = config or make_config(file, **options)
    parts = build_parts(config, policy=policy, helper=helper, backends=backends)
    store = LineageStore(db or default_db_url())
    run_id = run_id or new_run_id()
    store.create_run(run_id, _stored_config(config), seed=config.seed, benchmark=parts.benchmark.name,
                     model=redact(config.model), preset=config.preset)
    _store_roles(store, run_id, parts)
    return _drive(store, run_id, Engine(store, run_id, parts, progress))


def _store_roles(store: LineageStore, run_id: str, parts: Any) -> None:
    """The resolved roles (credentials masked), shown by `evolve status`, `evolve show` and the report."""
    store.put_state(run_id, ROLES_KEY, public_roles(parts.roles))


def resume(run_id: str, *, db: str | None = None, policy: Any = None, helper: Any = None,
           backends: dict[str, Any] | None = None, progress: Progress | None = None, api_base: str | None = None,
           api_bases: dict[str, str] | None = None, executor: str | None = None,
           ray_address: str | None = None) -> dict[str, Any]:
    """Continue a run that was stopped or killed, exactly where its last completed step left it.

    Stored API bases have their credentials masked: pass them again with `api_base` (the policy's)
    and `api_bases` (per role: `proposer`, `critic`, `judge`). `executor` and `ray_address` override
    the stored ones (e.g. resume on a new Ray cluster); where rollouts run never changes the lineage.
    """
    store = LineageStore(db or default_db_url())
    row = store.get_run(run_id)
    if row["status"] == "finished":
        raise StoreError(f"run {run_id!r} already finished; start a new one with `evolve run`")
    if row["status"] not in RESUMABLE:
        raise StoreError(f"run {run_id!r} has status {row['status']!r}; resumable: {', '.join(RESUMABLE)}")
    if row.get("kind", "run") != "run":
        raise ConfigError(f"{run_id!r} is an {row['kind']} record, not an evolution run")
    config = RunConfig.model_validate(row["config"])
    update = {f"{role}_api_base": url for role, url in (api_bases or {}).items() if url}
    if api_base:
        update["api_base"] = api_base
    if update:
        config = RunConfig.model_validate({**config.model_dump(), **update})
    moved = {k: v for k, v in {"executor": executor, "ray_address": ray_address}.items() if v}
    if moved:
        config = make_config(**{**config.model_dump(), **moved})
        store.update_run(run_id, config=_stored_config(config))
    parts = build_parts(config, policy=policy, helper=helper, backends=backends)
    _store_roles(store, run_id, parts)
    store.update_run(run_id, status="running", error=None)
    return _drive(store, run_id, Engine(store, run_id, parts, progress))


def _drive(store: LineageStore, run_id: str, engine: Engine) -> dict[str, Any]:
    try:
        summary = asyncio.run(engine.run())
    except KeyboardInterrupt:
        store.update_run(run_id, status="stopped", error="interrupted; resume with `evolve resume`")
        raise
    except Exception as exc:
        store.update_run(run_id, status="failed", error=redact(str(exc))[:2000])
        raise
    finally:
        if engine.parts.executor is not None:
            engine.parts.executor.close()
    return summary


def dry_run(config: RunConfig) -> dict[str, Any]:
    """What the configured budget buys, without calling any model."""
    from evolve.loop.setup import build_plan

    return build_plan(config)
