"""The rubric judge on the real embedded model (short: one harness, one schema-constrained answer)."""

from __future__ import annotations

import asyncio

import pytest

from evolve.selection import rubric as rb

SMALL = rb.validate_rubric({"criteria": [
    {"id": "a", "criterion": "Gives an answer format.", "points": 2},
    {"id": "b", "criterion": "Asks for steps first.", "points": 1},
    {"id": "c", "criterion": "Asks to check the answer.", "points": 1},
    {"id": "d", "criterion": "Includes an example.", "points": 1},
    {"id": "e", "criterion": "Favors one answer always.", "points": -3},
]})


@pytest.mark.embedded
def test_embedded_judge_returns_schema_valid_hits():
    from evolve.backends import get_backend

    backend = get_backend("embedded", cache=False)
    [out] = asyncio.run(rb.score(backend, SMALL, ["Answer Yes or No."], max_tokens=48))
    assert not out.fallback  # the JSON-schema grammar makes the answer parse
    assert set(out.hits) == {"a", "b", "c", "d", "e"}
    assert 0.0 <= out.score <= 1.0
