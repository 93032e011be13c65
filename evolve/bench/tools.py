"""Tools the policy may call: an allow-list of implementations, every call run in the sandbox.

A harness tool names its code with `implementation`: `builtin:<name>` or `python:<module>:<function>`.
Only implementations on the allow-list resolve:

- the built-in tools (`BUILTIN_TOOLS`; `bash` only where the suite allows it);
- tools the user registers: in benchmark.yaml (`environment: {tools: [...]}`, for that suite), in
  the run file (`tools: [...]`) or from Python with `register_tool` (both process-wide).

A model can choose among these and describe them (name, description, parameters), never name new
code: anything else is refused at call time with an `error: ...` observation, and the critic rejects
edits that change or add an implementation outside the list. Every call, built-in or registered,
runs in `evolve.bench.sandbox` (own process, no inherited environment, limits), never in the
engine process. A tool never raises into the runtime: failures come back to the policy as text.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from evolve.bench.sandbox import SandboxLimits, SandboxRun, run_job
from evolve.errors import BenchmarkError
from evolve.harness.model import Tool
from evolve.jsontext import json_objects

BUILTIN_FILE = Path(__file__).resolve().parent / "builtin_tools.py"
_STR = {"type": "string"}
BUILTIN_TOOLS: dict[str, tuple[str, dict[str, Any]]] = {
    "calculator": ("Evaluate an arithmetic expression (+ - * / // % ** and parentheses).",
                   {"expression": _STR}),
    "word_count": ("Count the words of a text.", {"text": _STR}),
    "read_file": ("Read a file of the workspace.", {"path": _STR}),
    "write_file": ("Create or overwrite a file of the workspace.", {"path": _STR, "content": _STR}),
    "edit_file": ("Replace the one occurrence of `old` in a workspace file by `new`.",
                  {"path": _STR, "old": _STR, "new": _STR}),
    "list_files": ("List the files under a workspace folder (default: all).", {"path": _STR}),
    "search": ("Find lines matching a regular expression in the workspace files.", {"pattern": _STR, "path": _STR}),
    "run_python": ("Run Python code in the workspace and return its output.", {"code": _STR}),
    "run_tests": ("Run the workspace's unit tests (folder `tests` by default) and return the report.",
                  {"path": _STR}),
    "bash": ("Run a shell command in the workspace (only where the suite allows it).", {"command": _STR}),
}
"""Built-in tools: name -> (default description, argument properties)."""
REQUIRED = {"calculator": ["expression"], "word_count": ["text"], "read_file": ["path"],
            "write_file": ["path", "content"], "edit_file": ["path", "old", "new"], "search": ["pattern"],
            "run_python": ["code"], "bash": ["command"]}
IMPLEMENTATION_RE = re.compile(r"^(builtin:[a-z_][a-z0-9_]*|python:[\w.]+:\w+)\Z")


def builtin_tool(name: str, description: str | None = None) -> Tool:
    """The harness entry of a built-in tool (default description and JSON schema)."""
    if name not in BUILTIN_TOOLS:
        raise LookupError(f"unknown builtin tool {name!r}; valid: {', '.join(BUILTIN_TOOLS)}")
    text, props = BUILTIN_TOOLS[name]
    schema = {"type": "object", "properties": props, "required": REQUIRED.get(name, [])}
    return Tool(name=name.replace("_", "-"), description=description or text, parameters=schema,
                implementation=f"builtin:{name}")


class ToolSpec(BaseModel):
    """A user registration: an implementation the allow-list admits, and where its module lives."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    implementation: str
    """`python:<module>:<function>` (user code) or `builtin:<name>` (e.g. `builtin:bash` to allow it)."""
    path: str | None = None
    """Folder put first on the sandbox's import path (relative to the file that registers it)."""

    @field_validator("implementation")
    @classmethod
    def _impl(cls, v: str) -> str:
        if not IMPLEMENTATION_RE.match(v):
            raise ValueError(f"tool implementation {v!r} must be builtin:<name> or python:<module>:<function>")
        if v.startswith("builtin:") and v.split(":", 1)[1] not in BUILTIN_TOOLS:
            raise ValueError(f"unknown builtin tool {v!r}; valid: {', '.join(BUILTIN_TOOLS)}")
        return v


