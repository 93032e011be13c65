"""The tool critic: tools are a trust boundary, so edits may choose and describe tools, never name code.

`ToolCritic` rejects a candidate when an edit adds a tool whose implementation is not on the run's
allow-list (`evolve.bench.tools.ToolRegistry`), or when any tool keeps its name but gets another
implementation (a `replace` that sets `implementation`, or a remove and re-add). Descriptions,
names and parameter schemas stay editable. It runs first in the critic chain. Under a preset that
switches the critic off (the unregularized ablation) such a candidate is evaluated, but the runtime
refuses implementations outside the allow-list at call time, so its tool never runs.
"""

from __future__ import annotations

from typing import Any

from evolve.bench.tools import ToolRegistry
from evolve.harness import Edit, Harness
from evolve.loop.critic import CriticVerdict


def tool_findings(parent: Harness, candidate: Harness, edits: list[Edit], registry: ToolRegistry) -> list[str]:
    """What the edits do to tool implementations that is not allowed (empty when nothing)."""
    found = []
    for position, edit in enumerate(edits, start=1):
        if edit.component != "tool" or not isinstance(edit.value, dict):
            continue
        implementation = edit.value.get("implementation")
        if edit.op == "replace" and implementation is not None:
            old = parent.tool(str(edit.target))
            if old is None or old.implementation != implementation:
                found.append(f"edit {position} ({edit.summary()}) changes a tool implementation to {implementation!r}")
        elif edit.op == "add" and implementation is not None and not registry.allows(str(implementation)):
            found.append(f"edit {position} ({edit.summary()}) names implementation {implementation!r}, which is not "
                         f"on the allow-list")
    before = {t.name: t.implementation for t in parent.tools}
    for tool in candidate.tools:
        if tool.name in before and before[tool.name] != tool.implementation:
            found.append(f"tool {tool.name!r} changes implementation {before[tool.name]!r} -> {tool.implementation!r}")
        elif tool.name not in before and not registry.allows(tool.implementation):
            found.append(f"tool {tool.name!r} names implementation {tool.implementation!r}, which is not on the "
                         f"allow-list")
    return list(dict.fromkeys(found))


class ToolCritic:
    """Rejects edits to tool implementations (see the module docstring); implements `Critic`."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    async def review(self, parent: Harness, candidate: Harness, edits: list[Edit], ctx: Any = None) -> CriticVerdict:
        found = tool_findings(parent, candidate, edits, self.registry)
        if found:
            return CriticVerdict(passed=False, kind="tools", reason=found[0], details={"findings": found})
        return CriticVerdict(passed=True, kind="tools", reason="")
