"""Model strings -> backends.

A model string is one of:

- `embedded` or `embedded:PATH.gguf`: the in-process llama.cpp backend (SmolLM2 by default);
- `mock`: a `MockBackend` with its default answer; `mock:latency=SECONDS` answers after that delay
  (at most `concurrency` calls at once), a stand-in for a model server;
- `<prefix>:<rest>` for any prefix registered with `register_prefix` (`trained:DIR` is reserved for a
  fine-tuned proposer);
- `<provider>/<model>`: any litellm provider string (`openai/gpt-4.1-mini`, `anthropic/...`,
  `ollama/...`, `hosted_vllm/<model>` with an api_base; several api_bases, comma-separated, are
  load-balanced).

Factories import their heavy dependencies only when chosen.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from evolve.backends.base import Backend
from evolve.backends.mock import MockBackend
from evolve.backends.redact import redact
from evolve.errors import BackendError


@dataclass(frozen=True)
class BackendOptions:
    """Options that apply to every backend a model string can select."""

    api_base: str | None = None
    """Server URL(s) for litellm models; comma-separated URLs are load-balanced."""
    timeout_s: float = 120.0
    """Per-call timeout."""
    max_retries: int = 3
    """Retries of a transient failure (429, 5xx, connection error, timeout)."""
    concurrency: int = 4
    """Requests in flight at once."""


PrefixFactory = Callable[[str, BackendOptions], Backend]
"""Builds a backend from the part of the model string after `prefix:`."""


@dataclass(frozen=True)
class PrefixEntry:
    factory: PrefixFactory
    form: str
    """How the form is written in help and error messages, e.g. `trained:DIR`."""
    reserved: bool = False
    """A placeholder that only explains that the form is not available yet."""


_PREFIXES: dict[str, PrefixEntry] = {}


def register_prefix(prefix: str, factory: PrefixFactory, form: str, *, reserved: bool = False) -> None:
    """Make `<prefix>:<rest>` select the backend `factory(rest, options)` builds (replaces a reservation)."""
    if not prefix.isidentifier():
        raise ValueError(f"backend prefix must be an identifier, got {prefix!r}")
    _PREFIXES[prefix] = PrefixEntry(factory, form, reserved)


def registered_prefixes(include_reserved: bool = True) -> list[str]:
    """The registered prefixes (reserved placeholders only if asked)."""
    return sorted(p for p, entry in _PREFIXES.items() if include_reserved or not entry.reserved)


def unregister_prefix(prefix: str) -> None:
    _PREFIXES.pop(prefix, None)


def valid_forms() -> list[str]:
    """The model-string forms, for help texts and error messages."""
    prefixed = [entry.form for prefix, entry in sorted(_PREFIXES.items()) if prefix != "embedded"]
    litellm = "<provider>/<model> (litellm, e.g. openai/gpt-4.1-mini)"
    return ["embedded", "embedded:PATH.gguf", "mock", *prefixed, litellm]


def _unknown(model: str, why: str) -> BackendError:
    return BackendError(f"unknown model string {redact(model)!r} ({why}); valid forms: {', '.join(valid_forms())}")


def _embedded(rest: str, options: BackendOptions) -> Backend:
    from evolve.backends.embedded import EmbeddedBackend

    if options.api_base:
        raise BackendError("--api-base applies only to litellm models (<provider>/<model>), not to 'embedded'")
    if not rest:
        return EmbeddedBackend()
    return EmbeddedBackend(path=rest, name=f"embedded:{rest}")


def _trained(rest: str, options: BackendOptions) -> Backend:
    raise BackendError(
        f"'trained:{rest}' (a fine-tuned proposer) is not available in this installation; "
        "valid forms: " + ", ".join(f for f in valid_forms() if not f.startswith("trained"))
    )


register_prefix("embedded", _embedded, "embedded:PATH.gguf")
register_prefix("trained", _trained, "trained:DIR", reserved=True)


def _faulty(rest: str, options: BackendOptions) -> Backend:
    from evolve.backends.faults import faulty_factory

    return faulty_factory(rest, options)


def _mock(rest: str, options: BackendOptions) -> Backend:
    from evolve.backends.mock import mock_from_spec

    try:
        return mock_from_spec(rest, concurrency=options.concurrency)
    except BackendError as exc:
        raise _unknown(f"mock:{rest}", str(exc)) from None


register_prefix("mock", _mock, "mock:latency=SECONDS")
register_prefix("faulty", _faulty, "faulty:RATE:MODEL (fault injection for testing)")


def build_backend(model: str, options: BackendOptions) -> Backend:
    """The uncached backend selected by `model` (see the module docstring for the forms)."""
    model = model.strip()
    if not model:
        raise _unknown(model, "empty")
    if model == "embedded":
        return _embedded("", options)
    if model == "mock":
        return MockBackend()
    prefix, sep, rest = model.partition(":")
    if sep and "/" not in prefix and prefix in _PREFIXES:
        if not rest:
            raise _unknown(model, f"nothing after '{prefix}:'")
        return _PREFIXES[prefix].factory(rest, options)
    provider, slash, name = model.partition("/")
    if slash and provider and name and ":" not in provider:
        from evolve.backends.litellm_backend import make_litellm_backend

        return make_litellm_backend(model, options)
    raise _unknown(model, "not a known prefix and not <provider>/<model>")


from evolve.backends import trained as _trained_backend  # noqa: E402,F401  (registers trained:DIR)
