"""The PostgreSQL server of the tests: EVOLVE_TEST_PG_URL (.ci/run starts one on 127.0.0.1)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

PG_URL = os.environ.get("EVOLVE_TEST_PG_URL", "")
SKIP_REASON = "needs EVOLVE_TEST_PG_URL (a PostgreSQL server; .ci/run starts one)"
needs_pg = pytest.mark.skipif(not PG_URL, reason=SKIP_REASON)


@contextmanager
def fresh_database() -> Iterator[str]:
    """A URL whose tables live in a new, empty schema of the server's database (dropped afterwards).

    A schema (selected through `search_path`) isolates a test as well as a database would, and is
    created in milliseconds instead of seconds.
    """
    name = f"evolve_t_{uuid.uuid4().hex[:16]}"
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT", pool_pre_ping=True)
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE SCHEMA "{name}"'))
        try:
            url = make_url(PG_URL)
            yield url.update_query_dict({"options": f"-csearch_path={name}"}).render_as_string(hide_password=False)
        finally:
            with admin.connect() as conn:
                conn.execute(text(f'DROP SCHEMA IF EXISTS "{name}" CASCADE'))
    finally:
        admin.dispose()