class ToolRegistry:
    """The allow-list of tool implementations (built-ins plus registrations; see the module docstring)."""

    def __init__(self, specs: Iterable[ToolSpec | str | dict[str, Any]] = (), *, base: Path | None = None,
                 include_global: bool = True) -> None:
        self._specs: dict[str, ToolSpec] = {}
        self.include_global = include_global
        for spec in specs:
            self.register(spec, base=base)

    def register(self, spec: ToolSpec | str | dict[str, Any], *, base: Path | None = None) -> ToolSpec:
        """Admit an implementation (a string, a mapping or a ToolSpec); relative paths resolve against `base`."""
        item = spec if isinstance(spec, ToolSpec) else ToolSpec.model_validate(
            {"implementation": spec} if isinstance(spec, str) else spec)
        if item.path is not None:
            folder = Path(item.path).expanduser()
            if not folder.is_absolute() and base is not None:
                folder = base / folder
            item = item.model_copy(update={"path": str(folder.resolve())})
        self._specs[item.implementation] = item
        return item

    def unregister(self, implementation: str) -> None:
        self._specs.pop(implementation, None)

    def _lookup(self, implementation: str) -> ToolSpec | None:
        found = self._specs.get(implementation)
        if found is None and self.include_global and self is not USER_TOOLS:
            found = USER_TOOLS._specs.get(implementation)
        return found

    def allows(self, implementation: str) -> bool:
        """Whether a harness tool may name `implementation`."""
        kind, _, name = implementation.partition(":")
        if kind == "builtin" and name in BUILTIN_TOOLS and name != "bash":
            return True
        return self._lookup(implementation) is not None

    def refs(self) -> list[str]:
        """Every implementation on the list, sorted."""
        builtin = [f"builtin:{n}" for n in BUILTIN_TOOLS if n != "bash"]
        extra = set(self._specs) | (set(USER_TOOLS._specs) if self.include_global and self is not USER_TOOLS else set())
        return sorted(set(builtin) | extra)

    def merged(self, specs: Iterable[ToolSpec | str | dict[str, Any]], *, base: Path | None = None) -> ToolRegistry:
        """A new registry with this one's entries and `specs`."""
        out = ToolRegistry(self._specs.values(), include_global=self.include_global)
        for spec in specs:
            out.register(spec, base=base)
        return out

    def job(self, implementation: str, arguments: dict[str, Any], limits: SandboxLimits) -> dict[str, Any]:
        """The sandbox job that runs `implementation` with `arguments` (the caller checked `allows`)."""
        kind, _, ref = implementation.partition(":")
        if kind == "builtin" and ref == "bash":
            return {"kind": "exec", "argv": [shutil.which("bash") or "/bin/bash", "-c", str(arguments.get("command",
                                                                                                        ""))]}
        if kind == "builtin":
            return {"kind": "tool", "file": str(BUILTIN_FILE), "function": ref, "arguments": arguments,
                    "max_chars": limits.output_chars + 1}
        module, _, function = ref.partition(":")
        spec = self._lookup(implementation)
        paths = [spec.path] if spec is not None and spec.path else []
        return {"kind": "tool", "module": module, "function": function, "paths": paths, "arguments": arguments,
                "max_chars": limits.output_chars + 1}


USER_TOOLS = ToolRegistry(include_global=False)
"""Process-wide registrations made from Python (`register_tool`); every registry consults it."""


def register_tool(implementation: str, path: str | Path | None = None) -> ToolSpec:
    """Admit a user tool for every harness run in this process, e.g.
    `register_tool("python:my_tools:lookup", path="tools/")`. Its calls run in the sandbox."""
    return USER_TOOLS.register({"implementation": implementation, "path": None if path is None else str(path)},
                               base=Path.cwd())


def unregister_tool(implementation: str) -> None:
    """Withdraw a process-wide registration."""
    USER_TOOLS.unregister(implementation)


def registry_from(specs: Any, source: str, *, base: Path | None = None) -> ToolRegistry:
    """A registry from user data (a list of strings or `{implementation, path}`); one-line BenchmarkError if bad."""
    if specs is None:
        return ToolRegistry()
    if not isinstance(specs, list):
        raise BenchmarkError(f"{source}: field 'tools' must be a list of implementations")
    registry = ToolRegistry()
    for index, spec in enumerate(specs):
        try:
            registry.register(spec, base=base)
        except ValueError as exc:
            message = str(exc).splitlines()
            detail = next((line.strip() for line in message if "implementation" in line.lower()
                           or "valid" in line), message[-1] if message else "invalid")
            raise BenchmarkError(f"{source}: field 'tools.{index}': {detail}") from None
    return registry


