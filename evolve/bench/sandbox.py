"""The sandbox for untrusted code, and the `python_tests` verifier built on it.

`run_job(job, folder, limits)` runs one job of `_sandbox_runner.py` (a program, a registered tool
call, or an opt-in shell command) in a separate Python process started in isolated mode (`-I`: no
user site, no PYTHON* variables) with:

- an environment that inherits nothing (no API keys): only PATH, HOME and TMPDIR (the folder), LANG;
- a wall-clock timeout that kills the whole process group;
- CPU, address-space and file-size limits (resource), no core files;
- its own empty network namespace where the machine allows one (`unshare -n`, or `unshare -rn` as an
  unprivileged user); `isolation()` says which layers are active;
- output written to files outside the folder and read back capped;
- for Python jobs, the runner's audit hook (defence in depth): no new processes, sockets, ctypes,
  writes outside the folder, reads outside the folder and the Python installation.

A timeout, crash or failed assertion is a result, never an exception. The `python_tests` verifier
runs each prediction in a fresh temporary folder.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evolve.bench.task import Task
from evolve.bench.verifiers import VerifierResult

RUNNER = Path(__file__).resolve().parent / "_sandbox_runner.py"
_FENCE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.DOTALL)
_SLOTS = threading.BoundedSemaphore(max(2, os.cpu_count() or 2))
"""Sandboxes running at once in this process (each is a separate process)."""


class SandboxLimits(BaseModel):
    """Limits of one sandboxed job."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: float = Field(10.0, gt=0, le=600)
    """Wall-clock limit; the whole process group is killed when it passes."""
    cpu_s: int = Field(10, ge=1, le=600)
    """CPU-seconds limit (RLIMIT_CPU)."""
    memory_mb: int = Field(512, ge=32)
    """Address-space limit (RLIMIT_AS)."""
    file_mb: int = Field(4, ge=1)
    """Largest file the job may write, its output included (RLIMIT_FSIZE)."""
    output_chars: int = Field(4000, ge=100, le=200_000)
    """Characters of a tool's result and output handed back to the policy."""


@dataclass(frozen=True)
class SandboxRun:
    """What a sandboxed job did."""

    returncode: int | None
    """Exit code (negative: killed by that signal), None when the wall clock ran out."""
    stdout: str
    stderr: str
    timed_out: bool
    seconds: float


def _probe(prefix: list[str]) -> bool:
    try:
        done = subprocess.run([*prefix, sys.executable, "-I", "-c", "pass"], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10, env={})
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


@functools.lru_cache(maxsize=1)
def _netns_prefix() -> tuple[str, ...]:
    """`unshare -n` (root) or `unshare -rn` (unprivileged user namespace) when it works here, else ()."""
    if os.environ.get("EVOLVE_SANDBOX_NETNS", "1") == "0":
        return ()
    exe = shutil.which("unshare")
    if exe is None or not hasattr(os, "geteuid"):
        return ()
    prefix = [exe, "-n"] if os.geteuid() == 0 else [exe, "-r", "-n"]
    return tuple(prefix) if _probe(prefix) else ()


def isolation() -> dict[str, str]:
    """Which isolation layers this machine gives sandboxed jobs (recorded in reports and docs)."""
    return {
        "process": "separate process group, killed at the wall-clock limit",
        "environment": "empty except PATH, HOME, TMPDIR, LANG",
        "limits": "RLIMIT_CPU, RLIMIT_AS, RLIMIT_FSIZE, RLIMIT_CORE",
        "network": "own empty network namespace" if _netns_prefix() else "audit hook only (no namespace here)",
        "python": "audit hook (defence in depth, not a boundary)",
        "user": "same user as the engine" + (" (root: RLIMIT_NPROC does not bind)" if os.geteuid() == 0 else ""),
    }


def _env(folder: Path) -> dict[str, str]:
    return {"PATH": os.defpath, "HOME": str(folder), "TMPDIR": str(folder), "LANG": "C.UTF-8"}


def _read(path: Path, limit: int) -> str:
    with open(path, "rb") as handle:
        return handle.read(limit).decode("utf-8", "replace")


