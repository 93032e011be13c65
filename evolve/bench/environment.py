"""Environments: the world a task's rollout runs in.

An environment gives each rollout a workspace (a fresh sandboxed copy of the task's folder, or
none), the allow-list of tool implementations, the sandbox limits of tool calls and the limits of a
rollout (turns, tokens, wall time). Verifiers with `score_workspace` see the final workspace.

A benchmark declares one in its benchmark.yaml:

    environment:
      name: workspace            # built in: `workspace` (tasks carry `meta.workspace`), `plain` (none)
      tools: [python:my_tools:lookup, {implementation: python:x:y, path: tools}, builtin:bash]
      limits: {max_turns: 12, max_tokens: 20000, max_seconds: 120}
      sandbox: {timeout_s: 10, memory_mb: 512}

Users add their own with `register_environment(name, factory)` (Python API); the benchmark attaches
the environment to its verifier (`verifier.environment`), where `evolve.bench.runtime.evaluate`
finds it without new arguments.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evolve.bench.sandbox import SandboxLimits
from evolve.bench.task import Task
from evolve.bench.tools import ToolRegistry, registry_from
from evolve.errors import BenchmarkError, describe_validation

WORKSPACE_KEYS = ("workspace", "hidden")
"""Task `meta` keys that name folders relative to the benchmark folder (made absolute on load)."""


class RolloutLimits(BaseModel):
    """Limits of one rollout; hitting one ends it as a failure of its own kind (`TurnLimit`, ...)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_turns: int | None = Field(None, ge=1, le=256)
    """Cap on the harness's `control.max_turns` (None: the harness decides)."""
    max_tokens: int | None = Field(None, ge=1)
    """Policy tokens (in + out) one rollout may spend; checked before every turn."""
    max_seconds: float | None = Field(None, gt=0)
    """Model and tool time one rollout may spend; checked before every turn."""


