"""Start, health-check and stop a vLLM OpenAI-compatible server (`evolve serve`).

`serve_command` builds the `vllm serve` command line (a pure function). `ServerProcess` runs a
command in its own process group with its output in a log file, waits for the health check
(`GET /health`, then `GET /v1/models`) with a timeout, and stops it cleanly: SIGTERM to the group,
then SIGKILL after a grace period. Runs then talk to the server through litellm as
`hosted_vllm/<model>` with `--api-base http://HOST:PORT/v1`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from evolve.errors import BackendError, MissingExtraError


def serve_command(
    model: str,
    *,
    port: int = 8000,
    host: str = "127.0.0.1",
    gpu_memory_utilization: float = 0.9,
    max_model_len: int | None = None,
    extra_args: str = "",
    executable: str = "vllm",
) -> list[str]:
    """The `vllm serve` command line for these options (validated; `extra_args` is split like a shell)."""
    if not model.strip():
        raise BackendError("--model must name a model (a Hugging Face id or a local folder)")
    if not 1 <= port <= 65535:
        raise BackendError(f"--port must be between 1 and 65535, got {port}")
    if not 0.0 < gpu_memory_utilization <= 1.0:
        raise BackendError(f"--gpu-memory-utilization must be in (0, 1], got {gpu_memory_utilization}")
    if max_model_len is not None and max_model_len < 1:
        raise BackendError(f"--max-model-len must be positive, got {max_model_len}")
    command = [executable, "serve", model, "--host", host, "--port", str(port)]
    command += ["--gpu-memory-utilization", f"{gpu_memory_utilization:g}"]
    if max_model_len is not None:
        command += ["--max-model-len", str(max_model_len)]
    try:
        command += shlex.split(extra_args)
    except ValueError as exc:
        raise BackendError(f"--extra-args cannot be parsed: {exc}") from None
    return command


def vllm_executable() -> str:
    """The `vllm` command of this environment, or MissingExtraError."""
    if importlib.util.find_spec("vllm") is None:
        raise MissingExtraError("evolve serve", "vllm", "vllm")
    beside = Path(sys.executable).with_name("vllm")
    return str(beside) if beside.is_file() else (shutil.which("vllm") or "vllm")


def api_base_for(host: str, port: int) -> str:
    """The OpenAI-compatible base URL of a server on `host:port`."""
    return f"http://{host}:{port}/v1"


def _get(url: str, timeout_s: float) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, b""
    except (urllib.error.URLError, OSError):
        return 0, b""


def probe(api_base: str, timeout_s: float = 2.0) -> list[str] | None:
    """The served model ids when `/health` and `/v1/models` both answer 200, else None."""
    root = api_base.rstrip("/").removesuffix("/v1")
    status, _ = _get(f"{root}/health", timeout_s)
    if status != 200:
        return None
    status, body = _get(f"{root}/v1/models", timeout_s)
    if status != 200:
        return None
    try:
        return [str(item["id"]) for item in json.loads(body)["data"]]
    except (ValueError, KeyError, TypeError):
        return None


class ServerProcess:
    """A model server subprocess with a log file, a health check and a clean stop."""

    def __init__(self, command: Sequence[str], api_base: str, log_file: Path, env: dict[str, str] | None = None):
        self.command = list(command)
        self.api_base = api_base
        self.log_file = log_file
        self.env = env
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    def start(self) -> None:
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        self._log = self.log_file.open("ab")
        try:
            self.process = subprocess.Popen(
                self.command, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True, env=self.env
            )
        except OSError as exc:
            self._log.close()
            raise BackendError(f"cannot start {self.command[0]!r}: {exc.strerror or exc}") from None

    def wait_healthy(self, timeout_s: float = 600.0, poll_s: float = 1.0) -> list[str]:
        """Poll the health check until it passes; raise BackendError on exit or after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while True:
            if self.process is not None and self.process.poll() is not None:
                raise BackendError(
                    f"the server exited with code {self.process.returncode} before it was ready; see {self.log_file}"
                )
            models = probe(self.api_base, timeout_s=min(5.0, max(0.1, deadline - time.monotonic())))
            if models is not None:
                return models
            if time.monotonic() >= deadline:
                raise BackendError(f"the server at {self.api_base} was not healthy after {timeout_s:g}s; "
                                   f"see {self.log_file}")
            time.sleep(min(poll_s, max(0.0, deadline - time.monotonic())))

    def stop(self, grace_s: float = 15.0) -> int | None:
        """SIGTERM the process group, SIGKILL it after `grace_s`; return the exit code."""
        process = self.process
        if process is not None and process.poll() is None:
            _signal_group(process, signal.SIGTERM)
            try:
                process.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                _signal_group(process, signal.SIGKILL)
                process.wait(timeout=grace_s)
        if self._log is not None:
            self._log.close()
            self._log = None
        return None if process is None else process.returncode

    def __enter__(self) -> ServerProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _signal_group(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    try:
        os.killpg(os.getpgid(process.pid), sig)
    except (ProcessLookupError, PermissionError):
        pass
