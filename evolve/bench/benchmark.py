"""Benchmarks: a named task suite with a verifier and fixed splits.

A benchmark is a shipped name (`benchmarks/<name>/benchmark.yaml`), a folder holding a
benchmark.yaml, a benchmark.yaml file, or a bare task file (generic JSONL, BIG-Bench-Hard json,
GSM8K-style JSONL, HumanEval-style JSONL). Splits: `demo` (labelled demonstrations a few-shot
bootstrap may copy, never scored), `evolve` (what the analyst and proposer see), `validation`
(where candidates are accepted), `test` (held out). Sizes and seed come from the benchmark.yaml;
a file without split information is split deterministically by seed.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from evolve.bench.environment import attach_environment, make_environment, resolve_task_paths
from evolve.bench.formats import FORMATS, SPLIT_NAMES, TaskFile, default_verifier, read_task_file
from evolve.bench.generate import GeneratorSpec, generate
from evolve.bench.task import Task, make_tasks
from evolve.bench.verifiers import Verifier, make_verifier
from evolve.errors import BenchmarkError, describe_validation
from evolve.paths import data_dir, resolve_named

DEFAULT_FRACTIONS = {"demo": 0.15, "evolve": 0.25, "validation": 0.25, "test": 0.35}
SPEC_FILE = "benchmark.yaml"


class BenchmarkSpec(BaseModel):
    """The content of a benchmark.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = None
    """Benchmark name (default: the folder name)."""
    description: str = ""
    """What the suite measures."""
    tasks: str | None = None
    """Task file, relative to the benchmark folder (exclusive with `generator`)."""
    format: str = "auto"
    """Task file format: auto, jsonl, bbh, gsm8k, humaneval."""
    input_field: str = "input"
    """Input field of a generic JSONL task file."""
    target_field: str = "target"
    """Target field of a generic JSONL task file."""
    generator: GeneratorSpec | None = None
    """Seeded template generator (exclusive with `tasks`)."""
    verifier: str | dict[str, Any] | None = None
    """Verifier name or `{name: ..., options}`; default from the format (label, numeric or exact)."""
    labels: list[str] | None = None
    """Valid answers of a label task (default: derived from the targets)."""
    answer_format: str = ""
    """How an answer should look (for people and the analyst; never rendered by the engine)."""
    splits: dict[str, int] | None = None
    """Split sizes, e.g. {demo: 40, evolve: 60, validation: 60, test: 100}."""
    seed: int = 0
    """Seed of the split shuffle."""
    ood: list[str] = Field(default_factory=list)
    """Out-of-distribution sibling benchmarks (names or paths relative to this folder)."""
    denylist: list[str] = Field(default_factory=list)
    """Regexes a harness must not contain (checked by the critic)."""
    environment: dict[str, Any] | None = None
    """Where rollouts run: workspace per task, admitted tools, limits (see evolve.bench.environment)."""

    @field_validator("format")
    @classmethod
    def _format(cls, v: str) -> str:
        if v not in FORMATS:
            raise ValueError(f"unknown format {v!r}; valid: {', '.join(FORMATS)}")
        return v

    @field_validator("splits")
    @classmethod
    def _splits(cls, v: dict[str, int] | None) -> dict[str, int] | None:
        for name, size in (v or {}).items():
            if name not in SPLIT_NAMES:
                raise ValueError(f"unknown split {name!r}; valid: {', '.join(SPLIT_NAMES)}")
            if size < 0:
                raise ValueError(f"split {name!r} has a negative size")
        return v

    @field_validator("denylist")
    @classmethod
    def _denylist(cls, v: list[str]) -> list[str]:
        for pattern in v:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"invalid regex {pattern!r}: {exc}") from None
        return v

    @model_validator(mode="after")
    def _one_source(self) -> BenchmarkSpec:
        if (self.tasks is None) == (self.generator is None):
            raise ValueError("give exactly one of 'tasks' (a file) or 'generator'")
        return self