class EnvironmentSpec(BaseModel):
    """The `environment:` block of a benchmark.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = "workspace"
    """A built-in (`workspace`, `plain`) or user-registered environment."""
    tools: list[str | dict[str, Any]] = Field(default_factory=list)
    """Tool implementations this suite admits (user tools run in the sandbox; `builtin:bash` allows the shell)."""
    limits: RolloutLimits = RolloutLimits()
    """Per-rollout limits."""
    sandbox: SandboxLimits = SandboxLimits()
    """Limits of each tool call."""
    options: dict[str, Any] = Field(default_factory=dict)
    """Anything a user environment needs."""


@runtime_checkable
class Environment(Protocol):
    """Where rollouts run.

    Contract:
    - `open_workspace(task)` returns a fresh folder for one rollout (a copy: the source is never
      changed) or None when the task has no workspace; the runtime calls `close_workspace` on it
      when the rollout is scored, also after failures.
    - `tools` is the allow-list of tool implementations; `sandbox` the limits of each call;
      `limits` the limits of a rollout.
    - It holds no secrets and never runs model-written code itself (tool calls go to the sandbox).
    """

    name: str
    tools: ToolRegistry
    sandbox: SandboxLimits
    limits: RolloutLimits

    def open_workspace(self, task: Task) -> Path | None:
        """A fresh workspace folder for one rollout of `task`, or None."""
        ...

    def close_workspace(self, folder: Path) -> None:
        """Remove a workspace `open_workspace` made."""
        ...


class PlainEnvironment:
    """No workspace (tools run in an empty folder): what every benchmark without `environment:` uses."""

    name = "plain"

    def __init__(self, tools: ToolRegistry | None = None, sandbox: SandboxLimits | None = None,
                 limits: RolloutLimits | None = None) -> None:
        self.tools = tools or ToolRegistry()
        self.sandbox = sandbox or SandboxLimits()
        self.limits = limits or RolloutLimits()

    def open_workspace(self, task: Task) -> Path | None:
        return None

    def close_workspace(self, folder: Path) -> None:
        shutil.rmtree(folder, ignore_errors=True)


class WorkspaceEnvironment(PlainEnvironment):
    """Each task names a folder in `meta.workspace`; every rollout works on a fresh temporary copy."""

    name = "workspace"

    def open_workspace(self, task: Task) -> Path | None:
        source = task.meta.get("workspace")
        if not source:
            return None
        folder = Path(tempfile.mkdtemp(prefix="evolve-ws-"))
        try:
            shutil.copytree(source, folder, dirs_exist_ok=True, symlinks=False,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        except OSError as exc:
            shutil.rmtree(folder, ignore_errors=True)
            raise BenchmarkError(f"task {task.id}: cannot copy its workspace {source}: {exc}") from None
        return folder


class KeptWorkspaceEnvironment(WorkspaceEnvironment):
    """A workspace environment that hands the final copy to the caller (`kept`) instead of removing it
    (the runtime API's `run(..., workspace=DIR)`)."""

    kept: Path | None = None

    def close_workspace(self, folder: Path) -> None:
        self.kept = folder


Factory = Callable[[EnvironmentSpec, ToolRegistry], Environment]
_ENVIRONMENTS: dict[str, Factory] = {
    "plain": lambda spec, tools: PlainEnvironment(tools, spec.sandbox, spec.limits),
    "workspace": lambda spec, tools: WorkspaceEnvironment(tools, spec.sandbox, spec.limits),
}


def register_environment(name: str, factory: Factory) -> None:
    """Make `environment: {name: NAME, ...}` in a benchmark.yaml build `factory(spec, tool_registry)`."""
    if not name or not name.replace("-", "_").isidentifier():
        raise ValueError(f"environment name must be a word, got {name!r}")
    _ENVIRONMENTS[name] = factory


def environment_names() -> list[str]:
    return sorted(_ENVIRONMENTS)


def make_environment(spec: Any, folder: Path, source: str) -> Environment:
    """Build the environment of a benchmark.yaml's `environment:` block (errors name the file and field)."""
    try:
        parsed = spec if isinstance(spec, EnvironmentSpec) else EnvironmentSpec.model_validate(spec)
    except ValidationError as exc:
        raise BenchmarkError(describe_validation(exc, f"{source}: field 'environment'")) from None
    if parsed.name not in _ENVIRONMENTS:
        raise BenchmarkError(f"{source}: field 'environment.name': unknown environment {parsed.name!r}; "
                             f"valid: {', '.join(environment_names())}")
    tools = registry_from(parsed.tools, f"{source}: field 'environment'", base=folder)
    return _ENVIRONMENTS[parsed.name](parsed, tools)


def resolve_task_paths(tasks: list[Task], folder: Path, source: str) -> list[Task]:
    """Tasks whose `meta.workspace` / `meta.hidden` folders are made absolute (relative to `folder`)."""
    out = []
    for task in tasks:
        meta = dict(task.meta)
        for key in WORKSPACE_KEYS:
            if meta.get(key):
                path = (folder / str(meta[key])).resolve()
                if not path.is_dir():
                    raise BenchmarkError(f"{source}: task {task.id}: meta.{key} {meta[key]!r} is not a folder")
                meta[key] = str(path)
        out.append(task.model_copy(update={"meta": meta}))
    return out


def attach_environment(verifier: Any, environment: Environment) -> None:
    """Attach `environment` to a benchmark's verifier (the runtime reads it from there)."""
    verifier.environment = environment
    verifier.tool_registry = environment.tools


def environment_of(verifier: Any) -> Environment:
    """The environment attached to `verifier`, else a plain one with its tool registry (if any)."""
    found = getattr(verifier, "environment", None)
    if found is not None:
        if getattr(verifier, "tool_registry", None) is not None:
            found.tools = verifier.tool_registry  # a run file may have admitted more tools since
        return found
    return PlainEnvironment(getattr(verifier, "tool_registry", None))
