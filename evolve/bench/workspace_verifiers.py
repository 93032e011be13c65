"""Verifiers that inspect a rollout's final workspace, not only the answer.

- `workspace_tests`: copies the final workspace, adds the task's hidden tests (`meta.hidden`, a
  folder) under `tests_dir`, runs them with unittest in the sandbox; reward 1 when they pass. The
  detail is the failing assertion (what the analyst shows).
- `workspace_files`: checks files of the final workspace against `meta.expect`:
  `{PATH: {"text": ...} | {"json": ...} | {"csv": [[...], ...]} | {"contains": ...} | {"absent": true}}`;
  reward 1 when every check holds, the detail names the first that fails with a short diff.

Both implement `score_workspace(task, prediction, workspace)`; `score` without a workspace is 0.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evolve.bench.sandbox import SandboxLimits, run_job
from evolve.bench.task import Task
from evolve.bench.tools import BUILTIN_FILE
from evolve.bench.verifiers import VerifierResult

MAX_READ = 1 << 20


class WorkspaceTestsOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tests_dir: str = Field("hidden_tests", pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
    """Folder (in a copy of the final workspace) the hidden tests are copied to and run from."""
    timeout_s: float = Field(30.0, gt=0, le=600)
    cpu_s: int = Field(30, ge=1, le=600)
    memory_mb: int = Field(512, ge=32)


def _failure_detail(report: str) -> str:
    """The lines that say why tests failed (assertion and error lines), at most 500 characters."""
    lines = [line.strip() for line in report.splitlines() if line.strip()]
    keep = [line for line in lines if line.startswith(("FAIL:", "ERROR:")) or "Error" in line.split(":")[0]]
    return "; ".join(dict.fromkeys(keep))[:500] or (lines[0] if lines else "no report")


class WorkspaceTests:
    """Run the task's hidden tests in a copy of the final workspace (see the module docstring)."""

    name = "workspace_tests"
    blocking = True

    def __init__(self, options: WorkspaceTestsOptions | None = None) -> None:
        self.options = options or WorkspaceTestsOptions()

    def score(self, task: Task, prediction: str) -> VerifierResult:
        return VerifierResult(0.0, False, None, "no workspace to test (the task names no meta.workspace)")

    def score_workspace(self, task: Task, prediction: str, workspace: Path) -> VerifierResult:
        hidden = task.meta.get("hidden")
        limits = SandboxLimits(timeout_s=self.options.timeout_s, cpu_s=self.options.cpu_s,
                               memory_mb=self.options.memory_mb, output_chars=20_000)
        with tempfile.TemporaryDirectory(prefix="evolve-verify-") as tmp:
            folder = Path(tmp) / "ws"
            shutil.copytree(workspace, folder, symlinks=False)
            target = folder / self.options.tests_dir
            shutil.rmtree(target, ignore_errors=True)
            if hidden:
                shutil.copytree(hidden, target)
            job = {"kind": "tool", "file": str(BUILTIN_FILE), "function": "run_tests",
                   "arguments": {"path": self.options.tests_dir}, "max_chars": limits.output_chars}
            run = run_job(job, folder, limits)
        if run.timed_out:
            return VerifierResult(0.0, True, "fail", f"hidden tests ran past {limits.timeout_s:g}s")
        reply = _last_json(run.stdout)
        report = str(reply.get("result") or reply.get("error") or run.stderr[-500:])
        passed = bool(reply.get("ok")) and report.startswith("PASSED")
        if passed:
            return VerifierResult(1.0, True, "pass", report.splitlines()[0])
        return VerifierResult(0.0, True, "fail", f"hidden tests failed: {_failure_detail(report)}")


def _last_json(text: str) -> dict[str, Any]:
    for line in reversed(text.splitlines()):
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return {}


class WorkspaceFilesOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    diff_lines: int = Field(8, ge=0, le=100)
    """Lines of unified diff shown in the detail of a failed `text` check."""


def _read(path: Path) -> str:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read(MAX_READ)


def _rows(text: str) -> list[list[str]]:
    return [[cell.strip() for cell in row] for row in csv.reader(io.StringIO(text)) if any(c.strip() for c in row)]


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip().splitlines()]


class WorkspaceFiles:
    """Check the final workspace's files against `meta.expect` (see the module docstring)."""

    name = "workspace_files"
    blocking = True

    def __init__(self, options: WorkspaceFilesOptions | None = None) -> None:
        self.options = options or WorkspaceFilesOptions()

    def score(self, task: Task, prediction: str) -> VerifierResult:
        return VerifierResult(0.0, False, None, "no workspace to check (the task names no meta.workspace)")

    def _check(self, root: Path, rel: str, want: dict[str, Any]) -> str | None:
        path = (root / rel).resolve()
        if not path.is_relative_to(root.resolve()):
            return f"{rel}: outside the workspace"
        if want.get("absent"):
            return f"{rel} should not exist" if path.exists() else None
        if not path.is_file():
            return f"{rel} is missing"
        got = _read(path)
        if "text" in want and _lines(got) != _lines(str(want["text"])):
            diff = list(difflib.unified_diff(_lines(str(want["text"])), _lines(got), "expected", "got", lineterm=""))
            return f"{rel} differs: " + " | ".join(diff[2:2 + self.options.diff_lines])
        if "contains" in want and str(want["contains"]) not in got:
            return f"{rel} does not contain {str(want['contains'])[:60]!r}"
        if "json" in want:
            try:
                value = json.loads(got)
            except json.JSONDecodeError as exc:
                return f"{rel} is not valid JSON ({exc.msg})"
            if value != want["json"]:
                return f"{rel} holds {json.dumps(value)[:160]}, expected {json.dumps(want['json'])[:160]}"
        if "csv" in want and _rows(got) != [[str(c) for c in row] for row in want["csv"]]:
            return f"{rel} rows differ: got {_rows(got)[:4]}"
        return None

    def score_workspace(self, task: Task, prediction: str, workspace: Path) -> VerifierResult:
        expect = task.meta.get("expect") or {}
        if not isinstance(expect, dict) or not expect:
            return VerifierResult(0.0, False, None, "the task has no meta.expect to check")
        failures = [f for rel, want in sorted(expect.items()) if (f := self._check(workspace, rel, dict(want)))]
        if not failures:
            return VerifierResult(1.0, True, "pass", f"{len(expect)} file check(s) hold")
        return VerifierResult(0.0, True, "fail", f"{len(failures)}/{len(expect)} file checks fail: {failures[0]}"[:600])
