"""`evolve serve --replicas N`: N servers, one GPU and one port each (a stand-in `vllm`; no GPU needed)."""

from __future__ import annotations

import pytest
from standin_vllm import free_ports, write_standin
from typer.testing import CliRunner

from evolve.backends.replicas import plan_replicas
from evolve.cli import app
from evolve.errors import BackendError


def test_plans_give_each_replica_a_gpu_and_a_port():
    plans = plan_replicas("m", 3, port=9000, executable="vllm")
    assert [(p.gpu, p.port) for p in plans] == [("0", 9000), ("1", 9001), ("2", 9002)]
    assert plans[2].command[:3] == ["vllm", "serve", "m"] and "9002" in plans[2].command
    assert [p.gpu for p in plan_replicas("m", 2, gpus=["4", "6"])] == ["4", "6"]
    with pytest.raises(BackendError, match="--replicas"):
        plan_replicas("m", 0)
    with pytest.raises(BackendError, match="--gpus"):
        plan_replicas("m", 3, gpus=["0"])
    with pytest.raises(BackendError, match="--port"):
        plan_replicas("m", 2, port=65535)


def test_serve_replicas_start_one_server_per_gpu(tmp_path, monkeypatch):
    standin = write_standin(tmp_path, seconds=8)
    monkeypatch.setattr("evolve.cli.models_cmd.vllm_executable", lambda: str(standin))
    port = free_ports(2)
    result = CliRunner().invoke(app, ["serve", "--model", "fake-model", "--replicas", "2", "--port", str(port),
                                      "--log-file", str(tmp_path / "logs" / "x.log"), "--ready-timeout", "30"])
    assert result.exit_code == 0, result.output
    bases = f"http://127.0.0.1:{port}/v1,http://127.0.0.1:{port + 1}/v1"
    assert f"api_base: {bases}" in result.output
    logs = [(tmp_path / "logs" / f"vllm-{p}.log").read_text() for p in (port, port + 1)]
    assert "CUDA_VISIBLE_DEVICES=0" in logs[0] and "CUDA_VISIBLE_DEVICES=1" in logs[1]
    assert all("serving fake-model" in log for log in logs)


def test_serve_replicas_bad_options_are_one_line_errors(tmp_path, monkeypatch):
    monkeypatch.setattr("evolve.cli.models_cmd.vllm_executable", lambda: "vllm")
    result = CliRunner().invoke(app, ["serve", "--model", "m", "--replicas", "0"])
    assert result.exit_code == 2 and "--replicas must be at least 1" in result.output
    result = CliRunner().invoke(app, ["serve", "--model", "m", "--replicas", "2", "--executor", "spark"])
    assert result.exit_code == 2 and "--executor must be local or ray" in result.output
