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
