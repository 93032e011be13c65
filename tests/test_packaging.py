"""The wheel ships the data folders, and an installed (non-editable) copy finds them from anywhere.

Builds the wheel with the installed build backend (hatchling, part of the `dev` extra), installs it
with `pip install --no-deps --target`, and runs the CLI from an unrelated directory with only that
target on PYTHONPATH ahead of the environment's packages.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA_FOLDERS = ("harnesses", "benchmarks", "proposers", "selectors")


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: int = 120):
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if importlib.util.find_spec("hatchling") is None:
        _run([sys.executable, "-m", "pip", "install", "--quiet", "hatchling>=1.21"], cwd=ROOT, timeout=300)
    dist = tmp_path_factory.mktemp("dist")
    _run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", str(dist),
          str(ROOT)], cwd=ROOT, timeout=300)
    [built] = dist.glob("*.whl")
    return built


@pytest.fixture(scope="module")
def site(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("site")
    _run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(wheel)],
         cwd=wheel.parent, timeout=300)
    return target


@pytest.fixture
def elsewhere(tmp_path: Path, site: Path) -> tuple[Path, dict[str, str]]:
    """A working directory outside the checkout and an environment that imports the installed copy."""
    env = {**os.environ, "PYTHONPATH": str(site), "EVOLVE_HOME": str(tmp_path / "home")}
    cwd = tmp_path / "work"
    cwd.mkdir()
    return cwd, env


def test_wheel_ships_package_and_data_only(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/", 1)[0] for n in names}
    assert tops == {"evolve", next(t for t in tops if t.endswith(".dist-info"))}
    assert "evolve/_data/harnesses/minimal/harness.yaml" in names
    assert "evolve/_data/harnesses/structured/skills/answer-format/SKILL.md" in names
    for folder in DATA_FOLDERS:
        shipped = {n.removeprefix(f"evolve/_data/{folder}/") for n in names if n.startswith(f"evolve/_data/{folder}/")}
        on_disk = {p.relative_to(ROOT / folder).as_posix() for p in (ROOT / folder).rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts}
        assert shipped and shipped == on_disk, folder
    assert not [n for n in names if n.endswith("__init__.py") and n.startswith("evolve/_data/")]
    entry_points = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "evolve = evolve.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_installed_console_script_help(site: Path, elsewhere: tuple[Path, dict[str, str]]) -> None:
    cwd, env = elsewhere
    script = site / "bin" / "evolve"
    assert script.is_file()
    out = _run([str(script), "--help"], cwd=cwd, env=env).stdout
    for command in ("harness", "lineage", "show", "diff", "export"):
        assert f" {command} " in out, command


def test_installed_module_validates_a_shipped_harness(elsewhere: tuple[Path, dict[str, str]]) -> None:
    cwd, env = elsewhere
    out = _run([sys.executable, "-m", "evolve", "harness", "validate", "minimal"], cwd=cwd, env=env).stdout
    assert out.startswith("ok minimal version ")
    out = _run([sys.executable, "-m", "evolve", "harness", "validate", "structured"], cwd=cwd, env=env).stdout
    assert "1 skills, 2 examples" in out


def test_installed_copy_finds_its_own_data(site: Path, elsewhere: tuple[Path, dict[str, str]]) -> None:
    cwd, env = elsewhere
    code = ("import evolve, evolve.paths as p\n"
            "print(evolve.__file__)\n"
            "for name in p.DATA_FOLDERS: print(p.data_dir(name))\n")
    lines = _run([sys.executable, "-c", code], cwd=cwd, env=env).stdout.split()
    assert len(lines) == 1 + len(DATA_FOLDERS)
    for line in lines:
        assert Path(line).resolve().is_relative_to(site.resolve()), line
    assert [Path(line).name for line in lines[1:]] == list(DATA_FOLDERS)
    assert [Path(line).parent.name for line in lines[1:]] == ["_data"] * len(DATA_FOLDERS)
