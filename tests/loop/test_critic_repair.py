"""Critic repair: a rejected model-written draft gets one revision, reviewed again."""

from __future__ import annotations

from scripted import REPAIR_REQUEST, LeakThenRepair, scripted_run
from typer.testing import CliRunner

from evolve.cli import app
from evolve.store import LineageStore


def llm_candidates(db: str):
    return {c.id: c for c in LineageStore(db).candidates("r") if c.origin == "llm"}


def test_a_revision_that_removes_the_leak_passes_and_is_evaluated(tmp_path):
    db = str(tmp_path / "fix.db")
    proposer = LeakThenRepair(fix=True)
    summary = scripted_run(db, proposer, rounds=1)
    store, cands = LineageStore(db), llm_candidates(db)
    original, revised = cands["r.0.0"], cands["r.0.0.repair"]
    assert original.status == "rejected_critic" and "copies evolve task" in original.reason
    assert not store.rollouts("r", harness_hash=original.harness_hash)
    assert original.meta["repair"] == {"candidate": "r.0.0.repair", "critic_reason": original.meta["repair"][
        "critic_reason"], "outcome": "passed the critic"}
    assert revised.meta["repair_of"] == "r.0.0" and "copies evolve task" in revised.meta["critic_reason"]
    assert [e["target"] for e in store.edits(revised.id)] == ["answer-format"]
    assert [x["verdict"] for x in store.critiques(revised.id)] == ["pass"]
    assert store.rollouts("r", harness_hash=revised.harness_hash), "the revision is evaluated"
    assert revised.status == "accepted" or summary["best_id"] in cands
    assert proposer.repair_requests == 1, "one repair (the second, identical draft is a duplicate)"
    last = store.get_candidate("r.0.0.repair").meta["proposal"]["messages"][-1]["content"]
    assert REPAIR_REQUEST in last and "copies evolve task" in last, "the critic's reason goes back"


def test_a_revision_that_repeats_the_leak_is_rejected_without_a_second_repair(tmp_path):
    db = str(tmp_path / "again.db")
    proposer = LeakThenRepair(fix=False)
    scripted_run(db, proposer, rounds=1)
    store, cands = LineageStore(db), llm_candidates(db)
    revised = [c for c in cands.values() if c.meta.get("repair_of")]
    assert revised and all(c.status == "rejected_critic" for c in revised)
    assert not any(c.id.endswith(".repair.repair") for c in cands.values())
    assert proposer.repair_requests == len(revised) == 1, "the second draft duplicates the first revision"
    assert all(not store.rollouts("r", harness_hash=c.harness_hash) for c in cands.values()
               if c.status == "rejected_critic")
    assert cands["r.0.0"].meta["repair"]["outcome"].startswith("rejected again (leakage)")


def test_critic_repair_can_be_switched_off(tmp_path):
    db = str(tmp_path / "off.db")
    proposer = LeakThenRepair(fix=True)
    scripted_run(db, proposer, rounds=1, proposer={"operator_drafts": 0, "critic_repair": False})
    assert proposer.repair_requests == 0
    assert not any(c.meta.get("repair_of") for c in llm_candidates(db).values())


def test_show_names_the_repair_and_its_outcome(tmp_path):
    db = str(tmp_path / "show.db")
    scripted_run(db, LeakThenRepair(fix=True), rounds=1)
    shown = CliRunner().invoke(app, ["show", "r.0.0", "--db", db])
    assert shown.exit_code == 0, shown.output
    assert "critic repair: revised as r.0.0.repair: passed the critic" in shown.output
    revised = CliRunner().invoke(app, ["show", "r.0.0.repair", "--db", db])
    assert "revision of r.0.0 after the critic's reason" in revised.output
