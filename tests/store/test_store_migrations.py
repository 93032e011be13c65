"""Schema migrations: from an empty database and from an m001-era database; URLs and SQLite settings."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, text

from evolve.errors import StoreError
from evolve.harness import Harness, Section
from evolve.store import CallRecord, LineageStore, RolloutRecord
from evolve.store.migrations import MIGRATIONS, applied, migrate
from evolve.store.schema import Base

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "lineage_m001.sql"
ALL = [fn.__name__ for fn in MIGRATIONS]


def describe_schema(engine) -> dict[str, dict]:
    """Tables as the database reports them: columns (type, nullable, pk), indexes, uniques, foreign keys."""
    insp = inspect(engine)
    tables = {}
    for name in insp.get_table_names():
        tables[name] = {
            "columns": {c["name"]: (str(c["type"]), bool(c["nullable"]), bool(c["primary_key"]))
                        for c in insp.get_columns(name)},
            "indexes": sorted((i["name"], tuple(i["column_names"]), bool(i["unique"])) for i in insp.get_indexes(name)),
            "uniques": sorted((u["name"], tuple(u["column_names"])) for u in insp.get_unique_constraints(name)),
            "foreign_keys": sorted((tuple(f["constrained_columns"]), f["referred_table"], tuple(f["referred_columns"]))
                                   for f in insp.get_foreign_keys(name)),
        }
    return tables


def describe_models(dialect) -> dict[str, dict]:
    """The same description, derived from the ORM models of evolve/store/schema.py."""
    tables = {}
    for table in Base.metadata.sorted_tables:
        tables[table.name] = {
            "columns": {c.name: (c.type.compile(dialect=dialect), bool(c.nullable), bool(c.primary_key))
                        for c in table.columns},
            "indexes": sorted((i.name, tuple(c.name for c in i.columns), bool(i.unique)) for i in table.indexes),
            "uniques": sorted((u.name, tuple(c.name for c in u.columns)) for u in table.constraints
                              if type(u).__name__ == "UniqueConstraint"),
            "foreign_keys": sorted(((f.parent.name,), f.column.table.name, (f.column.name,))
                                   for f in table.foreign_keys),
        }
    return tables


def load_fixture(path: Path) -> Path:
    with sqlite3.connect(path) as conn:
        conn.executescript(FIXTURE.read_text(encoding="utf-8"))
    return path


def test_empty_database_migrates_to_the_orm_schema(tmp_path: Path) -> None:
    store = LineageStore(tmp_path / "fresh.db")
    found = describe_schema(store.engine)
    assert found.pop("_evolve_migrations")["columns"].keys() == {"name", "applied_at"}
    expected = describe_models(store.engine.dialect)
    assert sorted(found) == sorted(expected)
    for name in expected:
        assert found[name] == expected[name], name
    assert applied(store.engine) == ALL


def test_migrated_schema_equals_create_all(tmp_path: Path) -> None:
    migrated = LineageStore(tmp_path / "migrated.db").engine
    created = create_engine(f"sqlite:///{tmp_path / 'created.db'}")
    Base.metadata.create_all(created)
    found = describe_schema(migrated)
    found.pop("_evolve_migrations")
    assert found == describe_schema(created)


def test_migrate_is_idempotent_and_can_stop_early(tmp_path: Path) -> None:
    engine = create_engine(f"sqlite:///{tmp_path / 'steps.db'}")
    assert migrate(engine, upto="m001_initial") == ["m001_initial"]
    assert "rubrics" not in inspect(engine).get_table_names()
    assert migrate(engine) == ALL[1:]
    assert migrate(engine) == []
    assert applied(engine) == ALL
    LineageStore(f"sqlite:///{tmp_path / 'steps.db'}")
    assert applied(engine) == ALL


def test_m001_fixture_records_only_m001(tmp_path: Path) -> None:
    path = load_fixture(tmp_path / "old.db")
    engine = create_engine(f"sqlite:///{path}")
    assert applied(engine) == ["m001_initial"]
    assert "rubrics" not in inspect(engine).get_table_names()
    assert "kind" not in {c["name"] for c in inspect(engine).get_columns("runs")}


def test_m001_database_keeps_its_rows(tmp_path: Path) -> None:
    store = LineageStore(load_fixture(tmp_path / "old.db"))
    assert applied(store.engine) == ALL
    run = store.get_run("old-run")
    assert (run["status"], run["seed"], run["kind"], run["heartbeat_at"]) == ("finished", 7, "run", None)
    assert run["config"] == {"rounds": 2} and run["summary"] == {"best": "old-run/r1/c0"}
    cands = store.candidates("old-run")
    assert [(c.id, c.parent_id, c.status) for c in cands] == [
        ("old-run/seed", None, "seed"), ("old-run/r1/c0", "old-run/seed", "accepted")]
    assert cands[1].meta == {"note": "from m001"} and cands[1].delta == 0.25
    for c in cands:
        assert store.get_harness(c.harness_hash).version == c.harness_hash
    [edit] = store.edits("old-run/r1/c0")
    assert (edit["op"], edit["component"], edit["value"]["output"]) == ("add", "example", "Rome")
    assert store.critiques("old-run/r1/c0")[0]["verdict"] == "pass"
    assert store.decisions("old-run")[0]["accepted"] is True
    rolls = store.rollouts("old-run", with_trajectory=True)
    assert [(r.task_id, r.reward) for r in rolls] == [("t1", 0.0), ("t1", 1.0)]
    assert rolls[1].trajectory == [{"role": "assistant", "content": "Paris"}]
    assert store.resolve_candidate("seed", "old-run").id == "old-run/seed"
    assert store.resolve_candidate("best", "old-run").id == "old-run/r1/c0"


def test_m001_database_new_tables_are_usable(tmp_path: Path) -> None:
    store = LineageStore(load_fixture(tmp_path / "old.db"))
    store.add_rubric("old-run", 1, 0, {"criteria": ["reusable"]}, agreement=0.9)
    store.add_surrogate_score("old-run/r1/c0", "rubric", 0.8, rubric_version=1)
    store.add_calls("old-run", [CallRecord(role="policy", model="mock", tokens_in=10, tokens_out=2)])
    store.put_state("old-run", "incumbent", "old-run/r1/c0")
    store.heartbeat("old-run")
    assert store.rubrics("old-run")[0]["agreement"] == 0.9
    assert store.surrogate_scores("old-run")[0]["score"] == 0.8
    assert store.usage_by_role("old-run")["policy"]["tokens_in"] == 10
    assert store.get_state("old-run", "incumbent") == "old-run/r1/c0"
    assert store.get_run("old-run")["heartbeat_at"] is not None
    store.create_run("new-run", {"rounds": 1}, kind="eval")
    assert [r["id"] for r in store.list_runs("eval")] == ["new-run"]
    seed = Harness(system=(Section(name="task", text="Answer."),))
    store.add_candidate("new-run/seed", "new-run", seed, parent_id=None, round=0, status="seed")
    added = store.add_rollouts([RolloutRecord(run_id="new-run", harness_hash=seed.version, benchmark="toy",
                                              split="val", task_id="t1", reward=1.0)])
    assert added == 1


def test_m001_database_ends_in_the_orm_schema(tmp_path: Path) -> None:
    store = LineageStore(load_fixture(tmp_path / "old.db"))
    found = describe_schema(store.engine)
    found.pop("_evolve_migrations")
    expected = describe_models(store.engine.dialect)
    assert {t: found[t]["columns"] for t in found} == {t: expected[t]["columns"] for t in expected}


def test_sqlite_runs_in_wal_mode(tmp_path: Path) -> None:
    store = LineageStore(tmp_path / "wal.db")
    with store.engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() >= 1000


def test_two_stores_share_one_file(tmp_path: Path) -> None:
    writer, reader = LineageStore(tmp_path / "shared.db"), LineageStore(tmp_path / "shared.db")
    writer.create_run("r", {})
    assert reader.get_run("r")["id"] == "r"


@pytest.mark.parametrize("form", ["url", "path", "pathlib", "nested"])
def test_urls_and_paths_are_accepted(tmp_path: Path, form: str) -> None:
    target = tmp_path / "a" / "b" / "lineage.db" if form == "nested" else tmp_path / "lineage.db"
    value = {"url": f"sqlite:///{target}", "path": str(target), "pathlib": target, "nested": str(target)}[form]
    store = LineageStore(value)
    store.create_run("r", {"x": 1})
    store.close()
    assert target.is_file()
    assert LineageStore(f"sqlite:///{target}").get_run("r")["config"] == {"x": 1}


def test_in_memory_url_works() -> None:
    store = LineageStore("sqlite://")
    store.create_run("r", {})
    assert store.get_run("r")["status"] == "running"


def test_bad_urls_are_store_errors(tmp_path: Path) -> None:
    not_a_db = tmp_path / "notes.txt"
    not_a_db.write_text("these are notes, not a database\n" * 50, encoding="utf-8")
    bad = ["nosuchdialect://host/db", "postgresql+nosuchdriver://u@localhost/db", str(not_a_db),
           f"sqlite:///{tmp_path / 'missing' / 'dir' / 'x.db'}", str(tmp_path)]
    for url in bad:
        with pytest.raises(StoreError) as info:
            LineageStore(url)
        assert "\n" not in str(info.value), url
        assert "database" in str(info.value), url
