"""Whole runs with scripted proposers: a competent one that reads the evidence, and a cheating one."""

from __future__ import annotations

import json

from loop_helpers import harness
from scripted import (
    FORMAT_TEXT,
    UNPARSABLE,
    CheatingProposer,
    CompetentProposer,
    run_table,
    scripted_run,
    truth_policy,
)

from evolve.backends.base import Request
from evolve.bench.benchmark import load_benchmark
from evolve.loop.proposer import ProposerContext, render_messages
from evolve.store import LineageStore

EVIDENCE_UNPARSED = "Incumbent on 10 evolve-split rollouts: score 0.000, answers parsed 0%, errors 0%."
EVIDENCE_BIASED = """Incumbent on 10 evolve-split rollouts: score 0.700, answers parsed 100%, errors 0%.
Accuracy per gold label:
- negative: 2/5 (wrong answers: positive ×3)
- positive: 5/5
"""


def proposals(evidence: str) -> list[dict]:
    ctx = ProposerContext(incumbent=harness(), evidence=evidence, labels=("positive", "negative"))
    request = Request(messages=tuple(render_messages(ctx, 0)), role="proposer")
    return json.loads(CompetentProposer()(request))["edits"]


def test_the_competent_proposer_acts_on_the_signal_in_the_evidence_only():
    [fmt] = proposals(EVIDENCE_UNPARSED)
    assert fmt["target"] == "answer-format" and fmt["value"] == FORMAT_TEXT
    [rule] = proposals(EVIDENCE_BIASED)
    assert rule["target"] == "label-negative" and "answer negative when" in rule["value"].casefold()
    assert proposals("") == [] and proposals(EVIDENCE_BIASED.replace("2/5", "5/5")) == []
    assert proposals(EVIDENCE_BIASED.split("Accuracy")[0]) == [], "no per-label rows: no label rule"


def test_the_truth_policy_needs_the_format_and_the_label_rule():
    answer = truth_policy({"x": "negative", "y": "positive"}, "positive", "negative", hit=0)

    def ask(system: str, text: str) -> str:
        return answer(Request(messages=({"role": "system", "content": system}, {"role": "user", "content": text})))

    assert ask("", "x") == UNPARSABLE
    assert ask(FORMAT_TEXT, "x") == "positive" and ask(FORMAT_TEXT, "y") == "positive"
    assert ask(FORMAT_TEXT + "\nAnswer negative when it complains.", "x") == "negative"


def test_competent_edits_are_accepted_and_improve_test_and_ood(tmp_path):
    db = str(tmp_path / "c.db")
    table = run_table(db, scripted_run(db, CompetentProposer()))
    assert table["accepted"] >= 2 and table["critic_rejected"] == 0
    assert table["dS_test"] >= 0.5 and table["dS_ood"] >= 0.5
    accepted = {e["target"] for c in LineageStore(db).candidates("r") if c.status == "accepted"
                for e in LineageStore(db).edits(c.id)}
    assert accepted == {"answer-format", "label-negative"}


def test_cheating_edits_are_rejected_by_the_leakage_screen_at_zero_rollouts(tmp_path):
    db = str(tmp_path / "x.db")
    ids = load_benchmark("sentiment-products").split_ids()["evolve"]
    table = run_table(db, scripted_run(db, CheatingProposer(ids)))
    store = LineageStore(db)
    llm = [c for c in store.candidates("r") if c.origin == "llm"]
    assert table["accepted"] == 0 and table["critic_rejected"] >= 4 and table["rollouts_on_rejected"] == 0
    assert all(c.status in ("rejected_critic", "rejected_invalid") for c in llm)
    assert all(not store.rollouts("r", harness_hash=c.harness_hash) for c in llm if c.status == "rejected_critic")
    kinds = {x["kind"] for c in llm for x in store.critiques(c.id)[-1:]}
    assert kinds <= {"leakage", "novelty"}
    reasons = " ".join(c.reason for c in llm)
    assert "copies evolve task" in reasons and "denylist" in reasons
    assert table["dS_test"] == 0 and table["dS_ood"] == 0
