"""Database URLs for the reliability tests: a fresh SQLite file, or a fresh database on the PostgreSQL
server named by EVOLVE_TEST_PG_URL (the `postgresql` cases are skipped when it is not set)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pg_support import PG_URL, SKIP_REASON, fresh_database, needs_pg


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A new, empty PostgreSQL database."""
    if not PG_URL:
        pytest.skip(SKIP_REASON)
    with fresh_database() as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=[pytest.mark.postgres, needs_pg])])
def store_url(request: pytest.FixtureRequest, tmp_path) -> str:
    """The same store behaviour on SQLite (always) and on PostgreSQL (when a server is configured)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.db'}"
    return request.getfixturevalue("pg_url")
