"""Exporters: Agent Skills folder, single prompt, JSON bundle with provenance, Python entry point.

| format | files |
|---|---|
| skills | `skills/<name>/SKILL.md` (front matter `name`, `description`), `system.md`, `provenance.json` |
| prompt | `prompt.md`: the system prompt with skills and examples inlined |

Both also write `tools.json` when the harness has tools: OpenAI-style function definitions (the
`tools=` of a chat completion request; implementations are not part of it).
| json   | `harness.json`: bundle {format, version, harness, provenance} (`evolve.load_harness` reads it back) |
| python | `harness.json`, the harness folder `harness/`, and `agent.py` (runs the harness from the shell) |

`export_candidate` screens the harness for evolve-split leakage before anything is written.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evolve.errors import ConfigError, EvolveError
from evolve.harness import Harness, save_harness, system_prompt
from evolve.harness.io import dump_yaml
from evolve.report.leakage import SplitInfo, check_export, evolve_split
from evolve.store import LineageStore
from evolve.templating import render

EXPORT_FORMATS = ("skills", "prompt", "json", "python")
BUNDLE_FORMAT = "evolve-harness"


class Provenance(BaseModel):
    """Where an exported harness comes from (stored in every export)."""

    model_config = ConfigDict(extra="forbid")

    version: str
    """Harness content hash."""
    run_id: str | None = None
    """Run that produced the harness."""
    candidate_id: str | None = None
    """Candidate id in that run's lineage."""
    status: str | None = None
    """Candidate status at export time."""
    model: str = ""
    """Policy model the harness was evolved for."""
    benchmark: str = ""
    """Benchmark reference of the run."""
    preset: str = ""
    """Preset of the run."""
    scores: dict[str, Any] = Field(default_factory=dict)
    """Validation score with CI, Δ, policy tokens, and the run summary's per-split scores for the best."""
    leakage: dict[str, Any] = Field(default_factory=dict)
    """Leakage screen: `checked`, `against`, `findings`."""
    exported_at: str = ""
    """UTC time of the export (ISO 8601)."""
    evolve_version: str = ""
    """Version of evolve that wrote the export."""


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


def tools_json(harness: Harness) -> str:
    """The harness's tools as OpenAI-style function definitions (what `tools=` takes), as JSON text."""
    from evolve.bench.tools import definitions

    return json.dumps(definitions(harness.tools), indent=2, ensure_ascii=False) + "\n"


def skill_md(skill: Any) -> str:
    """An Agent Skills `SKILL.md`: YAML front matter (`name`, `description`) and the body."""
    front = dump_yaml({"name": skill.name, "description": skill.description})
    return f"---\n{front}---\n\n{skill.body}\n"


def export(harness: Harness, fmt: str, out: Path, provenance: dict[str, Any]) -> list[Path]:
    """Write `harness` in format `fmt` under folder `out`; return the files written."""
    if fmt not in EXPORT_FORMATS:
        raise ConfigError(f"unknown export format {fmt!r}; valid: {', '.join(EXPORT_FORMATS)}")
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out}: exists and is not a folder")
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []

    def write(rel: str, text: str) -> None:
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)

    bundle_text = json.dumps(bundle(harness, provenance), indent=2, ensure_ascii=False) + "\n"
    if fmt in ("prompt", "skills") and harness.tools:
        write("tools.json", tools_json(harness))
    if fmt == "prompt":
        write("prompt.md", prompt_text(harness))
    elif fmt == "json":
        write("harness.json", bundle_text)
    elif fmt == "skills":
        for skill in sorted(harness.skills, key=lambda s: s.name):
            write(f"skills/{skill.name}/SKILL.md", skill_md(skill))
        write("system.md", prompt_text(harness.model_copy(update={"skills": ()})))
        write("provenance.json", json.dumps(provenance, indent=2, ensure_ascii=False) + "\n")
    else:
        save_harness(harness, out / "harness")
        written += sorted(p for p in (out / "harness").rglob("*") if p.is_file())
        write("harness.json", bundle_text)
        write("agent.py", render("agent.py.j2", version=harness.version, provenance=provenance))
    return written


def _scores(candidate: Any, run: dict[str, Any], best_id: str | None) -> dict[str, Any]:
    scores: dict[str, Any] = {
        "validation": {"score": candidate.val_score, "ci_low": candidate.val_ci_low,
                       "ci_high": candidate.val_ci_high},
        "delta": candidate.delta, "policy_tokens": candidate.policy_tokens,
    }
    summary = run.get("summary") or {}
    if candidate.id == best_id and isinstance(summary.get("best"), dict):
        scores["best_summary"] = summary["best"]
    if candidate.parent_id is None and isinstance(summary.get("seed"), dict):
        scores["seed_summary"] = summary["seed"]
    return scores


def export_candidate(store: LineageStore, ref: str, fmt: str, out: Path, *, run_id: str | None = None,
                     allow_leaks: bool = False, split: SplitInfo | None = None) -> tuple[list[Path], Provenance]:
    """Export a stored candidate (id, `best` or `seed`) after the leakage screen; return files and provenance.

    `split` overrides the evolve split rebuilt from the run's configuration (for callers that have it).
    """
    if fmt not in EXPORT_FORMATS:
        raise ConfigError(f"unknown export format {fmt!r}; valid: {', '.join(EXPORT_FORMATS)}")
    candidate = store.resolve_candidate(ref, run_id)
    harness = store.get_harness(candidate.harness_hash)
    run = store.get_run(candidate.run_id)
    try:
        split = split if split is not None else evolve_split(run, store.get_state(candidate.run_id, "splits"))
    except EvolveError as exc:
        if not allow_leaks:
            raise EvolveError(f"cannot screen the export for leakage: {exc} (pass --allow-leaks to export "
                              "without the screen)") from None
        split = SplitInfo(tasks=(), source=f"not screened: {exc}")
    found = check_export(harness, split, allow_leaks=allow_leaks)
    from evolve import __version__

    provenance = Provenance(
        version=harness.version, run_id=candidate.run_id, candidate_id=candidate.id, status=candidate.status,
        model=run.get("model") or "", benchmark=run.get("benchmark") or "", preset=run.get("preset") or "",
        scores=_scores(candidate, run, store.get_state(candidate.run_id, "incumbent")),
        leakage={"checked": bool(split.tasks), "against": split.source, "evolve_tasks": len(split.tasks),
                 "findings": found, "allowed": bool(found and allow_leaks)},
        exported_at=datetime.now(UTC).isoformat(timespec="seconds"), evolve_version=__version__,
    )
    return export(harness, fmt, out, provenance.model_dump(mode="json")), provenance
