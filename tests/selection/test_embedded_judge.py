"""The rubric judge on the real embedded model (short: one harness, one schema-constrained answer)."""

from __future__ import annotations

import asyncio

import pytest

from evolve.selection import rubric as rb


@pytest.mark.embedded
def test_embedded_judge_returns_schema_valid_hits():
    from evolve.backends import get_backend

    backend = get_backend("embedded", cache=False)
    r = rb.fallback_rubric()
    [out] = asyncio.run(rb.score(backend, r, ["Answer with Yes or No."], max_tokens=96))
    assert not out.fallback  # the JSON-schema grammar makes the answer parse
    assert set(out.hits) == {c.id for c in r.criteria}
    assert 0.0 <= out.score <= 1.0
