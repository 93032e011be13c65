"""The typer application; each command group lives in its own module and registers here."""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperGroup

from evolve.errors import EvolveError, one_line


class _Group(TyperGroup):
    """Turns user errors, and file-system errors on a named path (an output folder that cannot be made,
    a file that cannot be written), into one line on stderr and exit code 2, without a traceback."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except EvolveError as exc:
            typer.echo(f"error: {one_line(str(exc))}", err=True)
            raise typer.Exit(exc.exit_code) from None
        except OSError as exc:
            if exc.filename is None:  # not about a path the user named (a socket, a bug): keep the traceback
                raise
            typer.echo(f"error: {one_line(f'{exc.filename}: {exc.strerror or exc}')}", err=True)
            raise typer.Exit(EvolveError.exit_code) from None


app = typer.Typer(
    name="evolve",
    cls=_Group,
    help="Regularized self-evolution of harnesses for frozen language models.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


def _register() -> None:
    from evolve.cli import eval_cmd, harness_cmd, inspect_cmd, models_cmd, report_cmd, run_cmd, train_cmd

    for module in (run_cmd, eval_cmd, inspect_cmd, report_cmd, models_cmd, train_cmd):
        module.register(app)
    app.add_typer(harness_cmd.app, name="harness")


_register()
