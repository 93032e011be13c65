"""Exporters: Agent Skills folder, single prompt, JSON bundle with provenance, Python entry point.

Every export is the harness the run evaluated: rendered with `evolve.harness.render_messages`, each
gives the same chat messages as the rollouts did.

- `skills`: `skills/<name>/SKILL.md` (front matter `name`, `description`), `system.md` (the prompt
  sections), `examples.jsonl`, `harness.yaml` (control settings and tools) and `provenance.json`: an
  Agent Skills folder that is also a harness folder (`evolve.load_harness` reads it back).
- `prompt`: `prompt.md` (the system prompt with skills and tools inlined, and the examples when they
  are shown there), `messages.json` when the examples are few-shot chat turns (the messages before
  the task), `harness.yaml` (control settings and tools); `evolve.load_prompt` reads it back.
- Both also write `tools.json` when the harness has tools: OpenAI-style function definitions (the
  `tools=` of a chat completion request; implementations are not part of it).
- `json`: `harness.json`, a bundle {format, version, harness, provenance} (`evolve.load_harness`).
- `python`: `harness.json`, the harness folder `harness/`, and `agent.py` (runs it from the shell).

Few-shot examples keep their placement (`control.examples_as`); `examples_as=` converts them
explicitly, which exports a different harness (its provenance names the evaluated version). A
format that cannot express the control settings (sampling and vote, temperature, max_tokens,
answer extraction, max_turns, tools) writes them to `harness.yaml` beside it; `export_notes` says so.

`export_candidate` screens the harness for evolve-split leakage before anything is written. A new
format is one writer function in `WRITERS`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evolve.errors import ConfigError, EvolveError
from evolve.harness import Harness, render_files, save_harness, system_prompt
from evolve.harness.render import example_turns
from evolve.report.leakage import SplitInfo, check_export, evolve_split
from evolve.store import LineageStore
from evolve.templating import render

EXPORT_FORMATS = ("skills", "prompt", "json", "python")
BUNDLE_FORMAT = "evolve-harness"
MESSAGES_FORMAT = "evolve-messages"
EXAMPLE_PLACEMENTS = ("turns", "system")
SETTINGS_FILE = "harness.yaml"
"""Beside an export whose own files cannot express the control settings and tools."""


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
    evaluated_version: str | None = None
    """The version the run evaluated, when the export converted the harness (`--examples-as`)."""
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
    """The system prompt as the run rendered it (examples inside only with `examples_as: system`)."""
    return system_prompt(harness) + "\n"


def tools_json(harness: Harness) -> str:
    """The harness's tools as OpenAI-style function definitions (what `tools=` takes), as JSON text."""
    from evolve.bench.tools import definitions

    return json.dumps(definitions(harness.tools), indent=2, ensure_ascii=False) + "\n"


def messages_json(harness: Harness) -> str:
    """The chat messages before the task input: the system prompt and the few-shot turns."""
    prefix = [{"role": "system", "content": system_prompt(harness)}, *example_turns(harness)]
    data = {"format": MESSAGES_FORMAT, "format_version": 1, "version": harness.version, "messages": prefix,
            "task": "append the task input as a last message {\"role\": \"user\", \"content\": INPUT}"}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def convert_examples(harness: Harness, examples_as: str | None) -> Harness:
    """`harness` with its few-shot examples placed as `examples_as` (None: unchanged)."""
    if examples_as is None or examples_as == harness.control.examples_as:
        return harness
    if examples_as not in EXAMPLE_PLACEMENTS:
        raise ConfigError(f"--examples-as {examples_as!r} is unknown; valid: {', '.join(EXAMPLE_PLACEMENTS)}")
    return harness.model_copy(update={"control": harness.control.model_copy(update={"examples_as": examples_as})})