def attach_tools(verifier: Any, specs: Any, source: str, *, base: Path | None = None) -> ToolRegistry:
    """Admit `specs` (a run file's `tools`) for the run: process-wide (so that the out-of-distribution
    suites evaluated by the run admit them too) and on top of the registry the benchmark attached to
    its verifier; attach the result to the verifier (where `evolve.bench.runtime.evaluate` finds it)."""
    admitted = registry_from(specs or [], source, base=base)
    for spec in admitted._specs.values():
        USER_TOOLS.register(spec)
    current = getattr(verifier, "tool_registry", None) or ToolRegistry()
    registry = current.merged(admitted._specs.values())
    verifier.tool_registry = registry
    return registry


def definitions(tools: Iterable[Tool]) -> list[dict[str, Any]]:
    """OpenAI-style function definitions of harness tools (the native `tools=` and `tools.json`)."""
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": t.parameters}} for t in tools]


def parse_tool_call(text: str) -> tuple[str, dict[str, Any]] | None:
    """The first JSON object with a string `tool` key in `text`, as (name, arguments), else None."""
    for obj in json_objects(text):
        if isinstance(obj.get("tool"), str):
            args = obj.get("arguments", {})
            return obj["tool"], args if isinstance(args, dict) else {"input": args}
    return None


@dataclass(frozen=True)
class ToolResult:
    """What one tool call gave back to the policy."""

    text: str
    ok: bool
    seconds: float = 0.0


def _clip(text: str, limit: int, total: int | None = None) -> str:
    total = max(total or 0, len(text))
    return text if total <= limit else text[:limit] + f"\n... ({total - limit} more characters not shown)"


def _from_run(run: SandboxRun, exec_job: bool, limits: SandboxLimits) -> ToolResult:
    if run.timed_out:
        return ToolResult(f"error: the tool ran past its {limits.timeout_s:g}s time limit", False, run.seconds)
    if exec_job:
        text = (run.stdout + run.stderr).strip() or "(no output)"
        return ToolResult(_clip(f"exit code {run.returncode}\n{text}", limits.output_chars), run.returncode == 0,
                          run.seconds)
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    try:
        reply = json.loads(lines[-1]) if lines else None
    except json.JSONDecodeError:
        reply = None
    if not isinstance(reply, dict):
        why = f"killed by signal {-run.returncode} (resource limit)" if (run.returncode or 0) < 0 else \
            (run.stderr.strip().splitlines() or [f"exit code {run.returncode}"])[-1]
        return ToolResult(f"error: the tool failed: {why}"[:500], False, run.seconds)
    output = str(reply.get("output") or "")
    if reply.get("ok"):
        text = str(reply.get("result", ""))
        total = int(reply.get("chars") or 0) + (len(output) + 1 if output.strip() else 0)
        if output.strip():
            text = f"{text}\n{output}" if text else output
        return ToolResult(_clip(text, limits.output_chars, total), True, run.seconds)
    return ToolResult(_clip(f"error: {reply.get('error')}", limits.output_chars), False, run.seconds)


def call_tool(tools: Iterable[Tool], name: str, arguments: Any, *, registry: ToolRegistry | None = None,
              workspace: Path | None = None, limits: SandboxLimits | None = None) -> ToolResult:
    """Run the harness tool `name` in the sandbox (in `workspace`, else a fresh empty folder).

    Refuses tools that do not exist and implementations outside the allow-list; never raises.
    """
    tools = list(tools)
    tool = next((t for t in tools if t.name == name), None)
    if tool is None:
        return ToolResult(f"error: unknown tool {name!r}; available: {', '.join(t.name for t in tools)}", False)
    registry = registry if registry is not None else ToolRegistry()
    if not registry.allows(tool.implementation):
        return ToolResult(f"error: tool {name!r} is not available: its implementation {tool.implementation!r} is "
                          f"not on the allow-list of this run", False)
    if not isinstance(arguments, dict):
        return ToolResult("error: tool arguments must be a JSON object", False)
    limits = limits or SandboxLimits()
    job = registry.job(tool.implementation, arguments, limits)
    start = time.monotonic()
    try:
        if workspace is not None:
            return _from_run(run_job(job, workspace, limits), job["kind"] == "exec", limits)
        with tempfile.TemporaryDirectory(prefix="evolve-tool-") as folder:
            return _from_run(run_job(job, Path(folder), limits), job["kind"] == "exec", limits)
    except (OSError, TypeError, ValueError) as exc:  # e.g. arguments that are not JSON
        return ToolResult(f"error: the tool could not start: {type(exc).__name__}: {exc}"[:500], False,
                          time.monotonic() - start)
