"""The data folder `selectors/` must never shadow the standard library's `selectors` module.

A `selectors/__init__.py` at the repository root would make `import asyncio` and `import subprocess`
fail for anything started from the root (pytest, `python -m evolve`).
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
STDLIB_NAMES = ("selectors", "asyncio", "subprocess", "types", "typing", "json", "random", "string", "copy",
                "select", "signal", "token", "code", "profile", "test")


def test_asyncio_and_subprocess_import_from_the_repository_root() -> None:
    code = "import asyncio, subprocess, selectors; print(selectors.__file__)"
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    found = Path(proc.stdout.strip()).resolve()
    assert found.is_relative_to(Path(sysconfig.get_paths()["stdlib"]).resolve()), found
    assert not found.is_relative_to(ROOT), found


def test_no_package_named_like_a_stdlib_module_at_the_root() -> None:
    assert not (ROOT / "selectors" / "__init__.py").exists()
    for name in STDLIB_NAMES:
        assert not (ROOT / name / "__init__.py").exists(), name
        assert not (ROOT / f"{name}.py").exists(), name


@pytest.mark.parametrize("folder", ["harnesses", "benchmarks", "proposers", "selectors"])
def test_data_folders_are_not_packages(folder: str) -> None:
    assert not list((ROOT / folder).rglob("__init__.py")), folder
