"""Reading YAML configuration files (run files, presets) with one-line errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from evolve.errors import ConfigError


def read_mapping(path: Path, what: str) -> dict[str, Any]:
    """The YAML mapping in `path` (an empty file is {}); errors name the file, the line and `what`."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise ConfigError(f"{path}: invalid YAML{where} ({problem})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of {what}")
    return data
