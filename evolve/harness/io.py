"""On-disk harness format.

A harness folder holds:

- `harness.yaml`: name, description, control settings, tools, and (when set) memory and context;
- `system.md`: system prompt sections, each introduced by a line `<!-- section: NAME -->`;
- `skills/<name>/SKILL.md`: YAML front matter (`name`, `description`) and a markdown body;
- `examples.jsonl`: one `{"input", "output", "rationale"?}` object per line.

`save_harness` writes a canonical form, so `save(load(save(h)))` is byte-identical to `save(h)`.
A harness can also be a single JSON bundle (`*.json`, the `json` export format).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from evolve.errors import HarnessError, describe_validation
from evolve.harness.model import MARKER_RE, Example, Harness, Section, Skill, control_data

__all__ = [
    "MARKER_RE", "load_harness", "noncanonical_files", "parse_skill_md", "parse_system", "render_files", "save_harness",
]

HARNESS_FILES = ("harness.yaml", "system.md", "examples.jsonl", "skills")
META_KEYS = ("name", "description", "control", "tools", "memory", "context")


def _read_text(path: Path) -> str:
    """UTF-8 text with universal newlines; a leading byte-order mark (some editors write one) is dropped."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise HarnessError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def _yaml_line(text: str, loc: tuple[Any, ...]) -> int | None:
    """Line (1-based) of the YAML node at `loc` (keys and list indices), or of its deepest existing parent."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    line = None
    for key in loc:
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if k.value == str(key)), None)
            if pair is None:
                break
            line, node = pair[0].start_mark.line + 1, pair[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and 0 <= key < len(node.value):
            node = node.value[key]
            line = node.start_mark.line + 1
        else:
            break
    return line


def _where(path: Path, text: str, loc: tuple[Any, ...]) -> str:
    line = _yaml_line(text, loc)
    return f"{path}: line {line}" if line else str(path)


def _read_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(_read_text(path))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise HarnessError(f"{path}:{where}: {problem}") from None


def parse_system(text: str, source: str) -> list[dict[str, str]]:
    """Split `system.md` into validated sections; errors name `source` and the marker's line."""
    sections: list[dict[str, str]] = []
    lines: list[int] = []
    for number, line in enumerate(text.split("\n"), 1):
        match = MARKER_RE.fullmatch(line.strip())
        if match:
            sections.append({"name": match.group(1), "text": ""})
            lines.append(number)
        elif sections:
            sections[-1]["text"] += line + "\n"
        elif line.strip():
            raise HarnessError(f"{source}: line {number}: text before the first '<!-- section: NAME -->' marker")
    seen: set[str] = set()
    for section, number in zip(sections, lines, strict=True):
        if section["name"] in seen:
            raise HarnessError(f"{source}: line {number}: duplicate section name {section['name']!r}")
        seen.add(section["name"])
        try:
            Section.model_validate(section)
        except ValidationError as exc:
            raise HarnessError(describe_validation(exc, f"{source}: line {number}")) from None
    return sections


SKILL_KEYS = ("name", "description")


def parse_skill_md(text: str, source: str) -> dict[str, str]:
    """Split a SKILL.md into front matter (`name`, `description`) and body; errors name `source`."""
    lines = text.split("\n")
    if lines[0].rstrip() != "---":
        raise HarnessError(f"{source}: line 1: SKILL.md must start with '---' front matter")
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        raise HarnessError(f"{source}: front matter is not closed by '---'")
    try:
        meta = yaml.safe_load("\n".join(lines[1:end])) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 2}" if mark is not None else ""
        raise HarnessError(f"{source}:{line}: invalid front matter") from None
    if not isinstance(meta, dict) or "name" not in meta or "description" not in meta:
        raise HarnessError(f"{source}: front matter needs 'name' and 'description'")
    unknown = [str(k) for k in meta if k not in SKILL_KEYS]
    if unknown:
        raise HarnessError(f"{source}: unsupported front matter key(s) {', '.join(unknown)}; valid: name, description")
    for key in SKILL_KEYS:
        if not isinstance(meta[key], str):
            raise HarnessError(f"{source}: front matter '{key}' must be text, got {type(meta[key]).__name__}")
    body = "\n".join(lines[end + 1 :]).lstrip("\n")
    return {"name": meta["name"], "description": meta["description"], "body": body}


