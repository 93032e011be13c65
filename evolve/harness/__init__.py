"""Harness documents: model, on-disk format, typed edits, diff and rendering."""

from evolve.harness.diff import ComponentDiff, diff_harnesses
from evolve.harness.edits import Edit, apply_edits, parse_edits
from evolve.harness.io import load_harness, render_files, save_harness
from evolve.harness.model import (
    COMPONENTS,
    AnswerExtraction,
    Context,
    Control,
    Example,
    Flow,
    Harness,
    Memory,
    Section,
    Skill,
    Tool,
    canonical_json,
    content_hash,
)
from evolve.harness.render import agent_tools, render_messages, system_prompt

__all__ = [
    "COMPONENTS",
    "AnswerExtraction",
    "ComponentDiff",
    "Context",
    "Control",
    "Edit",
    "Example",
    "Flow",
    "Harness",
    "Memory",
    "Section",
    "Skill",
    "Tool",
    "agent_tools",
    "apply_edits",
    "canonical_json",
    "content_hash",
    "diff_harnesses",
    "load_harness",
    "parse_edits",
    "render_files",
    "render_messages",
    "save_harness",
    "system_prompt",
]
