"""Finding JSON values inside model text (code fences, surrounding prose, several objects)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)
_DECODER = json.JSONDecoder()


def json_values(text: str, starts: str = "{[") -> Iterator[Any]:
    """Every JSON value that starts at one of `starts` in `text`: the fenced blocks' first, then the
    whole text's in order (so a fenced value comes again in its place).

    >>> list(json_values('a {"x": 1} b ```json\\n[2]\\n``` {"y": 2}'))
    [[2], {'x': 1}, [2], {'y': 2}]
    """
    pattern = re.compile("[" + re.escape(starts) + "]")
    for chunk in [m.group(1) for m in _FENCE.finditer(text)] + [text]:
        for match in pattern.finditer(chunk):
            try:
                value, _ = _DECODER.raw_decode(chunk, match.start())
            except json.JSONDecodeError:
                continue
            yield value


def json_objects(text: str) -> Iterator[dict[str, Any]]:
    """Every JSON object in `text` (see `json_values`)."""
    return (v for v in json_values(text, "{") if isinstance(v, dict))
