"""The `python_tests` verifier: run the predicted code against unit tests in a subprocess sandbox.

Each prediction runs in a fresh temporary folder, in a separate Python process started in isolated
mode (`-I`: no user site, no PYTHON* variables) with an environment that inherits nothing (no API
keys), a wall-clock timeout (the whole process group is killed), CPU, memory and file-size limits
(resource), and an audit hook that refuses writes outside the folder, new processes, sockets and
ctypes. A timeout, crash or failed assertion is reward 0, never an exception.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from evolve.bench.task import Task
from evolve.bench.verifiers import VerifierResult

RUNNER = Path(__file__).resolve().parent / "_sandbox_runner.py"
_FENCE = re.compile(r"```(?:python|py)?\s*\n(.*?)```", re.DOTALL)


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
    limits = {"cpu_s": options.cpu_s, "memory_mb": options.memory_mb, "file_mb": options.file_mb}
    with tempfile.TemporaryDirectory(prefix="evolve-sandbox-") as folder:
        Path(folder, "program.py").write_text(program, encoding="utf-8")
        env = {"PATH": os.defpath, "HOME": folder, "TMPDIR": folder, "LANG": "C.UTF-8"}
        proc = subprocess.Popen(
            [sys.executable, "-I", "-B", str(RUNNER), json.dumps(limits)], cwd=folder, env=env,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            _, err = proc.communicate(timeout=options.timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.communicate()
            return None, f"timeout after {options.timeout_s:g}s"
        return proc.returncode, err.decode("utf-8", "replace")[-2000:]


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


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
