"""The lineage store's own test suite (tests/store/test_store_lineage.py), rerun against a real
PostgreSQL server: `db_url` below replaces the SQLite file of tests/conftest.py by a fresh database.
Skipped unless EVOLVE_TEST_PG_URL is set (.ci/run starts a server and sets it)."""

from __future__ import annotations

import pytest
from pg_support import needs_pg
from test_store_lineage import *  # noqa: F403  (the store tests and their fixtures, collected here again)

pytestmark = [pytest.mark.postgres, needs_pg]


@pytest.fixture
def db_url(pg_url: str) -> str:
    return pg_url
