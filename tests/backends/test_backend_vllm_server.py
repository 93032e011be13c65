"""`evolve serve` pieces: the command line, the health check and the process lifecycle (no GPU needed)."""

from __future__ import annotations

import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from evolve.backends.vllm_server import ServerProcess, api_base_for, probe, serve_command
from evolve.errors import BackendError

FAKE_SERVER = Path(__file__).with_name("fake_openai.py")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_serve_command_is_built_from_options():
    command = serve_command("Qwen/Qwen3-8B", port=8123, gpu_memory_utilization=0.85, max_model_len=4096,
                            extra_args="--dtype bfloat16 --served-model-name 'q 8b'", executable="/venv/bin/vllm")
    assert command == [
        "/venv/bin/vllm", "serve", "Qwen/Qwen3-8B", "--host", "127.0.0.1", "--port", "8123",
        "--gpu-memory-utilization", "0.85", "--max-model-len", "4096",
        "--dtype", "bfloat16", "--served-model-name", "q 8b",
    ]
    assert "--max-model-len" not in serve_command("m")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"port": 0}, "--port"),
        ({"gpu_memory_utilization": 1.5}, "--gpu-memory-utilization"),
        ({"max_model_len": 0}, "--max-model-len"),
        ({"extra_args": "--x 'unclosed"}, "--extra-args"),
    ],
)
def test_serve_command_rejects_bad_options(kwargs, message):
    with pytest.raises(BackendError, match=message):
        serve_command("m", **kwargs)


def test_probe_needs_health_and_models(fake_server):
    assert probe(fake_server.api_base) == ["fake-model"]
    fake_server.healthy = False
    assert probe(fake_server.api_base) is None
    assert probe(api_base_for("127.0.0.1", _free_port()), timeout_s=0.5) is None


def test_wait_healthy_waits_for_a_starting_server(fake_server, tmp_path):
    fake_server.healthy = False
    threading.Timer(0.6, lambda: setattr(fake_server, "healthy", True)).start()
    server = ServerProcess(["unused"], fake_server.api_base, tmp_path / "log.txt")
    assert server.wait_healthy(timeout_s=10, poll_s=0.1) == ["fake-model"]
    assert fake_server.health_checks >= 3


def test_wait_healthy_times_out_without_hanging(fake_server, tmp_path):
    fake_server.healthy = False
    server = ServerProcess(["unused"], fake_server.api_base, tmp_path / "log.txt")
    start = time.monotonic()
    with pytest.raises(BackendError, match=r"not healthy after 0\.5s"):
        server.wait_healthy(timeout_s=0.5, poll_s=0.1)
    assert time.monotonic() - start < 3


def test_server_process_starts_logs_and_stops(tmp_path):
    port = _free_port()
    log = tmp_path / "logs" / "server.log"
    server = ServerProcess([sys.executable, str(FAKE_SERVER), str(port)], api_base_for("127.0.0.1", port), log)
    with server:
        assert server.wait_healthy(timeout_s=20, poll_s=0.1) == ["fake-model"]
        pid = server.process.pid
    assert server.process.returncode is not None  # stopped by SIGTERM
    assert "serving fake-model on" in log.read_text()
    with pytest.raises(ProcessLookupError):
        __import__("os").kill(pid, 0)


def test_server_that_exits_early_is_reported(tmp_path):
    log = tmp_path / "server.log"
    server = ServerProcess([sys.executable, "-c", "print('bad flag'); raise SystemExit(3)"],
                           api_base_for("127.0.0.1", _free_port()), log)
    server.start()
    with pytest.raises(BackendError, match="exited with code 3"):
        server.wait_healthy(timeout_s=20, poll_s=0.1)
    server.stop()
    assert "bad flag" in log.read_text()


def test_stop_kills_a_process_that_ignores_sigterm(tmp_path):
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(60)"
    server = ServerProcess([sys.executable, "-c", code], "http://127.0.0.1:1/v1", tmp_path / "log")
    server.start()
    deadline = time.monotonic() + 10
    while "up" not in (tmp_path / "log").read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    start = time.monotonic()
    assert server.stop(grace_s=0.5) == -9
    assert time.monotonic() - start < 5


def test_missing_executable_is_a_clear_error(tmp_path):
    server = ServerProcess([str(tmp_path / "no-such-vllm")], "http://127.0.0.1:1/v1", tmp_path / "log")
    with pytest.raises(BackendError, match="cannot start"):
        server.start()


@pytest.mark.gpu
def test_real_vllm_server_answers_through_litellm(tmp_path):
    """Start `vllm serve` on a small model (EVOLVE_TEST_VLLM_MODEL) and complete one request through litellm."""
    import asyncio
    import os

    from evolve.backends import Request, get_backend
    from evolve.backends.vllm_server import vllm_executable

    model = os.environ.get("EVOLVE_TEST_VLLM_MODEL", "Qwen/Qwen2.5-0.5B-Instruct")
    port = _free_port()
    command = serve_command(model, port=port, gpu_memory_utilization=0.3, max_model_len=2048,
                            executable=vllm_executable())
    with ServerProcess(command, api_base_for("127.0.0.1", port), tmp_path / "vllm.log") as server:
        [served] = server.wait_healthy(timeout_s=600, poll_s=2)
        backend = get_backend(f"hosted_vllm/{served}", api_base=server.api_base, cache=False)
        request = Request(messages=({"role": "system", "content": "Answer briefly."},
                                    {"role": "user", "content": "What is the capital of France?"}), max_tokens=16)
        [done] = asyncio.run(backend.complete([request]))
    assert done.ok, done.error
    assert "paris" in done.text.lower() and done.usage.completion_tokens > 0
