"""Exporters: Agent Skills folder, single prompt, JSON bundle with provenance, Python entry point."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evolve.errors import ConfigError
from evolve.harness import Harness, save_harness, system_prompt
from evolve.harness.io import render_files
from evolve.templating import render

EXPORT_FORMATS = ("skills", "prompt", "json", "python")
BUNDLE_FORMAT = "evolve-harness"


def bundle(harness: Harness, provenance: dict[str, Any]) -> dict[str, Any]:
    """The JSON bundle: the harness, its version id and where it came from."""
    return {
        "format": BUNDLE_FORMAT,
        "format_version": 1,
        "version": harness.version,
        "harness": harness.model_dump(mode="json"),
        "provenance": provenance,
    }


def prompt_text(harness: Harness) -> str:
    """One self-contained prompt text: the system prompt with the examples inlined."""
    inline = harness.model_copy(update={"control": harness.control.model_copy(update={"examples_as": "system"})})
    return system_prompt(inline) + "\n"


def export(harness: Harness, fmt: str, out: Path, provenance: dict[str, Any]) -> list[Path]:
    """Write `harness` in format `fmt` under folder `out`; return the files written."""
    if fmt not in EXPORT_FORMATS:
        raise ConfigError(f"unknown export format {fmt!r}; valid: {', '.join(EXPORT_FORMATS)}")
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def write(rel: str, text: str) -> None:
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)

    if fmt == "prompt":
        write("prompt.md", prompt_text(harness))
    elif fmt == "json":
        write("harness.json", json.dumps(bundle(harness, provenance), indent=2, ensure_ascii=False) + "\n")
    elif fmt == "skills":
        for rel, text in render_files(harness).items():
            if rel.startswith("skills/"):
                write(rel, text)
        without_skills = harness.model_copy(update={"skills": ()})
        write("system.md", prompt_text(without_skills))
        write("provenance.json", json.dumps(provenance, indent=2) + "\n")
    else:
        save_harness(harness, out / "harness")
        written += sorted(p for p in (out / "harness").rglob("*") if p.is_file())
        write("harness.json", json.dumps(bundle(harness, provenance), indent=2, ensure_ascii=False) + "\n")
        write("agent.py", render("agent.py.j2", version=harness.version, provenance=provenance))
    return written