class _Folder:
    """The output folder of one export; records every file written."""

    def __init__(self, out: Path) -> None:
        if out.exists() and not out.is_dir():
            raise ConfigError(f"--out {out}: exists and is not a folder")
        out.mkdir(parents=True, exist_ok=True)
        self.out, self.written = out, []

    def write(self, rel: str, text: str) -> None:
        path = self.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self.written.append(path)

    def write_json(self, rel: str, data: Any) -> None:
        self.write(rel, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def _write_tools(harness: Harness, folder: _Folder) -> None:
    if harness.tools:
        folder.write("tools.json", tools_json(harness))


def _write_skills(harness: Harness, folder: _Folder, provenance: dict[str, Any]) -> None:
    for rel, text in render_files(harness).items():  # SKILL.md files, system.md, examples.jsonl, harness.yaml
        folder.write(rel, text)
    _write_tools(harness, folder)
    folder.write_json("provenance.json", provenance)


def _write_prompt(harness: Harness, folder: _Folder, provenance: dict[str, Any]) -> None:
    folder.write("prompt.md", prompt_text(harness))
    if example_turns(harness):
        folder.write("messages.json", messages_json(harness))
    folder.write(SETTINGS_FILE, render_files(harness)[SETTINGS_FILE])
    _write_tools(harness, folder)


def _write_json(harness: Harness, folder: _Folder, provenance: dict[str, Any]) -> None:
    folder.write_json("harness.json", bundle(harness, provenance))


def _write_python(harness: Harness, folder: _Folder, provenance: dict[str, Any]) -> None:
    save_harness(harness, folder.out / "harness")
    folder.written += sorted(p for p in (folder.out / "harness").rglob("*") if p.is_file())
    _write_json(harness, folder, provenance)
    folder.write("agent.py", render("agent.py.j2", version=harness.version, provenance=provenance))


Writer = Callable[[Harness, _Folder, dict[str, Any]], None]
WRITERS: dict[str, Writer] = {"skills": _write_skills, "prompt": _write_prompt, "json": _write_json,
                              "python": _write_python}
"""Format name -> the function that writes it (EXPORT_FORMATS lists them in help order)."""
SETTINGS_ELSEWHERE = {"skills": "SKILL.md and system.md", "prompt": "prompt.md"}
"""Formats whose main files cannot express the control settings (they go to SETTINGS_FILE)."""


def export(harness: Harness, fmt: str, out: Path, provenance: dict[str, Any]) -> list[Path]:
    """Write `harness` in format `fmt` under folder `out`; return the files written."""
    if fmt not in WRITERS:
        raise ConfigError(f"unknown export format {fmt!r}; valid: {', '.join(EXPORT_FORMATS)}")
    folder = _Folder(Path(out))
    WRITERS[fmt](harness, folder, provenance)
    return folder.written


def control_summary(harness: Harness) -> str:
    """The control settings in one line (`temperature 0.0, max_tokens 64, ...`)."""
    c = harness.control
    answer = c.answer.mode + (f" {c.answer.pattern!r}" if c.answer.pattern else "")
    if c.choice.labels:
        answer = f"by choice among {len(c.choice.labels)} labels" + (
            f" (calibrated on {len(c.choice.calibration)} inputs)" if c.choice.calibration else "")
    text = (f"temperature {c.temperature}, max_tokens {c.max_tokens}, samples {c.samples} (vote {c.vote}), "
            f"max_turns {c.max_turns}, answer {answer}")
    return text + (f", tools {', '.join(t.name for t in harness.tools)}" if harness.tools else "")


def export_notes(harness: Harness, fmt: str, out: Path) -> list[str]:
    """What the command line says about an export: where the control settings and the few-shot turns are."""
    notes = []
    if fmt in SETTINGS_ELSEWHERE:
        notes.append(f"{SETTINGS_ELSEWHERE[fmt]} cannot express the control settings; they are in "
                     f"{Path(out) / SETTINGS_FILE}: {control_summary(harness)}")
    if harness.control.choice.labels:
        notes.append("this harness answers by scoring its labels (control.choice): a runtime must score each "
                     "label's log-probability as evolve's Agent does (load_harness(...).run); a plain chat "
                     "completion of the prompt generates instead")
    if fmt == "prompt" and example_turns(harness):
        notes.append(f"the {len(harness.examples)} few-shot example(s) are chat turns, as evaluated: "
                     f"{Path(out) / 'messages.json'} holds the messages before the task "
                     "(--examples-as system puts them into prompt.md instead)")
    return notes


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
                     allow_leaks: bool = False, split: SplitInfo | None = None,
                     examples_as: str | None = None) -> tuple[list[Path], Provenance]:
    """Export a stored candidate (id, `best` or `seed`) after the leakage screen; return files and provenance.

    `split` overrides the evolve split rebuilt from the run's configuration (for callers that have it).
    `examples_as` (`turns` or `system`) converts the few-shot placement explicitly.
    """
    if fmt not in WRITERS:
        raise ConfigError(f"unknown export format {fmt!r}; valid: {', '.join(EXPORT_FORMATS)}")
    candidate = store.resolve_candidate(ref, run_id)
    evaluated = store.get_harness(candidate.harness_hash)
    harness = convert_examples(evaluated, examples_as)
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
        evaluated_version=evaluated.version if harness.version != evaluated.version else None,
        exported_at=datetime.now(UTC).isoformat(timespec="seconds"), evolve_version=__version__,
    )
    return export(harness, fmt, out, provenance.model_dump(mode="json")), provenance
