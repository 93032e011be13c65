"""Dataset building from a fixture lineage: samples, rewards, pairs, held-out split, JSONL."""

from __future__ import annotations

import json

import pytest
from train_lineage import build

from evolve.errors import ConfigError, StoreError
from evolve.train.dataset import (
    PreferencePair,
    ProposalSample,
    build_dataset,
    heldout_groups,
    read_jsonl,
    reward_of,
    write_jsonl,
)


@pytest.fixture
def store(tmp_path):
    return build(str(tmp_path / "l.db"))


def test_samples_cover_every_outcome_with_rewards_and_contexts(store):
    data = build_dataset(store, ["ra", "rb"], seed=0, heldout=0.0)
    assert len(data.samples) == 2 * 3 * 5  # pruner ablations and seeds are skipped
    by_id = {s.candidate_id: s for s in data.samples}
    acc, rej, crit, inv, op = (by_id[f"ra.1.{i}"] for i in range(5))
    assert (acc.reward, acc.accepted, acc.critic, acc.delta) == (1.0, True, "pass", 0.12)
    assert rej.reward == pytest.approx(-0.25) and not rej.accepted
    assert crit.reward == -0.5 and crit.critic == "reject"
    assert inv.reward == -1.0 and inv.reply == '{"edits": [' and inv.critic is None
    assert op.origin == "fewshot" and op.reward == pytest.approx(0.2)
    assert op.messages == acc.messages  # an operator borrows the group's LLM context
    assert json.loads(acc.reply) == {"edits": [{"op": "add", "component": "system", "target": "balance1",
                                                "value": "Say negative when the buyer complains.",
                                                "hypothesis": "balance helps"}]}
    assert acc.parent_id == "ra.0.0" and acc.group == "ra:ra.0.0:1" and acc.budget == 2
    assert acc.parent_hash == store.get_candidate("ra.0.0").harness_hash


def test_pairs_prefer_higher_reward_within_one_group(store):
    data = build_dataset(store, ["ra"], seed=0, heldout=0.0)
    assert data.pairs and all(p.chosen_reward - p.rejected_reward >= 0.1 for p in data.pairs)
    assert all(p.chosen_id.split(".")[:2] == p.rejected_id.split(".")[:2] for p in data.pairs)
    # 5 proposals with 5 distinct rewards: every pair of them, in each of 3 rounds
    assert len(data.pairs) == 3 * 10
    top = [p for p in data.pairs if p.chosen_id == "ra.0.0"]
    assert {p.rejected_id for p in top} == {"ra.0.1", "ra.0.2", "ra.0.3", "ra.0.4"}
    # among rejected proposals, the larger ΔS wins
    assert any(p.chosen_id == "ra.0.4" and p.rejected_id == "ra.0.1" for p in data.pairs)


def test_heldout_split_is_by_group_seeded_and_deterministic(store):
    a = build_dataset(store, ["ra", "rb"], seed=1, heldout=0.34)
    b = build_dataset(store, ["ra", "rb"], seed=1, heldout=0.34)
    assert a == b and len(a.heldout_groups) == 3
    for s in a.samples:
        assert (s.split == "heldout") == (s.group in a.heldout_groups)
    assert all(p.split == ("heldout" if p.group in a.heldout_groups else "train") for p in a.pairs)
    groups = sorted({s.group for s in a.samples})
    others = {tuple(heldout_groups(groups, seed, 0.34)) for seed in range(8)}
    assert len(others) > 1  # the seed matters
    assert heldout_groups(groups[:2], 0, 0.01) and heldout_groups(groups[:1], 0, 0.5) == []


def test_jsonl_round_trip(store, tmp_path):
    data = build_dataset(store, ["ra", "rb"], seed=0)
    paths = write_jsonl(data, tmp_path / "out")
    assert read_jsonl(paths["samples"], ProposalSample) == data.samples
    assert read_jsonl(paths["pairs"], PreferencePair) == data.pairs
    first = json.loads(paths["pairs"].read_text().splitlines()[0])
    assert set(first) == {"group", "split", "messages", "chosen", "rejected", "chosen_id", "rejected_id",
                          "chosen_reward", "rejected_reward"}


def test_reward_scale():
    assert reward_of("accepted", None) == 1.0
    assert reward_of("rejected_acceptance", 1.0) == 0.5 and reward_of("rejected_acceptance", -1.0) == -0.5
    assert reward_of("rejected_acceptance", None) == 0.0
    assert reward_of("rejected_critic", None) == -0.5 and reward_of("rejected_invalid", None) == -1.0


def test_bad_input_is_one_line_error(store):
    with pytest.raises(StoreError, match="unknown run 'nope'"):
        build_dataset(store, ["nope"])
    with pytest.raises(ConfigError, match="--heldout"):
        build_dataset(store, ["ra"], heldout=1.5)


def test_mock_engine_run_gives_llm_and_operator_samples(tmp_path):
    from engine_mocks import RUN_OPTIONS, backends

    from evolve import api
    from evolve.store import LineageStore

    policy, helper = backends()
    db = str(tmp_path / "m.db")
    api.run(db=db, run_id="m1", policy=policy, helper=helper, **{**RUN_OPTIONS, "rounds": 2})
    data = build_dataset(LineageStore(db), ["m1"], heldout=0.0)
    origins = {s.origin for s in data.samples}
    assert "llm" in origins and len(origins) > 1
    llm = [s for s in data.samples if s.origin == "llm"]
    assert all(s.messages[0]["role"] == "system" and "edits" in s.reply for s in llm)
