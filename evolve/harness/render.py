"""Rendering a harness and a task input into chat messages.

`agent_tools` is what the model can call: the harness's tools plus the runtime's own `load-skill`
(skills shown on request) and `note` (memory on). With the text protocol they are described in the
system prompt; with native function calling they travel as definitions and the prompt omits them.
"""

from __future__ import annotations

from typing import Any

from evolve.harness.model import Harness, Tool
from evolve.templating import render

Message = dict[str, Any]
LOAD_SKILL = Tool(name="load-skill", description="Load the full instructions of one skill by its name.",
                  parameters={"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
                  implementation="builtin:load_skill")
NOTE = Tool(name="note", description="Write a short note to remember for later turns and tasks.",
            parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
            implementation="builtin:note")
RUNTIME_TOOLS = {LOAD_SKILL.name: LOAD_SKILL, NOTE.name: NOTE}
"""Tools the runtime answers itself (no sandbox: they only read the harness or keep notes)."""


def agent_tools(harness: Harness) -> tuple[Tool, ...]:
    """The harness's tools plus the runtime tools its settings switch on (a harness tool of the same name wins)."""
    extra = []
    if harness.skills and harness.control.skills_as == "on_request":
        extra.append(LOAD_SKILL)
    if harness.memory.scope != "off":
        extra.append(NOTE)
    names = {t.name for t in harness.tools}
    return harness.tools + tuple(t for t in extra if t.name not in names)


def system_prompt(harness: Harness, *, tool_text: bool = True) -> str:
    """The system prompt text (sections, skills, tools, and examples when `examples_as=system`).

    `tool_text=False` leaves the tool descriptions out (they go as native definitions instead).
    Rendered once per harness object and variant (harnesses are immutable) and reused for every task.
    """
    cached = harness._system_prompt.get(tool_text)
    if cached is None or cached[0] != id(harness):  # copies (model_copy) carry the original's id
        cached = harness._system_prompt[tool_text] = (id(harness), _render_system(harness, tool_text))
    return cached[1]


def _render_system(harness: Harness, tool_text: bool) -> str:
    examples = harness.examples if harness.control.examples_as == "system" else ()
    text = render(
        "system.md.j2",
        sections=harness.system,
        skills=sorted(harness.skills, key=lambda s: s.name),
        skills_on_request=harness.control.skills_as == "on_request",
        tools=agent_tools(harness) if tool_text else (),
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


def render_messages(harness: Harness, task_input: str, *, native_tools: bool = False) -> list[Message]:
    """Chat messages for one task: the system prompt (always explicit, possibly empty), the
    few-shot turns, then the task input as the last user message."""
    return [
        {"role": "system", "content": system_prompt(harness, tool_text=not native_tools)},
        *example_turns(harness),
        {"role": "user", "content": task_input},
    ]
