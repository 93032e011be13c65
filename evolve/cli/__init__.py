"""The `evolve` command line: a thin typer layer over the Python API.

User errors (`EvolveError`) are printed as one line without a traceback and exit with code 2.
"""

from __future__ import annotations

import sys

from evolve.cli.app import app
from evolve.errors import EvolveError, one_line


def main() -> None:
    """Console entry point."""
    try:
        app(standalone_mode=True)
    except EvolveError as exc:
        print(f"error: {one_line(str(exc))}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)


__all__ = ["app", "main"]