@dataclass
class Benchmark:
    """A loaded task suite: tasks per split, the verifier, OOD siblings and the critic's denylist."""

    name: str
    description: str
    verifier: Verifier
    labels: tuple[str, ...] | None
    splits: dict[str, list[Task]]
    ood: tuple[str, ...] = ()
    denylist: tuple[str, ...] = ()
    source: str = ""
    answer_format: str = ""
    seed: int = 0
    verifier_spec: dict[str, Any] = field(default_factory=dict)
    environment: Any = None
    """The suite's Environment (also attached to `verifier`), or None for answer-only suites."""

    def split(self, name: str) -> list[Task]:
        """The tasks of split `name` (demo, evolve, validation or test)."""
        if name not in self.splits:
            raise BenchmarkError(f"benchmark {self.name!r} has no split {name!r}; valid: {', '.join(self.splits)}")
        return list(self.splits[name])

    def split_ids(self) -> dict[str, list[str]]:
        """Task ids per split (stored with a run so its splits are fixed)."""
        return {name: [t.id for t in tasks] for name, tasks in self.splits.items()}

    def info(self) -> dict[str, Any]:
        """A JSON summary for run configs and reports."""
        return {"name": self.name, "source": self.source, "seed": self.seed, "verifier": self.verifier_spec,
                "labels": list(self.labels) if self.labels else None, "ood": list(self.ood),
                "sizes": {k: len(v) for k, v in self.splits.items()},
                **({"environment": self.environment.name} if self.environment is not None else {})}


def split_sizes(total: int, sizes: dict[str, int] | None, source: str) -> dict[str, int]:
    """Sizes of the four splits: given ones, else fractions of `total`; too many is a BenchmarkError."""
    if sizes is None:
        out = {name: int(total * frac) for name, frac in DEFAULT_FRACTIONS.items()}
        out["test"] += total - sum(out.values())
        return out
    need = sum(sizes.values())
    if need > total:
        listed = ", ".join(f"{k}={v}" for k, v in sizes.items())
        raise BenchmarkError(f"{source}: splits ({listed}) need {need} tasks but there are only {total}")
    return {name: sizes.get(name, 0) for name in SPLIT_NAMES}


def stratified_order(tasks: list[Task], rng: random.Random) -> list[int]:
    """A seeded permutation in which every target is spread evenly, so each contiguous cut keeps the
    label proportions (label tasks); tasks whose targets are all distinct are simply shuffled."""
    groups: dict[str, list[int]] = {}
    for index, task in enumerate(tasks):
        groups.setdefault(task.target if task.labels else task.id, []).append(index)
    keyed = []
    for members in groups.values():
        rng.shuffle(members)
        keyed += [((rank + rng.random()) / len(members), index) for rank, index in enumerate(members)]
    return [index for _, index in sorted(keyed)]


def assign_splits(rows: list[dict[str, Any]], tasks: list[Task], sizes: dict[str, int] | None, seed: int,
                  source: str) -> dict[str, list[Task]]:
    """Use the rows' own `split` fields when present, else a seeded shuffle cut to the split sizes."""
    marked = [r.get("split") for r in rows]
    if any(marked):
        if not all(marked):
            raise BenchmarkError(f"{source}: some tasks have a 'split' field and some do not")
        return {name: [t for t, s in zip(tasks, marked, strict=True) if s == name] for name in SPLIT_NAMES
                if name in marked}
    counts = split_sizes(len(tasks), sizes, source)
    order = stratified_order(tasks, random.Random(seed))
    out, start = {}, 0
    for name in SPLIT_NAMES:
        out[name] = [tasks[i] for i in order[start:start + counts[name]]]
        start += counts[name]
    return out


def _read_spec(path: Path) -> BenchmarkSpec:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark else ""
        raise BenchmarkError(f"{path}: {where}invalid YAML: {getattr(exc, 'problem', exc)}") from None
    except OSError as exc:
        raise BenchmarkError(f"{path}: cannot read: {exc}") from None
    if not isinstance(data, dict):
        raise BenchmarkError(f"{path}: expected a mapping of benchmark fields")
    try:
        return BenchmarkSpec.model_validate(data)
    except ValidationError as exc:
        raise BenchmarkError(describe_validation(exc, str(path))) from None


