"""`evolve serve --replicas 2 --executor ray`: replicas as Ray actors holding one GPU each (stand-in `vllm`,
GPUs declared to a local Ray cluster, none used)."""

from __future__ import annotations

import pytest
from ray_helpers import SKIP_REASON

ray = pytest.importorskip("ray", reason=SKIP_REASON)

from standin_vllm import free_ports, write_standin  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from evolve.cli import app  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.timeout(300)]


def test_replicas_as_ray_actors_get_one_gpu_each(tmp_path, monkeypatch):
    standin = write_standin(tmp_path, seconds=10)
    monkeypatch.setattr("evolve.cli.models_cmd.vllm_executable", lambda: str(standin))
    port = free_ports(2)
    ray.init(address="local", num_cpus=2, num_gpus=2, include_dashboard=False, logging_level="ERROR",
             log_to_driver=False)
    try:
        result = CliRunner().invoke(app, ["serve", "--model", "fake-model", "--replicas", "2", "--port", str(port),
                                          "--executor", "ray", "--log-file", str(tmp_path / "logs" / "x.log"),
                                          "--ready-timeout", "60"])
        assert ray.is_initialized()  # a cluster the command did not start stays up
    finally:
        ray.shutdown()
    assert result.exit_code == 0, result.output
    assert f"http://127.0.0.1:{port}/v1" in result.output and f"http://127.0.0.1:{port + 1}/v1" in result.output
    logs = [(tmp_path / "logs" / f"vllm-{p}.log").read_text() for p in (port, port + 1)]
    seen = sorted(line.split("=", 1)[1] for log in logs for line in log.splitlines()
                  if line.startswith("CUDA_VISIBLE_DEVICES="))
    assert seen == ["0", "1"]  # Ray gave each replica its own GPU
