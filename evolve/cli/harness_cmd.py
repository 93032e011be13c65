"""`evolve harness validate|diff|render|format`: work on harness folders without a database."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evolve.cli.common import console
from evolve.errors import HarnessError
from evolve.harness import diff_harnesses, load_harness, render_messages, save_harness
from evolve.harness.io import noncanonical_files
from evolve.paths import resolve_named
from evolve.report.text import print_diff

app = typer.Typer(help="Validate, compare, render and format harness folders.", no_args_is_help=True)

HarnessArg = Annotated[str, typer.Argument(help="Harness folder, JSON bundle, or the name of a shipped harness.")]


def load(ref: str):
    return load_harness(resolve_named("harnesses", ref, marker="harness.yaml"))


@app.command("validate")
def validate(path: HarnessArg) -> None:
    """Check a harness folder; print its version id and component counts."""
    h = load(path)
    typer.echo(
        f"ok {h.name} version {h.version}: {len(h.system)} sections, {len(h.skills)} skills, "
        f"{len(h.examples)} examples, {len(h.tools)} tools"
    )


@app.command("diff")
def diff(a: HarnessArg, b: HarnessArg) -> None:
    """Per-component unified diff between two harnesses."""
    print_diff(diff_harnesses(load(a), load(b), a, b))


@app.command("render")
def render(path: HarnessArg, task_input: Annotated[str, typer.Argument(help="Task input text.")]) -> None:
    """Print the chat messages the harness produces for one task input."""
    for message in render_messages(load(path), task_input):
        console.rule(message["role"])
        console.print(message["content"], markup=False, highlight=False)


@app.command("format")
def format_cmd(
    folders: Annotated[list[Path], typer.Argument(help="Harness folders to rewrite in canonical form.")],
    check: Annotated[bool, typer.Option("--check", help="Change nothing; exit 1 if one is not canonical.")] = False,
) -> None:
    """Rewrite harness folders in the canonical form that saving produces (byte-stable, hash-stable)."""
    dirty = False
    for folder in folders:
        if not folder.is_dir():
            raise HarnessError(f"{folder}: not a harness folder (format rewrites folders, not names or bundles)")
        files = noncanonical_files(folder)
        if not files:
            typer.echo(f"{folder}: canonical")
            continue
        dirty = True
        if check:
            typer.echo(f"{folder}: not canonical: {', '.join(files)}")
        else:
            save_harness(load_harness(folder), folder)
            typer.echo(f"{folder}: rewrote {', '.join(files)}")
    if check and dirty:
        raise typer.Exit(1)
