"""Proposer budgets default from the proposer model; explicit settings win."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from evolve.backends.mock import MockBackend
from evolve.cli import app
from evolve.errors import ConfigError
from evolve.loop.model_budgets import SMALL, derive
from evolve.loop.setup import build_parts, build_plan
from evolve.run_config import make_config


def budgets(**options):
    return build_plan(make_config(**options))["proposer_budgets"]


def values(b):
    return {k: b[k] for k in SMALL}


@pytest.mark.parametrize("model", ["embedded", "mock", "trained:some/dir"])
def test_small_models_get_the_small_limits(model):
    b = budgets(model=model)
    assert values(b) == {"context_chars": 6000, "evidence_chars": 3000, "proposer_max_tokens": 512}
    assert b["explicit"] == [] and "small limits" in b["source"]


def test_a_model_litellm_knows_gets_budgets_from_its_context_window():
    b = budgets(model="openai/gpt-4o")  # 128k input tokens in litellm's bundled model map
    assert values(b) == {"context_chars": 120_000, "evidence_chars": 30_000, "proposer_max_tokens": 4096}
    assert b["source"] == "litellm model info (128000 context tokens)"
    small = budgets(model="ollama/llama3")  # 8192 tokens
    assert values(small) == {"context_chars": 16_384, "evidence_chars": 4096, "proposer_max_tokens": 1024}


def test_the_proposer_role_decides_not_the_policy():
    b = budgets(model="embedded", proposer_model="openai/gpt-4o")
    assert b["context_chars"] == 120_000
    assert values(budgets(model="openai/gpt-4o", proposer_model="none")) == SMALL


def test_explicit_values_win():
    b = budgets(model="openai/gpt-4o", proposer={"context_chars": 9000, "proposer_max_tokens": 300})
    assert values(b) == {"context_chars": 9000, "evidence_chars": 30_000, "proposer_max_tokens": 300}
    assert sorted(b["explicit"]) == ["context_chars", "proposer_max_tokens"]
    assert values(budgets(model="mock", proposer={"evidence_chars": 5000}))["evidence_chars"] == 5000


def test_a_profile_serves_models_litellm_does_not_know(tmp_path):
    unknown = budgets(model="hosted_vllm/Qwen3-8B", api_base="http://127.0.0.1:9/v1")
    assert values(unknown) == SMALL and "no profile" in unknown["source"]
    run_file = tmp_path / "run.yaml"
    run_file.write_text("model: hosted_vllm/Qwen3-8B\napi_base: http://127.0.0.1:9/v1\n"
                        "profile: {context_tokens: 32768, max_output_tokens: 2048}\n", encoding="utf-8")
    b = build_plan(make_config(run_file))["proposer_budgets"]
    assert values(b) == derive(32768, 2048) == {"context_chars": 65_536, "evidence_chars": 16_384,
                                                "proposer_max_tokens": 2048}
    run_file.write_text("profile: {context_tokens: 10}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"run.yaml.*profile.context_tokens"):
        make_config(run_file)
    run_file.write_text("profile: {window: 4096}\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["run", "--config", str(run_file), "--dry-run"])
    assert result.exit_code == 2 and "profile" in result.output and "Traceback" not in result.output


def test_the_run_uses_the_resolved_budgets():
    parts = build_parts(make_config(model="openai/gpt-4o", cache=False), policy=MockBackend(), helper=MockBackend())
    assert parts.proposer.max_tokens == 4096 and parts.proposer.max_context_chars == 120_000
    assert parts.loop.evidence_chars == 30_000
    parts = build_parts(make_config(model="mock", cache=False))
    assert (parts.proposer.max_tokens, parts.proposer.max_context_chars, parts.loop.evidence_chars) == (512, 6000, 3000)


def test_dry_run_shows_the_resolved_budgets():
    result = CliRunner().invoke(app, ["run", "--dry-run", "--model", "mock", "--proposer-model", "openai/gpt-4o"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)["proposer_budgets"]
    assert shown["context_chars"] == 120_000 and shown["source"].startswith("litellm model info")
