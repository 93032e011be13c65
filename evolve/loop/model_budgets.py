"""Proposer budgets from the proposer model: `context_chars`, `evidence_chars`, `proposer_max_tokens`.

A value the run sets (in a preset file or a `proposer:` override) always wins. The others come
from the proposer model's context window: a `profile` in the run file when it gives one, else
litellm's model map (`get_model_info(model)["max_input_tokens"]`, litellm imported only here and
only then). The small limits (6000 / 3000 / 512, for a 2048-token context) are for the embedded
model, the mock, fine-tuned `trained:` proposers, runs without an LLM proposer, and models litellm
does not know when the run gives no profile (a small prompt fits any model).

From a window of T input tokens (about 4 characters a token): the prompt may take half of it,
`context_chars` = 2·T (6000 to 120000), a quarter of that is evidence (3000 to 30000), and a reply
gets T/8 tokens, at most the model's output limit (512 to 4096).
"""

from __future__ import annotations

import contextlib
import io
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

SMALL = {"context_chars": 6000, "evidence_chars": 3000, "proposer_max_tokens": 512}
FIELDS = tuple(SMALL)
SMALL_MODELS = ("embedded", "mock", "trained:")
"""Model strings (prefixes) that get the small limits without asking litellm."""


class ModelProfile(BaseModel):
    """The proposer model's limits, for models litellm does not know (a run file's `profile`)."""

    model_config = ConfigDict(extra="forbid")

    context_tokens: int = Field(ge=1024, le=10_000_000)
    """Input tokens the model accepts."""
    max_output_tokens: int | None = Field(None, ge=16, le=1_000_000)
    """Most tokens of one reply (None: no limit beyond the derived one)."""


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def derive(context_tokens: int, max_output_tokens: int | None = None) -> dict[str, int]:
    """The three budgets for a context window (see module docstring)."""
    context = _clamp(2 * context_tokens, 6000, 120_000)
    reply = min(context_tokens // 8, max_output_tokens or 4096)
    return {"context_chars": context, "evidence_chars": _clamp(context // 4, 3000, 30_000),
            "proposer_max_tokens": _clamp(reply, 512, 4096)}


def _inner_model(model: str) -> str:
    """The model a `faulty:SPEC:MODEL` wrapper holds (the model string itself otherwise)."""
    while model.startswith("faulty:") and model.count(":") >= 2:
        model = model.split(":", 2)[2]
    return model


def litellm_window(model: str) -> tuple[int, int | None] | None:
    """(max input tokens, max output tokens) from litellm's model map, None when it has no entry.

    The map is litellm's local copy (no download at import), and what litellm prints about an
    unknown model is kept off stdout (which may carry a run's JSON)."""
    try:
        from evolve.backends.litellm_backend import import_litellm

        with contextlib.redirect_stdout(io.StringIO()):
            info = import_litellm().get_model_info(model)
    except Exception:  # unmapped models raise; litellm missing is the same: unknown
        return None
    tokens = info.get("max_input_tokens") or info.get("max_tokens")
    return (int(tokens), info.get("max_output_tokens")) if tokens else None


def window(model: str | None, profile: ModelProfile | None) -> tuple[dict[str, int], str]:
    """The derived budgets of the proposer model and where they come from."""
    if model is None:
        return dict(SMALL), "no LLM proposer: small limits"
    if profile is not None:
        return derive(profile.context_tokens, profile.max_output_tokens), \
            f"run profile ({profile.context_tokens} context tokens)"
    if _inner_model(model).startswith(SMALL_MODELS):
        return dict(SMALL), f"{model}: small limits"
    found = litellm_window(model)
    if found is None:
        return dict(SMALL), f"{model} is not in litellm's model map and the run has no profile: small limits"
    return derive(*found), f"litellm model info ({found[0]} context tokens)"


def resolve(loop: Any, model: str | None, profile: ModelProfile | None) -> tuple[Any, dict[str, Any]]:
    """`loop` with its unset budgets filled in, and what was resolved (values, source, explicit fields)."""
    explicit = [name for name in FIELDS if getattr(loop, name) is not None]
    derived, source = window(model, profile) if len(explicit) < len(FIELDS) else ({}, "run settings")
    values = {name: getattr(loop, name) if name in explicit else derived[name] for name in FIELDS}
    return loop.model_copy(update=values), {**values, "source": source, "explicit": explicit}
