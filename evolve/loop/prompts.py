"""Prompt templates of the loop: shipped in `proposers/` (and `selectors/` for the critic), or a
user folder given per run; three steps kept apart: render, call, parse."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from evolve.jsontext import json_values
from evolve.paths import data_dir
from evolve.templating import render


def template_folder(kind: str = "proposers", folder: str | Path | None = None) -> Path:
    """The folder templates are read from: `folder` when given, else the shipped data folder `kind`."""
    return Path(folder) if folder is not None else data_dir(kind)


def render_prompt(name: str, folder: str | Path | None = None, kind: str = "proposers", **variables: Any) -> str:
    """Render template `name` (StrictUndefined) from `folder` or the shipped folder `kind`."""
    base = template_folder(kind, folder)
    if folder is not None and not (base / name).is_file():
        base = data_dir(kind)  # a user folder may override only some templates
    return re.sub(r"\n{3,}", "\n\n", render(name, base, **variables))




def extract_json(text: str) -> Any:
    """The first JSON object or array in a model reply (code fences and surrounding prose ignored).

    Raises ValueError with a short reason when there is none.

    >>> extract_json('Sure! ```json\\n{"a": 1}\\n``` done')
    {'a': 1}
    """
    for value in json_values(text):
        return value
    if not text.strip():
        raise ValueError("the reply is empty")
    raise ValueError("the reply contains no valid JSON object")
