"""Per-component diff between two harness versions."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass

from evolve.harness.model import Harness, control_data


@dataclass(frozen=True)
class ComponentDiff:
    """Unified diff of one component (`system/<name>`, `skill/<name>`, `examples`, `control`, `tools`,
    `memory`, `context`)."""

    component: str
    status: str
    """`added`, `removed` or `changed`."""
    lines: tuple[str, ...]


def _component_texts(h: Harness) -> dict[str, str]:
    texts = {f"system/{s.name}": s.text + "\n" for s in h.system}
    for skill in h.skills:
        texts[f"skill/{skill.name}"] = f"description: {skill.description}\n\n{skill.body}\n"
    if h.examples:
        texts["examples"] = "".join(
            json.dumps(e.model_dump(exclude_none=True), ensure_ascii=False) + "\n" for e in h.examples
        )
    texts["control"] = json.dumps(control_data(h.control), indent=2, sort_keys=True) + "\n"
    if h.tools:
        texts["tools"] = json.dumps([t.model_dump(mode="json") for t in h.tools], indent=2) + "\n"
    for key in ("memory", "context"):
        value = getattr(h, key)
        if value != type(value)():
            texts[key] = json.dumps(value.model_dump(mode="json"), indent=2, sort_keys=True) + "\n"
    return texts


def diff_harnesses(a: Harness, b: Harness, label_a: str = "a", label_b: str = "b") -> list[ComponentDiff]:
    """Diffs of every component that differs between `a` and `b`, in a stable order."""
    ta, tb = _component_texts(a), _component_texts(b)
    result = []
    for key in sorted(set(ta) | set(tb)):
        old, new = ta.get(key, ""), tb.get(key, "")
        if old == new:
            continue
        status = "added" if key not in ta else "removed" if key not in tb else "changed"
        lines = difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            fromfile=f"{label_a}/{key}",
            tofile=f"{label_b}/{key}",
        )
        result.append(ComponentDiff(key, status, tuple(line.rstrip("\n") for line in lines)))
    return result
