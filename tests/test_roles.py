"""Role resolution: each role defaults to the one before it; equal (model, API base) pairs share a backend."""

from __future__ import annotations

import pytest

from evolve.backends.mock import MockBackend
from evolve.errors import BackendError, ConfigError
from evolve.roles import distinct, public_roles, resolve_roles, role_backends, roles_line
from evolve.run_config import RunConfig, make_config


def _models(config: RunConfig) -> dict[str, tuple[str, str | None, str | None]]:
    return {role: (s.model, s.api_base, s.inherited_from) for role, s in resolve_roles(config).items()}


def test_every_role_defaults_to_the_one_before_it():
    assert _models(RunConfig(model="hosted_vllm/p", api_base="http://a/v1")) == {
        "policy": ("hosted_vllm/p", "http://a/v1", None),
        "proposer": ("hosted_vllm/p", "http://a/v1", "policy"),
        "critic": ("hosted_vllm/p", "http://a/v1", "proposer"),
        "judge": ("hosted_vllm/p", "http://a/v1", "critic"),
    }
    chained = _models(RunConfig(model="embedded", proposer_model="openai/gpt-4.1", critic_model="mock"))
    assert chained["proposer"] == ("openai/gpt-4.1", None, None)
    assert chained["critic"] == ("mock", None, None) and chained["judge"] == ("mock", None, "critic")


def test_a_role_with_its_own_model_does_not_take_the_policy_server():
    roles = _models(RunConfig(model="hosted_vllm/local", api_base="http://gpu:8000/v1",
                              proposer_model="openai/gpt-4.1"))
    assert roles["proposer"] == ("openai/gpt-4.1", None, None)
    assert roles["judge"] == ("openai/gpt-4.1", None, "critic")


def test_an_api_base_alone_points_the_inherited_model_elsewhere():
    roles = _models(RunConfig(model="hosted_vllm/q", api_base="http://one/v1", judge_api_base="http://two/v1"))
    assert roles["critic"] == ("hosted_vllm/q", "http://one/v1", "proposer")
    assert roles["judge"] == ("hosted_vllm/q", "http://two/v1", "critic")


def test_run_file_keys_mirror_the_options(tmp_path):
    run_file = tmp_path / "run.yaml"
    run_file.write_text("model: mock\nproposer_model: hosted_vllm/x\nproposer_api_base: http://h/v1\n"
                        "judge_model: openai/gpt-4.1-mini\n", encoding="utf-8")
    roles = _models(make_config(run_file, critic_model="mock"))
    assert roles["proposer"] == ("hosted_vllm/x", "http://h/v1", None)
    assert roles["critic"] == ("mock", None, None) and roles["judge"] == ("openai/gpt-4.1-mini", None, None)
    bad = tmp_path / "bad.yaml"
    bad.write_text("critic_models: mock\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="critic_models"):
        make_config(bad)


def test_stored_form_masks_credentials_and_reads_as_one_line():
    roles = resolve_roles(RunConfig(model="mock", proposer_model="hosted_vllm/x",
                                    proposer_api_base="http://user:hunter2secret@host:8000/v1"))
    stored = public_roles(roles)
    assert "hunter2secret" not in str(stored) and stored["proposer"]["api_base"] == "http://***@host:8000/v1"
    assert roles_line(stored) == ("policy mock · proposer hosted_vllm/x @ http://***@host:8000/v1 · "
                                  "critic hosted_vllm/x @ http://***@host:8000/v1 (= proposer) · "
                                  "judge hosted_vllm/x @ http://***@host:8000/v1 (= critic)")


def test_roles_with_the_same_model_share_one_backend():
    built: list[str] = []

    def build(spec):
        built.append(spec.model)
        return MockBackend(name=spec.model)

    same = role_backends(resolve_roles(RunConfig(model="mock", critic_model="mock")), build)
    assert built == ["mock"] and len(distinct(same)) == 1
    built.clear()
    split = role_backends(resolve_roles(RunConfig(model="mock", proposer_model="p/x", judge_model="mock")), build)
    assert built == ["mock", "p/x"]
    assert split["policy"] is split["judge"] and split["proposer"] is split["critic"]
    assert len(distinct(split)) == 2


def test_injected_backends_replace_roles_and_are_inherited():
    policy, helper, judge = MockBackend(), MockBackend(), MockBackend()
    roles = resolve_roles(RunConfig(model="mock"))
    out = role_backends(roles, lambda spec: pytest.fail("nothing to build"),
                        {"policy": policy, "proposer": helper, "critic": helper, "judge": judge})
    assert out["policy"].inner is policy and out["judge"].inner is judge
    assert out["proposer"] is out["critic"] and out["proposer"].inner is helper
    inherited = role_backends(roles, lambda spec: pytest.fail("nothing to build"), {"policy": policy})
    assert len(distinct(inherited)) == 1


def test_a_bad_role_model_names_its_option():
    roles = resolve_roles(RunConfig(model="mock", critic_model="nosuch:thing"))
    from evolve.backends import get_backend

    with pytest.raises(BackendError, match=r"^--critic-model nosuch:thing: unknown model string"):
        role_backends(roles, lambda spec: get_backend(spec.model, api_base=spec.api_base, cache=False))
