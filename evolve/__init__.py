"""evolve: regularized self-evolution of harnesses for frozen language models."""

from evolve.errors import EvolveError
from evolve.harness import Edit, Harness, apply_edits, save_harness
from evolve.harness import load_harness as load_harness_document

__version__ = "0.1.0"

__all__ = ["Edit", "EvolveError", "Harness", "__version__", "apply_edits", "load_harness_document", "save_harness"]
