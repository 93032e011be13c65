"""Task file formats: generic JSONL, BIG-Bench-Hard json, GSM8K-style JSONL, HumanEval-style code tasks.

Every reader returns `TaskFile`: rows `{"id"?, "input", "target", "meta", "split"?}` plus what the
format implies about scoring (default verifier, labels). Errors name the file and line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evolve.errors import BenchmarkError

FORMATS = ("auto", "jsonl", "bbh", "gsm8k", "humaneval")
NUMBER_RE = re.compile(r"^-?\d+(?:\.\d+)?$")
MAX_LABELS = 20
SPLIT_NAMES = ("demo", "evolve", "validation", "test")
TASK_META_KEYS = ("workspace", "hidden", "expect")
"""Fields of a generic JSONL task kept in its `meta` (a `meta` object is kept whole as well)."""


@dataclass
class TaskFile:
    """What a task file holds once read."""

    rows: list[dict[str, Any]]
    verifier: dict[str, Any]
    labels: tuple[str, ...] | None = None
    format: str = "jsonl"
    extra: dict[str, Any] = field(default_factory=dict)


def read_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Objects of a JSONL file with their 1-based line numbers; blank lines are skipped."""
    out = []
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchmarkError(f"{path}: cannot read: {exc}") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BenchmarkError(f"{path}: line {number}: invalid JSON: {exc.msg}") from None
        if not isinstance(obj, dict):
            raise BenchmarkError(f"{path}: line {number}: expected a JSON object, got {type(obj).__name__}")
        out.append((number, obj))
    return out


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value) if isinstance(value, dict | list) else str(value)


def _field(obj: dict[str, Any], name: str, path: Path, where: str) -> str:
    if name not in obj or obj[name] is None:
        keys = ", ".join(sorted(obj)) or "none"
        raise BenchmarkError(f"{path}: {where}: missing field {name!r} (fields present: {keys})")
    return _text(obj[name])


def derive_labels(targets: list[str]) -> tuple[str, ...] | None:
    """A label set when the targets are a few repeated non-numeric values, else None."""
    distinct = sorted(set(targets))
    if not distinct or all(NUMBER_RE.match(t.strip()) for t in distinct):
        return None
    if len(distinct) <= MAX_LABELS and len(distinct) * 2 <= len(targets):
        return tuple(distinct)
    return None


def default_verifier(targets: list[str], labels: tuple[str, ...] | None) -> dict[str, Any]:
    if labels:
        return {"name": "label"}
    if targets and all(NUMBER_RE.match(t.strip().replace(",", "")) for t in targets):
        return {"name": "numeric"}
    return {"name": "exact"}


def read_generic(path: Path, input_field: str = "input", target_field: str = "target",
                 id_field: str = "id") -> TaskFile:
    """Generic JSONL: one object per line with configurable input/target fields, optional id and split,
    and for workspace tasks `workspace`, `hidden`, `expect` or a `meta` object."""
    rows = []
    for number, obj in read_jsonl(path):
        where = f"line {number}"
        meta = {"line": number, **{k: obj[k] for k in TASK_META_KEYS if obj.get(k) is not None}}
        if isinstance(obj.get("meta"), dict):
            meta.update(obj["meta"])
        row = {"input": _field(obj, input_field, path, where), "target": _field(obj, target_field, path, where),
               "meta": meta}
        if obj.get(id_field) is not None:
            row["id"] = str(obj[id_field])
        if obj.get("split") is not None:
            row["split"] = _split_name(obj["split"], path, where)
        rows.append(row)
    targets = [r["target"] for r in rows]
    labels = derive_labels(targets)
    return TaskFile(rows, default_verifier(targets, labels), labels, "jsonl")


def _split_name(value: Any, path: Path, where: str) -> str:
    name = str(value)
    if name not in SPLIT_NAMES:
        raise BenchmarkError(f"{path}: {where}: unknown split {name!r}; valid: {', '.join(SPLIT_NAMES)}")
    return name


def read_bbh(path: Path) -> TaskFile:
    """BIG-Bench-Hard task file: `{"examples": [{"input", "target"}, ...]}`; labels derived from targets."""
    data = _read_json(path)
    examples = data.get("examples") if isinstance(data, dict) else None
    if not isinstance(examples, list):
        raise BenchmarkError(f"{path}: not a BIG-Bench-Hard file (no 'examples' list)")
    rows = []
    for index, ex in enumerate(examples):
        where = f"examples[{index}]"
        if not isinstance(ex, dict):
            raise BenchmarkError(f"{path}: {where}: expected an object with 'input' and 'target'")
        rows.append({"input": _field(ex, "input", path, where), "target": _field(ex, "target", path, where),
                     "meta": {"index": index}})
    targets = [r["target"] for r in rows]
    labels = derive_labels(targets)
    return TaskFile(rows, default_verifier(targets, labels), labels, "bbh")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise BenchmarkError(f"{path}: line {exc.lineno}: invalid JSON: {exc.msg}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchmarkError(f"{path}: cannot read: {exc}") from None


def read_gsm8k(path: Path) -> TaskFile:
    """GSM8K-style JSONL: `question` and `answer`, the final number after `####`."""
    rows = []
    for number, obj in read_jsonl(path):
        where = f"line {number}"
        question = _field(obj, "question", path, where)
        answer = _field(obj, "answer", path, where)
        if "####" not in answer:
            raise BenchmarkError(f"{path}: {where}: field 'answer' has no '####' before the final number")
        rationale, final = answer.rsplit("####", 1)
        rows.append({"input": question, "target": final.strip().replace(",", ""),
                     "meta": {"line": number, "rationale": rationale.strip()}})
    return TaskFile(rows, {"name": "numeric"}, None, "gsm8k")


def read_humaneval(path: Path) -> TaskFile:
    """HumanEval-style JSONL: `prompt`, `test` (defines `check(candidate)`), `entry_point`, optional `task_id`."""
    rows = []
    for number, obj in read_jsonl(path):
        where = f"line {number}"
        prompt = _field(obj, "prompt", path, where)
        row = {"input": prompt, "target": _field(obj, "test", path, where),
               "meta": {"line": number, "entry_point": _field(obj, "entry_point", path, where), "prompt": prompt}}
        if obj.get("task_id"):
            row["id"] = str(obj["task_id"])
        rows.append(row)
    return TaskFile(rows, {"name": "python_tests"}, None, "humaneval")


def detect_format(path: Path) -> str:
    """Guess the format of a task file from its suffix and first record."""
    if path.suffix == ".json":
        return "bbh"
    first = next(iter(read_jsonl(path)), None)
    if first is None:
        return "jsonl"
    obj = first[1]
    if {"prompt", "test", "entry_point"} <= obj.keys():
        return "humaneval"
    if "question" in obj and "####" in str(obj.get("answer", "")):
        return "gsm8k"
    return "jsonl"


def read_task_file(path: Path, fmt: str = "auto", input_field: str = "input",
                   target_field: str = "target") -> TaskFile:
    """Read any supported task file (`fmt` one of FORMATS)."""
    if fmt not in FORMATS:
        raise BenchmarkError(f"unknown task format {fmt!r}; valid: {', '.join(FORMATS)}")
    if not path.is_file():
        raise BenchmarkError(f"task file not found: {path}")
    if fmt == "auto":
        fmt = detect_format(path)
    if fmt == "bbh":
        return read_bbh(path)
    if fmt == "gsm8k":
        return read_gsm8k(path)
    if fmt == "humaneval":
        return read_humaneval(path)
    return read_generic(path, input_field, target_field)
