"""Terminal rendering helpers (rich) shared by commands."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from evolve.harness.diff import ComponentDiff

console = Console()
err_console = Console(stderr=True)


def print_diff(diffs: list[ComponentDiff]) -> None:
    """Colored unified diff, one block per component."""
    if not diffs:
        console.print("no differences")
        return
    for d in diffs:
        console.rule(f"{d.component} ({d.status})")
        for line in d.lines:
            style = "green" if line.startswith("+") else "red" if line.startswith("-") else "cyan" \
                if line.startswith("@@") else ""
            console.print(Text(line, style=style))
