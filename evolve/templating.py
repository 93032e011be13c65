"""Jinja2 rendering of the package's own templates and of user/data templates.

All prompts are jinja2 files rendered with StrictUndefined: a missing variable is an error, never
an empty string.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from evolve.errors import ConfigError

_TEMPLATES = Path(__file__).resolve().parent / "templates"


@cache
def _env(folder: str) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(folder),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        autoescape=False,
    )


def render(name: str, folder: str | Path | None = None, /, **variables: Any) -> str:
    """Render template `name` from `folder` (default: the package's templates) with StrictUndefined."""
    base = str(folder or _TEMPLATES)
    try:
        return _env(base).get_template(name).render(**variables).strip() + "\n"
    except jinja2.TemplateNotFound:
        raise ConfigError(f"template {name!r} not found in {base}") from None
    except jinja2.UndefinedError as exc:
        raise ConfigError(f"template {name}: {exc.message}") from None
    except jinja2.TemplateSyntaxError as exc:
        raise ConfigError(f"{exc.filename or name}: line {exc.lineno}: {exc.message}") from None
