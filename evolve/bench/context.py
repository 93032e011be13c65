"""The agent's memory and context management, as the runtime applies them to each request.

- `Notebook`: notes written with the `note` tool, under the harness's `memory` policy (`append` keeps
  the latest `max_notes`, `replace` keeps the newest only; each note cut to `max_chars`). The runtime
  keeps one notebook per conversation (`scope: turns`) or one per rollout batch (`scope: batch`) and
  shows the notes in the system message of every later request.
- `fit_context`: when a conversation's estimated size (characters / 4) exceeds the harness's
  `context.budget_tokens`, old tool observations (all but the `keep_last` newest) are shortened,
  oldest first, until it fits: replaced by a marker (`truncate`) or cut to their first and last lines
  (`summarize`). The stored trajectory always keeps the full text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evolve.harness.model import Context, Memory

CHARS_PER_TOKEN = 4
ELIDED = "[old tool output removed to save context]"


def estimate_tokens(messages: list[dict[str, Any]]) -> int:
    """A model-free token estimate: characters / 4 over contents and tool-call arguments."""
    chars = 0
    for m in messages:
        chars += len(m.get("content") or "")
        for call in m.get("tool_calls") or ():
            chars += len(str(call.get("function", {}).get("arguments", "")))
    return chars // CHARS_PER_TOKEN


def _summary(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) <= 2:
        return text if len(text) <= 200 else text[:200] + " …"
    return f"{lines[0][:200]}\n… ({len(lines) - 2} lines not shown) …\n{lines[-1][:200]}"


def fit_context(messages: list[dict[str, Any]], observations: list[int], policy: Context) -> list[dict[str, Any]]:
    """`messages` shortened per `policy` (see the module docstring); `observations` are the indices of
    tool observations, oldest first. Returns a new list; the input is not changed."""
    if policy.strategy == "keep" or estimate_tokens(messages) <= policy.budget_tokens:
        return messages
    out = [dict(m) for m in messages]
    old = observations[:-policy.keep_last] if policy.keep_last else list(observations)
    for index in old:
        text = out[index].get("content") or ""
        out[index]["content"] = ELIDED if policy.strategy == "truncate" else _summary(text)
        if estimate_tokens(out) <= policy.budget_tokens:
            break
    return out


@dataclass
class Notebook:
    """Notes under a memory policy (see the module docstring)."""

    policy: Memory
    notes: list[str] = field(default_factory=list)

    def write(self, text: Any) -> str:
        """Keep a note; the reply the agent sees."""
        note = " ".join(str(text or "").split())[: self.policy.max_chars]
        if not note:
            return "error: a note needs text"
        if self.policy.update == "replace":
            self.notes = [note]
        else:
            self.notes = [*self.notes, note][-self.policy.max_notes:]
        return f"noted ({len(self.notes)} note(s) kept)"
