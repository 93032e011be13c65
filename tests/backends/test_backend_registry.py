"""Model strings, missing extras, the reserved `trained:` prefix and `evolve models`."""

from __future__ import annotations

import importlib.util

import pytest

from evolve.backends import MockBackend, get_backend, register_prefix, valid_forms
from evolve.backends.cache import CachedBackend
from evolve.backends.catalog import backend_catalog
from evolve.backends.registry import unregister_prefix
from evolve.errors import BackendError, MissingExtraError


def test_mock_string_gives_the_default_mock():
    backend = get_backend("mock", cache=False)
    assert isinstance(backend, MockBackend) and backend.name == "mock"
    assert isinstance(get_backend("mock"), CachedBackend)


@pytest.mark.parametrize("model", ["nonsense", "", "mock:x", "embeded", "trained", "/gpt-4"])
def test_unknown_model_string_lists_valid_forms(model):
    with pytest.raises(BackendError) as info:
        get_backend(model)
    message = str(info.value)
    assert "valid forms" in message
    for form in ("embedded", "embedded:PATH.gguf", "mock", "trained:DIR", "<provider>/<model>"):
        assert form in message


def test_registered_prefix_selects_its_backend():
    register_prefix("custom", lambda rest, options: MockBackend(name=f"custom:{rest}"), "custom:NAME")
    try:
        assert get_backend("custom:abc", cache=False).name == "custom:abc"
        assert "custom:NAME" in valid_forms()
    finally:
        unregister_prefix("custom")
    with pytest.raises(BackendError, match="valid forms"):
        get_backend("custom:abc")


def test_reserved_prefix_explains_it_is_unavailable():
    from evolve.backends.registry import _PREFIXES, _trained

    saved = _PREFIXES["trained"]
    register_prefix("trained", _trained, "trained:DIR", reserved=True)
    try:
        with pytest.raises(BackendError, match=r"trained:some/dir.*not available"):
            get_backend("trained:some/dir")
        assert next(r for r in backend_catalog() if r.name == "trained").install == "not available in this version"
    finally:
        _PREFIXES["trained"] = saved


def _hide(monkeypatch, *modules: str) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in modules else real(name, *a))


def test_missing_embedded_extra_names_the_pip_install(monkeypatch):
    _hide(monkeypatch, "llama_cpp")
    with pytest.raises(MissingExtraError, match=r"pip install 'evolve-harness\[embedded\]'"):
        get_backend("embedded")
    row = next(r for r in backend_catalog() if r.name == "embedded")
    assert not row.available and "evolve-harness[embedded]" in row.install


def test_missing_vllm_extra_names_the_pip_install(monkeypatch):
    from evolve.backends.vllm_server import vllm_executable

    _hide(monkeypatch, "vllm")
    with pytest.raises(MissingExtraError, match=r"pip install 'evolve-harness\[vllm\]'"):
        vllm_executable()
    assert next(r for r in backend_catalog() if r.name == "vllm").install == "pip install 'evolve-harness[vllm]'"


def test_api_base_is_rejected_for_embedded():
    with pytest.raises(BackendError, match="--api-base applies only to litellm"):
        get_backend("embedded", api_base="http://127.0.0.1:8000/v1")


def test_catalog_lists_every_backend():
    rows = {r.name: r for r in backend_catalog()}
    assert list(rows) == ["embedded", "mock", "litellm", "vllm", "trained"]
    assert rows["mock"].available and rows["mock"].install == ""
    assert all(r.available == (r.install == "") for r in rows.values())
