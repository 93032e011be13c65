"""`evolve models` and `evolve serve` through the real command line."""

from __future__ import annotations

import importlib.util
import json

from typer.testing import CliRunner

from evolve.cli.app import app

runner = CliRunner()


def test_models_lists_backends_and_missing_extras():
    result = runner.invoke(app, ["models", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.output)}
    assert set(rows) == {"embedded", "mock", "litellm", "vllm", "trained"}
    has_vllm = importlib.util.find_spec("vllm") is not None
    assert rows["vllm"]["available"] == has_vllm
    assert (rows["vllm"]["install"] == "") == has_vllm


def test_models_table_shows_pip_install_for_missing_extras(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "vllm" else real(name, *a))
    result = runner.invoke(app, ["models"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "pip install 'evolve-harness[vllm]'" in result.output
    assert "embedded" in result.output and "trained:DIR" in result.output


def test_serve_without_vllm_is_a_one_line_error(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "vllm" else real(name, *a))
    result = runner.invoke(app, ["serve", "--model", "Qwen/Qwen3-0.6B"])
    assert result.exit_code == 2
    assert "pip install 'evolve-harness[vllm]'" in result.output
    assert "Traceback" not in result.output


def test_serve_reports_a_bad_option_before_a_missing_vllm(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "vllm" else real(name, *a))
    result = runner.invoke(app, ["serve", "--model", "Qwen/Qwen3-0.6B", "--port", "70000"])
    assert result.exit_code == 2
    assert "--port must be between 1 and 65535" in result.output and "vllm" not in result.output


def test_serve_starts_waits_for_health_prints_the_model_string_and_stops(tmp_path, monkeypatch):
    """A stand-in `vllm` executable serves the fake API for two seconds, then exits."""
    import socket
    import sys
    from pathlib import Path

    from evolve.cli import models_cmd

    fake = Path(__file__).with_name("fake_openai.py")
    script = tmp_path / "vllm"
    script.write_text(
        f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(fake.parent)!r})\nimport fake_openai\n"
        "args = sys.argv[1:]\nport = args[args.index('--port') + 1]\n"
        "fake_openai.main([port, args[1], '2'])\n"
    )
    script.chmod(0o755)
    monkeypatch.setattr(models_cmd, "vllm_executable", lambda: str(script))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = tmp_path / "vllm.log"
    result = runner.invoke(app, ["serve", "--model", "org/tiny", "--port", str(port), "--log-file", str(log),
                                 "--ready-timeout", "20"])
    assert result.exit_code == 0, result.output
    assert "model: hosted_vllm/org/tiny" in result.output
    assert f"api_base: http://127.0.0.1:{port}/v1" in result.output
    assert "serving org/tiny" in log.read_text()
