"""Reading a rollout's trajectory: counts, the decisive steps, the workspace changes, and text for people.

A trajectory (stored as JSON with every rollout) is a list of steps: the task message (`user`),
`assistant` turns (`turn`, `content`, `tokens_in`, `tokens_out`, `tool_calls`), `tool` observations
(`name`, `ok`, `seconds`, `content`), runtime prompts (`user` with `kind` plan/act/verify), a `limit`
step when one was hit, then the `verifier`'s detail, the `workspace` changes and the samples' `vote`.
Older single-turn trajectories (task, assistant, verifier) read the same way.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

MAX_DIFF = 2500
MAX_FILE = 200_000


def counts(trajectory: Any) -> tuple[int, int]:
    """(turns, tool calls) of a trajectory."""
    steps = trajectory if isinstance(trajectory, list) else []
    turns = sum(1 for s in steps if isinstance(s, dict) and s.get("role") == "assistant")
    calls = sum(1 for s in steps if isinstance(s, dict) and s.get("role") == "tool")
    return turns, calls


def _text(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_FILE:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _files(root: Path) -> dict[str, Path]:
    if not root.is_dir():
        return {}
    return {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def workspace_changes(source: str | Path | None, final: Path) -> str:
    """Unified diffs of the text files the rollout changed, added or removed (empty when none), capped."""
    before = _files(Path(source)) if source else {}
    after = _files(final)
    parts = []
    for rel in sorted(before.keys() | after.keys()):
        old = _text(before[rel]) if rel in before else ""
        new = _text(after[rel]) if rel in after else ""
        if old == new:
            continue
        if old is None or new is None:
            parts.append(f"{rel}: binary or large file changed")
            continue
        parts += difflib.unified_diff(old.splitlines(), new.splitlines(), f"a/{rel}", f"b/{rel}", lineterm="", n=1)
    text = "\n".join(parts)
    return text if len(text) <= MAX_DIFF else text[:MAX_DIFF] + "\n... (diff cut)"


def _clip(text: Any, limit: int) -> str:
    value = " ".join(str(text or "").split())
    return value if len(value) <= limit else value[: limit - 1] + "…"


def decisive_steps(trajectory: Any, *, last: int = 4, limit: int = 160) -> list[str]:
    """Short lines for the analyst: failed tool calls, a hit limit, and the last `last` actions."""
    steps = [s for s in (trajectory if isinstance(trajectory, list) else []) if isinstance(s, dict)]
    actions = [s for s in steps if s.get("role") in ("assistant", "tool", "limit")]
    lines = []
    for s in actions:
        if s.get("role") == "tool" and not s.get("ok", True):
            lines.append(f"tool {s.get('name')} failed: {_clip(s.get('content'), limit)}")
        elif s.get("role") == "limit":
            lines.append(f"limit {s.get('kind')}: {_clip(s.get('content'), limit)}")
    for s in actions[-last:]:
        if s.get("role") == "assistant":
            calls = ", ".join(str(c.get("name")) for c in s.get("tool_calls") or [])
            lines.append(f"turn {s.get('turn')}: " + (f"called {calls}" if calls else
                                                         f"answered {_clip(s.get('content'), limit)}"))
        elif s.get("role") == "tool" and s.get("ok", True):
            lines.append(f"tool {s.get('name')} -> {_clip(s.get('content'), limit)}")
    return list(dict.fromkeys(lines))[: last + 3]


def verifier_detail(trajectory: Any) -> str:
    """The verifier's own output of a rollout (failing assertion, diff, expected answer), if stored."""
    steps = trajectory if isinstance(trajectory, list) else []
    return next((str(s.get("content") or "") for s in reversed(steps)
                 if isinstance(s, dict) and s.get("role") == "verifier"), "")


def render_text(trajectory: Any, *, width: int = 2000) -> list[tuple[str, str]]:
    """(heading, body) pairs for printing a trajectory step by step."""
    out = []
    for s in trajectory if isinstance(trajectory, list) else []:
        if not isinstance(s, dict):
            continue
        role = str(s.get("role"))
        body = str(s.get("content") or "")
        if role == "assistant":
            head = (f"turn {s.get('turn', '?')} · assistant · {s.get('tokens_in', '?')} in / "
                    f"{s.get('tokens_out', '?')} out")
            calls = s.get("tool_calls") or []
            if calls:
                body += "".join(f"\n→ {c.get('name')}({_clip(c.get('arguments'), 300)})" for c in calls)
        elif role == "tool":
            head = f"tool {s.get('name')} · {'ok' if s.get('ok', True) else 'error'} · {s.get('seconds', 0)}s"
        elif role == "user" and s.get("kind"):
            head = f"runtime · {s.get('kind')}"
        else:
            head = role
        out.append((head, body if len(body) <= width else body[:width] + f"\n... ({len(body) - width} more)"))
    return out
