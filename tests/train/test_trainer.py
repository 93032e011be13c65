"""Training on tiny data on the CPU: the loss goes down, the weights change, the result loads as
`trained:DIR` and proposes valid edits through LLMProposer."""

from __future__ import annotations

import asyncio
import json
import random

import pytest

pytest.importorskip("torch", reason="needs the train extra: pip install -e '.[train]' (.ci/run installs it)")
pytest.importorskip("transformers", reason="needs the train extra: pip install -e '.[train]' (.ci/run installs it)")

from train_lineage import build
from train_tiny_model import make_tiny_model

from evolve.errors import ConfigError
from evolve.train.dataset import ProposalSample, ProposerDataset, build_dataset
from evolve.train.trainer import TrainConfig, read_manifest, train


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from train_lineage import messages

    corpus = [json.dumps(m) for r in ("ra", "rb") for i in range(3) for m in messages(r, i)]
    corpus += ['{"edits": [{"op": "add", "component": "system", "target": "balance", "value": "negative"}]}'] * 5
    return make_tiny_model(tmp_path_factory.mktemp("tiny") / "base", corpus)


def _weights(folder):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(folder))
    return {k: v.clone() for k, v in model.state_dict().items()}


@pytest.mark.parametrize(("method", "lora"), [("rwsft", False), ("dpo", False), ("dpo", True)])
def test_few_steps_lower_the_loss_and_change_the_weights(tmp_path, tiny, method, lora):
    import torch

    from evolve.backends.trained import load_trained

    data = build_dataset(build(str(tmp_path / "l.db")), ["ra", "rb"], seed=0, heldout=0.0)
    data = data.model_copy(update={"pairs": data.pairs[:4], "samples": data.samples[:10]})
    cfg = TrainConfig(method=method, base=str(tiny), lr=3e-3 if not lora else 2e-2, batch=4, epochs=6,
                      seed=0, lora=lora, max_length=128, max_reply=64)
    manifest = train(data, cfg, tmp_path / "out")
    assert manifest.steps == 6 and len(manifest.losses) == manifest.steps
    assert manifest.losses[-1] < manifest.losses[0]
    assert read_manifest(tmp_path / "out") == manifest
    assert (tmp_path / "out" / "checkpoints" / "step-2").is_dir()
    before = _weights(tiny)
    model, _, _ = load_trained(tmp_path / "out")
    after = model.state_dict()
    changed = [k for k in before if not torch.equal(before[k], after[k])]
    assert changed


def test_too_little_data_names_the_counts(tmp_path, tiny):
    data = ProposerDataset(runs=["ra"], samples=[ProposalSample(
        group="g", run_id="ra", candidate_id="c", parent_id="p", parent_hash="h", round=0, origin="llm",
        status="accepted", reward=1.0, messages=[{"role": "user", "content": "x"}], reply="{}")])
    with pytest.raises(ConfigError, match=r"dpo: 0 training preference pair\(s\).*minimum 2"):
        train(data, TrainConfig(method="dpo", base=str(tiny)), tmp_path / "o")
    with pytest.raises(ConfigError, match=r"rwsft: 1 training sample\(s\) with reward > 0.*minimum 2"):
        train(data, TrainConfig(method="rwsft", base=str(tiny)), tmp_path / "o")


@pytest.fixture(scope="module")
def tiny_proposer(tmp_path_factory):
    from evolve.harness.io import load_harness
    from evolve.loop.proposer import ProposerContext, render_messages
    from evolve.paths import data_dir

    ctx = ProposerContext(incumbent=load_harness(data_dir("harnesses") / "minimal"), budget=1)
    reply = '{"edits": [{"op": "add", "component": "system", "target": "balance", "value": "Say negative.", '
    corpus = [reply + '"hypothesis": "h"}]}'] * 5 + [m["content"] for m in render_messages(ctx, 0)]
    return make_tiny_model(tmp_path_factory.mktemp("tinyp") / "base", corpus)


def test_trained_proposer_loads_as_backend_and_proposes_valid_edits(tmp_path, tiny_proposer):
    from evolve.backends import get_backend
    from evolve.harness.io import load_harness
    from evolve.loop.proposer import LLMProposer, ProposerContext, render_messages
    from evolve.paths import data_dir

    ctx = ProposerContext(incumbent=load_harness(data_dir("harnesses") / "minimal"), budget=1)
    reply = json.dumps({"edits": [{"op": "add", "component": "system", "target": "balance",
                                   "value": "Say negative.", "hypothesis": "h"}]})
    sample = ProposalSample(group="g", run_id="r", candidate_id="c", parent_id="p", parent_hash="h", round=0,
                            origin="llm", status="accepted", reward=1.0, messages=render_messages(ctx, 0),
                            reply=reply)
    data = ProposerDataset(runs=["r"], samples=[sample, sample.model_copy(update={"candidate_id": "d"})])
    manifest = train(data, TrainConfig(method="rwsft", base=str(tiny_proposer), lr=3e-3, batch=2, epochs=150,
                                       lora=False, max_length=112, max_reply=48), tmp_path / "p")
    assert manifest.losses[-1] < 0.05
    backend = get_backend(f"trained:{tmp_path / 'p'}", cache=False)
    drafts = asyncio.run(LLMProposer(backend, temperature=0.0, max_tokens=80).propose(ctx, 1, random.Random(0)))
    assert drafts[0].error is None, drafts[0].reply
    assert [(e.op, e.component, e.target) for e in drafts[0].edits] == [("add", "system", "balance")]


def test_backend_failures_are_completions_not_exceptions(tmp_path, tiny):
    from evolve.backends.base import Request
    from evolve.backends.trained import TrainedBackend

    data = build_dataset(build(str(tmp_path / "l.db"), runs=("ra",), rounds=1), ["ra"], heldout=0.0)
    train(data, TrainConfig(method="rwsft", base=str(tiny), max_steps=1, lora=True, max_length=64, max_reply=32),
          tmp_path / "o")
    backend = TrainedBackend(tmp_path / "o")
    ok, bad = asyncio.run(backend.complete([
        Request(messages=({"role": "user", "content": "hi"},), max_tokens=5, temperature=0.8, seed=3),
        Request(messages=({"role": "user", "content": "hi"},), max_tokens=0)]))
    assert ok.ok and 0 < ok.usage.completion_tokens <= 5 and ok.usage.prompt_tokens > 0
    assert not bad.ok and bad.text == "" and bad.error.startswith("trained:")


def test_missing_folder_or_manifest_is_a_one_line_error(tmp_path):
    from evolve.backends import get_backend
    from evolve.errors import BackendError

    with pytest.raises(BackendError, match="no such folder"):
        get_backend(f"trained:{tmp_path / 'none'}")
    with pytest.raises(ConfigError, match=r"no manifest\.json"):
        get_backend(f"trained:{tmp_path}")