def run_job(job: dict[str, Any], folder: Path, limits: SandboxLimits, *, read_limit: int = 1 << 22) -> SandboxRun:
    """Run one `_sandbox_runner.py` job with `folder` as its working directory (see the module docstring)."""
    payload = {**job, "limits": {"cpu_s": limits.cpu_s, "memory_mb": limits.memory_mb, "file_mb": limits.file_mb,
                                 **job.get("limits", {})}}
    argv = [*_netns_prefix(), sys.executable, "-I", "-B", str(RUNNER), json.dumps(payload)]
    with _SLOTS, tempfile.TemporaryDirectory(prefix="evolve-io-") as io_dir:
        out_path, err_path = Path(io_dir, "stdout"), Path(io_dir, "stderr")
        start = time.monotonic()
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(argv, cwd=folder, env=_env(folder), stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=err, start_new_session=True)
            timed_out = False
            try:
                proc.wait(timeout=limits.timeout_s)
            except subprocess.TimeoutExpired:
                timed_out = True
            _kill_group(proc)
            proc.wait()
        return SandboxRun(None if timed_out else proc.returncode, _read(out_path, read_limit),
                          _read(err_path, read_limit), timed_out, time.monotonic() - start)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill what is left of the job's process group (children it may have started)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class PythonTestsOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: float = Field(5.0, gt=0, le=600)
    """Wall-clock limit of one test run."""
    cpu_s: int = Field(5, ge=1, le=600)
    """CPU-seconds limit (RLIMIT_CPU)."""
    memory_mb: int = Field(512, ge=32)
    """Address-space limit (RLIMIT_AS)."""
    file_mb: int = Field(4, ge=1)
    """Largest file the code may write (RLIMIT_FSIZE)."""


def extract_code(prediction: str) -> str:
    """The code of a prediction: its longest ```python fenced block, else the whole text."""
    blocks = _FENCE.findall(prediction or "")
    return max(blocks, key=len) if blocks else (prediction or "")


def build_program(task: Task, code: str) -> str:
    """Solution + tests (+ `check(entry_point)` for HumanEval-style tasks)."""
    entry = task.meta.get("entry_point")
    prompt = task.meta.get("prompt", "")
    if entry and not re.search(rf"^\s*def\s+{re.escape(entry)}\s*\(", code, re.MULTILINE) and prompt:
        code = prompt + code
    program = f"{code}\n\n{task.target}\n"
    if entry:
        program += f"\ncheck({entry})\n"
    return program


def run_sandboxed(program: str, options: PythonTestsOptions) -> tuple[int | None, str]:
    """Run `program` in a fresh sandbox; return (exit code or None on timeout, stderr tail)."""
    limits = SandboxLimits(timeout_s=options.timeout_s, cpu_s=options.cpu_s, memory_mb=options.memory_mb,
                           file_mb=options.file_mb)
    with tempfile.TemporaryDirectory(prefix="evolve-sandbox-") as folder:
        Path(folder, "program.py").write_text(program, encoding="utf-8")
        run = run_job({"kind": "program"}, Path(folder), limits)
    if run.timed_out:
        return None, f"timeout after {options.timeout_s:g}s"
    return run.returncode, run.stderr[-2000:]


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


class PythonTests:
    """Reward 1 when the predicted code passes the task's tests (`target`) in the sandbox."""

    name = "python_tests"
    blocking = True
    """Runs a subprocess: the runtime calls it in a worker thread."""

    def __init__(self, options: PythonTestsOptions | None = None) -> None:
        self.options = options or PythonTestsOptions()

    def score(self, task: Task, prediction: str) -> VerifierResult:
        code = extract_code(prediction)
        if not code.strip():
            return VerifierResult(0.0, False, None, "no code")
        returncode, err = run_sandboxed(build_program(task, code), self.options)
        if returncode is None:
            return VerifierResult(0.0, True, None, err)
        if returncode == 0:
            return VerifierResult(1.0, True, None, "tests passed")
        if returncode < 0:
            return VerifierResult(0.0, True, None, f"killed by signal {-returncode} (resource limit)")
        return VerifierResult(0.0, True, None, _last_line(err) or f"exit code {returncode}")
