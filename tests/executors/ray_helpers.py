"""Helpers of the Ray tests: the module's skip, a local cluster, CLI runs in subprocesses."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

SKIP_REASON = "needs the ray extra: pip install 'evolve-harness[ray]' (.ci/run installs it)"
EVOLVE = [str(Path(sys.executable).with_name("evolve"))]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def evolve_cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run `evolve ARGS` in a subprocess (the environment carries the test's EVOLVE_HOME)."""
    return subprocess.run([*EVOLVE, *args], capture_output=True, text=True, timeout=timeout, env=os.environ.copy())


def json_out(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout[proc.stdout.index("{"):])


def start_evolve(*args: str, log: Path) -> subprocess.Popen:
    """`evolve ARGS` in the background, in its own process group (its local Ray cluster dies with it)."""
    return subprocess.Popen([*EVOLVE, *args], stdout=log.open("w"), stderr=subprocess.STDOUT,
                            env=os.environ.copy(), start_new_session=True)


class RayHead:
    """`ray start --head --block` on 127.0.0.1 in its own process group: an external cluster a run can join,
    stopped by killing that group (never `ray stop`, which would stop every cluster of the machine)."""

    def __init__(self, tmp: Path) -> None:
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.log = tmp / "ray-head.log"
        ray_bin = Path(sys.executable).with_name("ray")
        self.process = subprocess.Popen(
            [str(ray_bin), "start", "--head", "--block", f"--port={self.port}", "--node-ip-address=127.0.0.1",
             "--num-cpus=2", "--include-dashboard=false", "--disable-usage-stats"],
            stdout=self.log.open("w"), stderr=subprocess.STDOUT, start_new_session=True, env=os.environ.copy())

    def wait_ready(self, timeout_s: float = 90) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"ray start exited: {self.log.read_text()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    time.sleep(2)  # the GCS answers before the raylet has registered
                    return
            except OSError:
                time.sleep(0.5)
        pytest.fail(f"ray head not up after {timeout_s}s: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
