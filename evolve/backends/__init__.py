"""Model backends behind one async, batch-first protocol (see `base.Backend`).

`get_backend(model)` turns a model string into a ready backend (with the persistent response cache
in front unless `cache=False`); `MeteredBackend` aggregates usage per (role, model) for the lineage
store. Heavy libraries (llama_cpp, litellm, vllm) are imported only by the backend that needs them.
"""

from __future__ import annotations

from evolve.backends.base import ROLES, Backend, Completion, Request, Role, Usage
from evolve.backends.cache import CachedBackend
from evolve.backends.metered import MeteredBackend
from evolve.backends.mock import MockBackend, MockExhausted
from evolve.backends.registry import BackendOptions, register_prefix, valid_forms

__all__ = [
    "ROLES",
    "Backend",
    "BackendOptions",
    "CachedBackend",
    "Completion",
    "MeteredBackend",
    "MockBackend",
    "MockExhausted",
    "Request",
    "Role",
    "Usage",
    "get_backend",
    "register_prefix",
    "valid_forms",
]


def get_backend(
    model: str = "embedded",
    *,
    api_base: str | None = None,
    cache: bool = True,
    timeout_s: float = 120.0,
    max_retries: int = 3,
    concurrency: int = 4,
) -> Backend:
    """The backend selected by `model` (forms: `valid_forms()`), behind the response cache unless `cache=False`.

    Raises `BackendError` for an unknown model string and `MissingExtraError` (naming the pip
    install) when the backend's optional dependency is missing.
    """
    from evolve.backends.registry import build_backend

    options = BackendOptions(api_base=api_base, timeout_s=timeout_s, max_retries=max_retries, concurrency=concurrency)
    backend = build_backend(model, options)
    return CachedBackend(backend) if cache else backend
