"""How command arguments find data folders, shipped items and the default database."""

from __future__ import annotations

from pathlib import Path

import pytest

from evolve.errors import ConfigError
from evolve.paths import DATA_FOLDERS, cache_dir, data_dir, default_db_url, home, resolve_named


@pytest.mark.parametrize("name", DATA_FOLDERS)
def test_data_dirs_exist(name: str) -> None:
    folder = data_dir(name)
    assert folder.is_dir() and folder.name == name


def test_unknown_data_folder_lists_valid_ones() -> None:
    with pytest.raises(ConfigError, match="valid: harnesses, benchmarks, proposers, selectors"):
        data_dir("plugins")


def test_shipped_name_resolves_inside_the_data_folder() -> None:
    assert resolve_named("harnesses", "minimal", marker="harness.yaml") == data_dir("harnesses") / "minimal"


def test_existing_path_wins_over_a_shipped_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "minimal").mkdir()
    monkeypatch.chdir(tmp_path)
    assert resolve_named("harnesses", "minimal", marker="harness.yaml") == Path("minimal")


def test_unknown_name_lists_shipped_items_without_readme() -> None:
    with pytest.raises(ConfigError) as info:
        resolve_named("harnesses", "nope", marker="harness.yaml")
    message = str(info.value)
    assert "'nope' is neither a path nor a shipped harness" in message
    assert "minimal" in message and "structured" in message and "README" not in message


def test_outputs_follow_evolve_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVOLVE_HOME", str(tmp_path / "h"))
    monkeypatch.delenv("EVOLVE_CACHE_DIR", raising=False)
    assert home() == tmp_path / "h"
    assert default_db_url() == f"sqlite:///{tmp_path / 'h' / 'evolve.db'}"
    assert cache_dir() == tmp_path / "h" / "cache"
    monkeypatch.setenv("EVOLVE_CACHE_DIR", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"
