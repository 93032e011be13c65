"""evolve: regularized self-evolution of harnesses for frozen language models."""

from evolve.errors import EvolveError
from evolve.harness import Edit, Harness, apply_edits, save_harness
from evolve.harness import load_harness as load_harness_document
from evolve.runtime import Agent, AgentResult, PromptExport, load_harness, load_prompt

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentResult",
    "Edit",
    "EvolveError",
    "Harness",
    "PromptExport",
    "__version__",
    "apply_edits",
    "load_harness",
    "load_harness_document",
    "load_prompt",
    "save_harness",
]
