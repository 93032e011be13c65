"""Where data folders and outputs live.

The data folders (`harnesses/`, `benchmarks/`, `proposers/`, `selectors/`) ship inside the wheel
under `evolve/_data/`; in a source checkout they sit beside the package. `data_dir` finds them the
same way in both cases. Outputs default to `runs/` of the checkout, or `$EVOLVE_HOME` when set.
"""

from __future__ import annotations

import os
from pathlib import Path

from evolve.errors import ConfigError

_PACKAGE = Path(__file__).resolve().parent
DATA_FOLDERS = ("harnesses", "benchmarks", "proposers", "selectors")
_SINGULAR = {
    "harnesses": "harness",
    "benchmarks": "benchmark",
    "proposers": "proposer preset",
    "selectors": "selection preset",
}


def data_dir(name: str) -> Path:
    """Return the shipped data folder `name` (installed wheel first, then the checkout)."""
    if name not in DATA_FOLDERS:
        raise ConfigError(f"unknown data folder {name!r}; valid: {', '.join(DATA_FOLDERS)}")
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise ConfigError(f"data folder {name!r} not found; the installation is incomplete")


def home() -> Path:
    """Folder for outputs: `$EVOLVE_HOME`, else `runs/` of the checkout, else `./runs`."""
    env = os.environ.get("EVOLVE_HOME")
    if env:
        return Path(env)
    checkout_runs = _PACKAGE.parent / "runs"
    if (_PACKAGE.parent / "pyproject.toml").is_file() and checkout_runs.is_dir():
        return checkout_runs
    return Path.cwd() / "runs"


def default_db_url() -> str:
    """SQLAlchemy URL of the default lineage database."""
    return f"sqlite:///{home() / 'evolve.db'}"


def cache_dir() -> Path:
    """Folder of the persistent response cache."""
    return Path(os.environ.get("EVOLVE_CACHE_DIR") or home() / "cache")


def resolve_named(kind: str, name_or_path: str, marker: str | None = None) -> Path:
    """Resolve a user value that is either a path or the name of a shipped item in `kind`.

    A value that exists as a path wins. Otherwise the shipped folder `data_dir(kind)/name` (or the
    file `name` + a known suffix) is used. Unknown names list the shipped ones.
    """
    path = Path(name_or_path).expanduser()
    if path.exists():
        return path
    base = data_dir(kind)
    for candidate in (base / name_or_path, base / f"{name_or_path}.yaml"):
        if candidate.exists() and (marker is None or candidate.is_file() or (candidate / marker).exists()):
            return candidate
    shipped = sorted(p.stem if p.is_file() else p.name for p in base.iterdir() if not p.name.startswith("."))
    shipped = [s for s in shipped if s.lower() != "readme"]
    raise ConfigError(
        f"{name_or_path!r} is neither a path nor a shipped {_SINGULAR[kind]}; shipped: {', '.join(shipped)}"
    )
