"""evolve: regularized self-evolution of harnesses for frozen language models."""

from evolve.errors import EvolveError
from evolve.harness import Edit, Harness, apply_edits, save_harness
from evolve.harness import load_harness as load_harness_document
from evolve.runtime import Agent, AgentResult, load_harness

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentResult",
    "Edit",
    "EvolveError",
    "Harness",
    "__version__",
    "apply_edits",
    "load_harness",
    "load_harness_document",
    "save_harness",
]
