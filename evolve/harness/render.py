"""Rendering a harness and a task input into chat messages."""

from __future__ import annotations

from evolve.harness.model import Harness
from evolve.templating import render

Message = dict[str, str]


def system_prompt(harness: Harness) -> str:
    """The system prompt text (sections, skills, tools, and examples when `examples_as=system`).

    Rendered once per harness object (harnesses are immutable) and reused for every task.
    """
    cached = harness._system_prompt
    if cached is None or cached[0] != id(harness):  # copies (model_copy) carry the original's id
        cached = harness._system_prompt = (id(harness), _render_system(harness))
    return cached[1]


def _render_system(harness: Harness) -> str:
    examples = harness.examples if harness.control.examples_as == "system" else ()
    text = render(
        "system.md.j2",
        sections=harness.system,
        skills=sorted(harness.skills, key=lambda s: s.name),
        tools=harness.tools,
        examples=examples,
    )
    return text.strip()


def example_turns(harness: Harness) -> list[Message]:
    if harness.control.examples_as != "turns":
        return []
    turns: list[Message] = []
    for ex in harness.examples:
        answer = f"{ex.rationale}\n{ex.output}" if ex.rationale else ex.output
        turns += [{"role": "user", "content": ex.input}, {"role": "assistant", "content": answer}]
    return turns


def render_messages(harness: Harness, task_input: str) -> list[Message]:
    """Chat messages for one task: the system prompt (always explicit, possibly empty), the
    few-shot turns, then the task input as the last user message."""
    return [
        {"role": "system", "content": system_prompt(harness)},
        *example_turns(harness),
        {"role": "user", "content": task_input},
    ]