def _task_file(spec: BenchmarkSpec, folder: Path, source: str) -> TaskFile:
    if spec.generator is not None:
        rows = generate(spec.generator, source)
        targets = [r["target"] for r in rows]
        labels = tuple(sorted(set(targets))) if len(set(targets)) < len(targets) / 2 else None
        return TaskFile(rows, default_verifier(targets, labels), labels, "generator")
    return read_task_file(folder / str(spec.tasks), spec.format, spec.input_field, spec.target_field)


def build_benchmark(spec: BenchmarkSpec, folder: Path, source: str, *, seed: int | None = None,
                    default_name: str = "benchmark") -> Benchmark:
    """Turn a spec into a loaded Benchmark (tasks, labels, verifier, splits)."""
    data = _task_file(spec, folder, source)
    if not data.rows:
        raise BenchmarkError(f"{source}: the benchmark has no tasks")
    verifier_spec = spec.verifier or data.verifier
    verifier_spec = {"name": verifier_spec} if isinstance(verifier_spec, str) else dict(verifier_spec)
    derived = data.labels if verifier_spec.get("name") == "label" else None
    labels = tuple(spec.labels) if spec.labels else derived
    try:
        verifier = make_verifier(verifier_spec)
    except BenchmarkError as exc:
        raise BenchmarkError(f"{source}: field 'verifier': {exc}") from None
    tasks = make_tasks(data.rows, labels)
    environment = None
    if spec.environment is not None:
        spec_file = folder / SPEC_FILE
        environment = make_environment(spec.environment, folder, str(spec_file) if spec_file.is_file() else source)
        tasks = resolve_task_paths(tasks, folder, source)
        attach_environment(verifier, environment)
    split_seed = spec.seed if seed is None else seed
    splits = assign_splits(data.rows, tasks, spec.splits, split_seed, source)
    ood = tuple(str(folder / o) if (folder / o).exists() and not _is_shipped(o) else o for o in spec.ood)
    return Benchmark(name=spec.name or default_name, description=spec.description, verifier=verifier,
                     labels=labels, splits=splits, ood=ood, denylist=tuple(spec.denylist), source=source,
                     answer_format=spec.answer_format, seed=split_seed, verifier_spec=verifier_spec,
                     environment=environment)


def _is_shipped(name: str) -> bool:
    return (data_dir("benchmarks") / name / SPEC_FILE).is_file()


def load_benchmark(ref: str, *, seed: int | None = None, **options: Any) -> Benchmark:
    """Load a benchmark from a shipped name, a folder, a benchmark.yaml or a task file.

    `options` override benchmark.yaml fields (e.g. `format`, `input_field`, `target_field`,
    `verifier`, `labels`, `splits`); `seed` overrides the split seed.
    """
    path = Path(ref).expanduser()
    if not path.exists():
        path = resolve_named("benchmarks", ref, marker=SPEC_FILE)
    if path.is_dir():
        spec_path = path / SPEC_FILE
        if not spec_path.is_file():
            raise BenchmarkError(f"{path}: folder has no {SPEC_FILE}")
        spec, folder, name = _read_spec(spec_path), path, path.name
    elif path.suffix in (".yaml", ".yml"):
        spec, folder, name = _read_spec(path), path.parent, path.parent.name
    else:
        spec, folder, name = BenchmarkSpec(tasks=path.name), path.parent, path.stem
    if options:
        try:
            spec = BenchmarkSpec.model_validate({**spec.model_dump(exclude_none=True), **options})
        except ValidationError as exc:
            raise BenchmarkError(describe_validation(exc, f"benchmark options for {ref}")) from None
    return build_benchmark(spec, folder, str(path), seed=seed, default_name=name)


def list_benchmarks() -> list[str]:
    """Names of the shipped benchmarks."""
    base = data_dir("benchmarks")
    return sorted(p.name for p in base.iterdir() if (p / SPEC_FILE).is_file())
