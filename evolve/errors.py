"""User-facing errors.

Every error a user can cause (bad file, unknown name, missing extra, unreachable server) is an
`EvolveError`: the CLI prints its message as one line, without a traceback, and exits with
`exit_code` (2). Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class EvolveError(Exception):
    """An error caused by input or environment, shown to the user as one line."""

    exit_code = 2


class ConfigError(EvolveError):
    """Invalid configuration, option value, preset or file content."""


class HarnessError(EvolveError):
    """A harness folder or document is invalid."""


class EditError(EvolveError):
    """An edit cannot be applied to a harness (unknown target, collision, oversize...)."""


class BenchmarkError(EvolveError):
    """A benchmark or task file is invalid."""


class BackendError(EvolveError):
    """A model backend cannot be created or reached."""


class MissingExtraError(BackendError):
    """An optional dependency is not installed."""

    def __init__(self, feature: str, extra: str, module: str) -> None:
        super().__init__(
            f"{feature} needs the '{module}' package: pip install 'evolve-harness[{extra}]'"
        )


class StoreError(EvolveError):
    """Lineage store problem: unknown run or candidate, unusable database URL."""


class BudgetExhausted(EvolveError):
    """A typed budget has no room left for the requested spend."""


def one_line(message: str) -> str:
    """Collapse a message onto one line (errors are printed as exactly one line)."""
    return " ".join(str(message).split())


def describe_validation(exc: Exception, source: str) -> str:
    """One line for a pydantic ValidationError: `source: field.path: message` (first error)."""
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return one_line(f"{source}: {exc}")
    items = errors()
    if not items:
        return one_line(f"{source}: {exc}")
    first = items[0]
    loc = ".".join(str(p) for p in first.get("loc", ())) or "(root)"
    msg = first.get("msg", "invalid").removeprefix("Value error, ")
    more = f" (and {len(items) - 1} more)" if len(items) > 1 else ""
    return one_line(f"{source}: field '{loc}': {msg}{more}")