def _read_examples(path: Path) -> list[dict[str, Any]]:
    rows = []
    for number, line in enumerate(_read_text(path).split("\n"), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise HarnessError(f"{path}: line {number}: invalid JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise HarnessError(f"{path}: line {number}: expected a JSON object")
        try:
            Example.model_validate(row)
        except ValidationError as exc:
            raise HarnessError(describe_validation(exc, f"{path}: line {number}")) from None
        rows.append(row)
    return rows


def bundle_file(path: Path) -> Path | None:
    """The JSON bundle `path` names: the `.json` file itself, or `harness.json` in a folder without `harness.yaml`."""
    if path.is_file() and path.suffix == ".json":
        return path
    if path.is_dir() and not (path / "harness.yaml").is_file() and (path / "harness.json").is_file():
        return path / "harness.json"
    return None


def load_harness(path: str | Path) -> Harness:
    """Load a harness folder, a JSON bundle, or an export folder holding only `harness.json`.

    Raise HarnessError naming the file on any problem.
    """
    path = Path(path)
    bundle = bundle_file(path)
    if bundle is not None:
        return _load_bundle(bundle)
    if not path.is_dir():
        raise HarnessError(f"{path}: not a harness folder (expected a folder with harness.yaml)")
    meta_path = path / "harness.yaml"
    if not meta_path.is_file():
        raise HarnessError(f"{path}: missing harness.yaml")
    meta = _read_yaml(meta_path) or {}
    if not isinstance(meta, dict):
        raise HarnessError(f"{meta_path}: line 1: expected a mapping at the top level")
    unknown = [str(k) for k in meta if k not in META_KEYS]
    if unknown:
        where = _where(meta_path, _read_text(meta_path), (unknown[0],))
        raise HarnessError(f"{where}: unknown key(s) {', '.join(unknown)}; valid: {', '.join(META_KEYS)}")
    data: dict[str, Any] = {
        "name": meta.get("name", path.name),
        "description": meta.get("description", "") or "",
        "control": meta.get("control") or {},
        "tools": meta.get("tools") or [],
    }
    data.update({key: meta[key] for key in ("memory", "context") if meta.get(key) is not None})
    system_path = path / "system.md"
    if system_path.is_file():
        data["system"] = parse_system(_read_text(system_path), str(system_path))
    data["skills"] = _load_skills(path / "skills")
    examples_path = path / "examples.jsonl"
    if examples_path.is_file():
        data["examples"] = _read_examples(examples_path)
    try:
        return Harness.model_validate(data)
    except ValidationError as exc:
        loc = tuple(exc.errors()[0].get("loc", ())) if exc.errors() else ()
        raise HarnessError(describe_validation(exc, _where(meta_path, _read_text(meta_path), loc))) from None


def _load_skills(folder: Path) -> list[dict[str, str]]:
    if not folder.is_dir():
        return []
    skills = []
    for sub in sorted(p for p in folder.iterdir() if not p.name.startswith(".")):
        skill_md = sub / "SKILL.md"
        if not sub.is_dir() or not skill_md.is_file():
            raise HarnessError(f"{sub}: each entry of skills/ must be a folder with SKILL.md")
        parsed = parse_skill_md(_read_text(skill_md), str(skill_md))
        if parsed["name"] != sub.name:
            raise HarnessError(f"{skill_md}: front matter name {parsed['name']!r} differs from folder {sub.name!r}")
        try:
            Skill.model_validate(parsed)
        except ValidationError as exc:
            raise HarnessError(describe_validation(exc, str(skill_md))) from None
        skills.append(parsed)
    return skills


def _load_bundle(path: Path) -> Harness:
    try:
        data = json.loads(_read_text(path))
    except json.JSONDecodeError as exc:
        raise HarnessError(f"{path}: line {exc.lineno}: invalid JSON ({exc.msg})") from None
    if isinstance(data, dict) and "harness" in data:
        data = data["harness"]
    try:
        return Harness.model_validate(data)
    except ValidationError as exc:
        raise HarnessError(describe_validation(exc, str(path))) from None


class _Dumper(yaml.SafeDumper):
    """Safe dumper that double-quotes strings PyYAML would not read back unchanged (NEL, U+0085)."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = '"' if "\x85" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def dump_yaml(data: Any) -> str:
    """Canonical YAML text: keys in the given order, block style, UTF-8 kept readable."""
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100, default_flow_style=False)


def render_files(harness: Harness) -> dict[str, str]:
    """The canonical files of a harness folder, as {relative path: text}."""
    meta: dict[str, Any] = {
        "name": harness.name,
        "description": harness.description,
        "control": control_data(harness.control),
        "tools": [t.model_dump(mode="json") for t in harness.tools],
    }
    for key in ("memory", "context"):
        value = getattr(harness, key)
        if value != type(value)():
            meta[key] = value.model_dump(mode="json")
    files = {"harness.yaml": dump_yaml(meta)}
    if harness.system:
        files["system.md"] = "".join(f"<!-- section: {s.name} -->\n{s.text}\n\n" for s in harness.system)
    for skill in sorted(harness.skills, key=lambda s: s.name):
        front = dump_yaml({"name": skill.name, "description": skill.description})
        files[f"skills/{skill.name}/SKILL.md"] = f"---\n{front}---\n\n{skill.body}\n"
    if harness.examples:
        files["examples.jsonl"] = "".join(
            json.dumps(e.model_dump(mode="json", exclude_none=True), ensure_ascii=False) + "\n"
            for e in harness.examples
        )
    return files


def save_harness(harness: Harness, path: str | Path) -> Path:
    """Write `harness` as a canonical folder at `path`, replacing the harness files there.

    Files are written to a staging folder first and then moved in, so a failure while writing never
    leaves a half-written file; other files in the folder (a README, notes) are kept.
    """
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise HarnessError(f"{path}: exists and is not a folder; choose a folder for the harness")
    files = render_files(harness)
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".harness-", dir=path.parent))
    try:
        for rel, text in files.items():
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", newline="")
        path.mkdir(exist_ok=True)
        for name in HARNESS_FILES:
            old = path / name
            if old.is_dir():
                shutil.rmtree(old)
            elif old.exists():
                old.unlink()
        for item in staging.iterdir():
            item.replace(path / item.name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return path


def noncanonical_files(path: str | Path) -> list[str]:
    """Harness files of folder `path` whose bytes differ from the canonical form `save_harness` writes
    (changed, missing or extra), as sorted relative paths; empty when the folder is canonical."""
    path = Path(path)
    expected = {rel: text.encode("utf-8") for rel, text in render_files(load_harness(path)).items()}
    found: dict[str, bytes] = {}
    for name in HARNESS_FILES:
        entry = path / name
        if entry.is_file():
            found[name] = entry.read_bytes()
        elif entry.is_dir():
            found.update({f.relative_to(path).as_posix(): f.read_bytes() for f in entry.rglob("*") if f.is_file()})
    return sorted(rel for rel in expected.keys() | found.keys() if expected.get(rel) != found.get(rel))
