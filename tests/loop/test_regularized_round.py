"""Whole mock runs that pin down what the regularized round does: selection among every admissible
candidate, one budget ledger, the operators' search, and what tells the presets apart."""

from __future__ import annotations

import json

import pytest
from engine_mocks import NEGATIVE, RUN_OPTIONS, backends, helper_answer, policy_answer
from typer.testing import CliRunner

from evolve import api
from evolve.backends.base import Request
from evolve.backends.mock import MockBackend
from evolve.cli import app
from evolve.errors import ConfigError
from evolve.loop.memory import Memory
from evolve.loop.state import LoopState
from evolve.store import LineageStore


def run(db: str, run_id: str = "r", policy=None, helper=None, **extra):
    p, h = backends()
    return api.run(db=db, run_id=run_id, policy=policy or p, helper=helper or h, **{**RUN_OPTIONS, **extra})


def state(db: str, run_id: str = "r") -> LoopState:
    return LoopState.model_validate(LineageStore(db).get_state(run_id, "loop_state"))


def collapsing_policy(request: Request) -> str:
    """Right with two examples, but an answer-format section makes it say 'positive' to everything."""
    if any("answer-format" in m["content"] or "exactly one of these labels" in m["content"]
           for m in request.messages if m["role"] == "system"):
        return "positive"
    return policy_answer(request)


def test_memory_records_delta_against_the_incumbent_of_the_attempt(tmp_path):
    db = str(tmp_path / "m.db")
    run(db)
    store = LineageStore(db)
    attempts = {a.candidate_id: a for p in Memory.model_validate(state(db).memory).problems for a in p.attempts}
    decisions = {d["candidate_id"]: d for d in store.decisions("r") if d["kind"] != "prune"}
    accepted = [cid for cid, a in attempts.items() if a.verdict == "accepted"]
    assert accepted
    for cid in accepted:
        assert attempts[cid].delta == pytest.approx(decisions[cid]["stats"]["dS"]) and attempts[cid].delta > 0
    stopped = [cid for cid, d in decisions.items() if d["reason"].startswith("stopped early") and cid in attempts]
    assert stopped
    for cid in stopped:  # the paired mean over the tasks it saw, never -S of the new incumbent
        assert attempts[cid].delta == pytest.approx(decisions[cid]["stats"]["dS"])


def test_accepting_one_attempt_does_not_resolve_problems_it_never_named():
    from evolve.loop.analyst import Evidence, LabelStat

    evidence = Evidence(n=10, score=0.3, parse_rate=0.5, labels=[
        LabelStat(label="odd", n=5, correct=0), LabelStat(label="even", n=5, correct=3)])
    memory = Memory()
    memory.update(0, evidence, [{"candidate_id": "c", "approach": "fix the answer format to parse", "accepted": True}])
    assert memory.get("unparseable").status == "resolved"
    assert memory.get("label:odd").status == "open"


def test_a_collapsing_candidate_stops_early_and_the_next_best_is_accepted(tmp_path):
    db = str(tmp_path / "c.db")
    summary = run(db, policy=MockBackend(collapsing_policy), rounds=2)
    store = LineageStore(db)
    collapsed = [d for d in store.decisions("r") if "collapse" in d["reason"]]
    assert collapsed and all(d["stats"]["n_tasks"] < len(store.rollouts("r", split="validation")) for d in collapsed)
    assert summary["best"]["validation"]["score"] > summary["seed"]["validation"]["score"]
    assert any(e["component"] == "example" for e in summary["accepted_edits"])


def test_one_trial_count_for_oracle_allocator_and_acceptance(tmp_path):
    db = str(tmp_path / "t.db")
    run(db, preset="skilllift", rounds=1)
    store = LineageStore(db)
    validation = store.rollouts("r", split="validation")
    per_task: dict[tuple[str, str], int] = {}
    for r in validation:
        per_task[(r.harness_hash, r.task_id)] = per_task.get((r.harness_hash, r.task_id), 0) + 1
    assert set(per_task.values()) == {2}, "skilllift's two trials per task are run, not only charged"
    for c in store.candidates("r"):
        if c.val_score is not None:  # not halved by a second, unrun trial
            rewards = [r.reward for r in validation if r.harness_hash == c.harness_hash]
            assert c.val_score == pytest.approx(sum(rewards) / len(rewards))


def test_the_preset_budget_is_used_unless_the_run_sets_one(tmp_path):
    from evolve.loop.setup import build_parts
    from evolve.run_config import make_config

    preset = tmp_path / "mine.yaml"
    preset.write_text("budgets:\n  oracle_rollouts: 777\n", encoding="utf-8")
    assert build_parts(make_config(preset=str(preset), model="mock")).budget == 777
    assert build_parts(make_config(preset=str(preset), model="mock", budget=900)).budget == 900
    assert build_parts(make_config(model="mock")).budget == 1500


def test_a_budget_below_one_round_is_refused_up_front(tmp_path):
    with pytest.raises(ConfigError, match=r"needs at least \d+ .*analyst batch"):
        run(str(tmp_path / "b.db"), budget=50)
    result = CliRunner().invoke(app, ["run", "--model", "mock", "--budget", "40", "--db", str(tmp_path / "c.db")])
    assert result.exit_code == 2 and "needs at least" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "c.db").exists() or not LineageStore(str(tmp_path / "c.db")).list_runs()
    plan = json.loads(CliRunner().invoke(app, ["run", "--dry-run", "--model", "mock"]).stdout)
    assert plan["round_minimum"]["total"] > 0


def test_a_budget_that_runs_out_mid_round_keeps_what_was_evaluated(tmp_path):
    db = str(tmp_path / "mid.db")
    summary = run(db, budget=230, rounds=3)
    store = LineageStore(db)
    cut = [c for c in store.candidates("r") if c.status == "rejected_budget"]
    assert cut and "budget" in summary["stopped"]
    decisions = {d["candidate_id"]: d for d in store.decisions("r")}
    assert all(decisions[c.id]["stats"]["rule"] == "budget" for c in cut)
    assert any(decisions[c.id]["stats"].get("n_tasks", 0) > 0 for c in cut), "partial statistics are kept"
    assert summary["rollouts_spent"] <= 230


def test_proposer_tokens_and_surrogate_calls_are_charged(tmp_path):
    db = str(tmp_path / "p.db")
    summary = run(db, rounds=3, selection={"budgets.proposer_tokens": 60})
    spent = summary["budget_spent"]
    assert spent["proposer_tokens"] >= 60 and spent["surrogate_calls"] > 0
    llm_rounds = [r["round"] for r in summary["rounds"] if (r["drafts"].get("llm") or {}).get("produced")]
    assert llm_rounds == [0], "no LLM drafts once the proposer's token budget is spent"


def test_the_wall_clock_budget_stops_the_run(tmp_path):
    summary = run(str(tmp_path / "w.db"), rounds=3, selection={"budgets.wall_clock_s": 0.0})
    assert "wall-clock" in summary["stopped"] and summary["rounds_run"] == 0


def test_a_proposer_without_valid_drafts_loses_its_slots_to_the_operators(tmp_path):
    db = str(tmp_path / "d.db")
    summary = run(db, helper=MockBackend(default="not json"), rounds=4)
    assert summary["proposer_disabled"] and "no valid draft" in summary["proposer_disabled"]
    rounds = summary["rounds"]
    assert rounds[0]["drafts"]["llm"]["produced"] == 2 and rounds[1]["drafts"]["llm"]["produced"] == 2
    assert all("llm" not in r["drafts"] for r in rounds[2:])
    assert sum(d["produced"] for d in rounds[2]["drafts"].values()) >= 6, "the operators got the slots"
    assert state(db).proposer_disabled == summary["proposer_disabled"]


def test_proposer_model_none_runs_the_operators_only(tmp_path):
    policy = MockBackend(policy_answer)
    summary = api.run(db=str(tmp_path / "n.db"), run_id="n", policy=policy, proposer_model="none",
                      **{**RUN_OPTIONS, "rounds": 2})
    assert all("llm" not in r["drafts"] for r in summary["rounds"])
    assert not any(r.role == "proposer" for r in policy.history)
    assert summary["best"]["test"]["score"] > summary["seed"]["test"]["score"]


def test_rounds_without_an_acceptance_widen_the_search(tmp_path):
    never = MockBackend(lambda r: "positive")  # nothing can ever be accepted
    summary = run(str(tmp_path / "s.db"), policy=never, rounds=3, proposer={"pace_drafts": 0})
    produced = [sum(d["produced"] for d in r["drafts"].values()) for r in summary["rounds"]]
    assert produced[1] > produced[0] and produced[2] > produced[1]


def test_an_unspent_budget_buys_more_drafts_and_is_never_overspent(tmp_path):
    def drafts(summary):
        return [sum(d["produced"] for d in r["drafts"].values()) for r in summary["rounds"]]

    paced = run(str(tmp_path / "p.db"), run_id="p", rounds=3, budget=6000)
    fixed = run(str(tmp_path / "f.db"), run_id="f", rounds=3, budget=6000, proposer={"pace_drafts": 0})
    assert drafts(paced)[0] == drafts(fixed)[0], "round 0 has nothing to pace on"
    assert sum(drafts(paced)[1:]) > sum(drafts(fixed)[1:])
    assert paced["rollouts_spent"] > fixed["rollouts_spent"] and paced["rollouts_spent"] <= 6000
    tight = run(str(tmp_path / "t.db"), run_id="t", rounds=3, budget=300)
    loose = run(str(tmp_path / "l.db"), run_id="l", rounds=3, budget=300, proposer={"pace_drafts": 0})
    assert drafts(tight) == drafts(loose), "a budget the rounds use up buys no extra drafts"


def test_the_screen_filters_at_the_default_draft_count(tmp_path):
    db = str(tmp_path / "f.db")
    run(db, rounds=2)
    reasons = [c.reason for c in LineageStore(db).candidates("r")]
    assert any(r.startswith("surrogate screen") for r in reasons)


def test_the_learned_surrogate_uses_the_configured_parameters(tmp_path, monkeypatch):
    from evolve.selection import learned

    seen = []
    original = learned.LearnedSurrogate.__init__

    def spy(self, featurizer=None, *, ridge=1.0, nu=0.1, lam=0.03):
        seen.append((ridge, nu, lam))
        original(self, featurizer, ridge=ridge, nu=nu, lam=lam)

    monkeypatch.setattr(learned.LearnedSurrogate, "__init__", spy)
    run(str(tmp_path / "l.db"), rounds=3, selection={"surrogate.nu": 0.7, "surrogate.lam": 0.2, "surrogate.ridge": 3})
    assert seen and set(seen) == {(3.0, 0.7, 0.2)}


def test_reserved_slots_come_from_the_preset():
    from evolve.loop import novelty

    directive = novelty.exploration_directive(True, {"example"}, ("system", "skill", "example"), slots=2)
    assert directive.reserved_slots == 2


def test_the_pruner_ablates_in_more_than_one_round(tmp_path):
    db = str(tmp_path / "pr.db")
    run(db, rounds=6, budget=4000)
    rounds = {d["round"] for d in LineageStore(db).decisions("r") if d["kind"] == "prune"}
    assert len(rounds) >= 2


def test_prune_verdicts_for_small_and_expensive_edits():
    from evolve.loop.pruner import prune_verdict
    from evolve.selection.config import AcceptanceConfig

    acc = AcceptanceConfig()
    assert prune_verdict(-0.01, 0.03, 0.5, [], acc)[0]  # no effect beyond the band
    prune, why = prune_verdict(-0.05, 0.03, 2.0, [], acc)  # 5 points for 200% more tokens: too expensive
    assert prune and "too expensive" in why
    assert not prune_verdict(-0.30, 0.03, 2.0, [], acc)[0]  # 30 points pay for it
    assert not prune_verdict(-0.01, 0.03, 0.5, ["collapse"], acc)[0]
    saver, why = prune_verdict(-0.02, 0.03, -0.10, [], acc)  # the edits save 10% of the tokens
    assert not saver and why.startswith("needed")


def test_eval_reuses_the_splits_of_a_run(tmp_path):
    db = str(tmp_path / "e.db")
    run(db, run_id="s", rounds=1, split_seed=5)
    stored = LineageStore(db).get_state("s", "splits")
    result = CliRunner().invoke(app, ["eval", "harnesses/minimal", "--run", "s", "--model", "mock", "--split",
                                      "test", "--db", db, "--json"])
    assert result.exit_code == 0, result.output
    eval_id = json.loads(result.stdout)["run_id"]
    assert sorted({r.task_id for r in LineageStore(db).rollouts(eval_id)}) == sorted(stored["test"])
    missing = CliRunner().invoke(app, ["eval", "harnesses/minimal", "--model", "mock", "--db", db])
    assert missing.exit_code == 2 and "--benchmark" in missing.output


def test_run_and_eval_split_a_benchmark_alike_by_default(tmp_path):
    from evolve.bench.benchmark import load_benchmark

    db = str(tmp_path / "d.db")
    run(db, run_id="a", rounds=1, seed=11)
    stored = LineageStore(db).get_state("a", "splits")
    assert stored == load_benchmark(RUN_OPTIONS["benchmark"]).split_ids()


def test_eval_and_runs_share_one_score_and_interval():
    from evolve.bench.stats import summarize as eval_summary
    from evolve.bench.task import Task
    from evolve.bench.verifiers import make_verifier
    from evolve.loop.oracle import summarize as run_summary
    from evolve.store import RolloutRecord

    tasks = [Task(id=f"t{i}", input="x", target="a", labels=("a", "b")) for i in range(30)]
    records = [RolloutRecord("r", "h", "b", "test", t.id, float((i + k) % 3 == 0), trial=k, prediction="a")
               for i, t in enumerate(tasks) for k in range(2)]
    a = eval_summary(records, tasks, make_verifier({"name": "label"}), ("a", "b"))
    b = run_summary(records)
    assert (a["score"], a["ci_low"], a["ci_high"], a["n"]) == (b["score"], b["ci_low"], b["ci_high"], b["n"])
    assert a["policy_tokens"] == b["policy_tokens"]


# -- what tells the presets apart ---------------------------------------------------------------


def leaking_helper(request: Request) -> str:
    """A proposer that copies an evolve-split review into the prompt (a lookup, not a mechanism)."""
    if request.role == "proposer":
        text = "\n".join(m["content"] for m in request.messages)
        line = next(ln for ln in text.splitlines() if ln.startswith("- input: "))
        return json.dumps({"edits": [{"op": "add", "component": "system", "target": "known-reviews",
                                      "value": f"{line.removeprefix('- input: ')} -> negative",
                                      "hypothesis": "remember this review"}]})
    return helper_answer(request)


def test_rrsi_critic_rejects_a_leak_before_any_rollout(tmp_path):
    db = str(tmp_path / "rrsi.db")
    run(db, helper=MockBackend(leaking_helper), rounds=1)
    store = LineageStore(db)
    leaks = [c for c in store.candidates("r") if c.origin == "llm" and c.status == "rejected_critic"]
    assert leaks and all(not store.rollouts("r", harness_hash=c.harness_hash) for c in leaks)
    decisions = [d for d in store.decisions("r") if d["kind"] != "prune"]
    assert all(d["stats"].get("split") in (None, "validation", "validation+evolve") for d in decisions)
    assert any(d["stats"].get("split") == "validation+evolve" for d in decisions), "pooled with fresh evolve tasks"


def test_unregularized_has_no_critic_and_accepts_greedily_on_the_evolve_split(tmp_path):
    db = str(tmp_path / "u.db")
    run(db, helper=MockBackend(leaking_helper), rounds=1, preset="unregularized")
    store = LineageStore(db)
    llm = [c for c in store.candidates("r") if c.origin == "llm" and c.status != "rejected_invalid"]
    assert llm and all(c.status != "rejected_critic" for c in llm)
    assert not any(store.critiques(c.id) for c in llm)
    decisions = [d for d in store.decisions("r") if d["kind"] != "prune"]
    assert decisions and all(d["stats"].get("split") in (None, "evolve") for d in decisions)
    assert {c.meta["budget"] for c in store.candidates("r") if c.round == 0} == {5}, "a fixed large edit budget"


def test_skilllift_evaluates_every_screened_draft_on_every_validation_task_twice(tmp_path):
    db = str(tmp_path / "sl.db")
    run(db, preset="skilllift", rounds=1)
    store = LineageStore(db)
    n_val = len({r.task_id for r in store.rollouts("r", split="validation")})
    evaluated = [c for c in store.candidates("r") if c.val_score is not None]
    assert evaluated and len(evaluated) <= 3
    for c in evaluated:
        assert len(store.rollouts("r", harness_hash=c.harness_hash, split="validation")) == 2 * n_val
    assert any(s["kind"] == "rubric" for s in store.surrogate_scores("r"))


def test_cobra_ranks_with_the_learned_surrogate_and_no_rubric(tmp_path):
    db = str(tmp_path / "co.db")
    run(db, preset="cobra", rounds=3)
    kinds = {s["kind"] for s in LineageStore(db).surrogate_scores("r")}
    assert kinds == {"learned"}
    assert not LineageStore(db).rubrics("r")



def test_summary_and_report_list_drafts_per_source_and_rejections_per_round(tmp_path):
    db = str(tmp_path / "rep.db")
    run(db, rounds=2, helper=MockBackend(default="not json"))
    result = CliRunner().invoke(app, ["report", "r", "--out", str(tmp_path / "r.html"), "--db", db])
    assert result.exit_code == 0, result.output
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "Drafts per round" in html and "fewshot " in html and "invalid" in html
    shown = CliRunner().invoke(app, ["resume", "r", "--db", db])  # a finished run: refused, no traceback
    assert shown.exit_code == 2
    cli = CliRunner().invoke(app, ["run", "--model", "mock", "--rounds", "1", "--budget", "300", "--report-limit",
                                   "5", "--run-id", "t", "--db", db])
    assert cli.exit_code == 0, cli.output
    assert "drafts per round" in cli.output and "fewshot" in cli.output


def validation_lucky_policy():
    """The proposer's format section helps only on the validation tasks (as if it had been fitted to
    them): it answers those right and every other task wrong. Two examples (as turns or in the
    system prompt) help everywhere."""
    from evolve.bench.benchmark import load_benchmark

    inputs = {task.input for task in load_benchmark("sentiment-products").split("validation")}

    def answer(request: Request) -> str:
        text = request.messages[-1]["content"]
        lucky = any("Answer with exactly one word: positive or negative." in (m["content"] or "")
                    for m in request.messages if m["role"] == "system")
        right = "negative" if any(w in text for w in NEGATIVE) else "positive"
        system = " ".join(m["content"] or "" for m in request.messages if m["role"] == "system")
        if sum(1 for m in request.messages if m["role"] == "assistant") >= 2 or system.count("Review:") >= 2:
            return right
        if lucky:
            on_validation = any(i in text for i in inputs)
            return right if on_validation else ("positive" if right == "negative" else "negative")
        return "positive"

    return MockBackend(answer)


def test_a_validation_winner_that_fails_on_fresh_tasks_is_refused_and_the_next_is_taken(tmp_path):
    lucky = "Answer with exactly one word: positive or negative."

    def format_candidates(db):
        store = LineageStore(db)
        return [c for c in store.candidates("r") if c.round == 0 and c.status != "rejected_invalid"
                and any(lucky in str(e.get("value")) for e in store.edits(c.id))]

    off = str(tmp_path / "off.db")
    run(off, policy=validation_lucky_policy(), rounds=1, selection={"acceptance.fresh_tasks": 0})
    assert [c.status for c in format_candidates(off)] == ["accepted"], "on validation alone it wins the round"

    repairing = str(tmp_path / "repair.db")
    run(repairing, policy=validation_lucky_policy(), rounds=1)
    assert [c.status for c in format_candidates(repairing)] == ["rejected_acceptance"], (
        "the seed answers one label, so the lucky draft may repair it, but the pooled gain wins")

    on = str(tmp_path / "on.db")  # without repairs: refused outright on the pooled tasks
    summary = run(on, policy=validation_lucky_policy(), rounds=1, selection={"acceptance.repair": False})
    store = LineageStore(on)
    refused = format_candidates(on)
    assert refused and all(c.status == "rejected_acceptance" for c in refused)
    decisions = {d["candidate_id"]: d for d in store.decisions("r")}
    for c in refused:
        d = decisions[c.id]
        assert d["reason"].startswith("on validation + 36 fresh evolve tasks: ") and not d["accepted"]
        assert d["stats"]["validation"]["rule"] == "gain" and d["stats"]["n_tasks"] == 96
        assert d["stats"]["dS"] < d["stats"]["validation"]["dS"]
    evolve_ids = {t.task_id for t in store.rollouts("r", split="evolve") if t.candidate_id in {c.id for c in refused}}
    assert len(evolve_ids) == 36, "the fresh tasks: evolve tasks outside the analyst's batch"
    winner = [c for c in store.candidates("r") if c.status == "accepted"]
    assert len(winner) == 1 and decisions[winner[0].id]["reason"].startswith(
        "accepted: on validation + 36 fresh evolve tasks: gain")
    assert any(e["component"] == "example" for e in summary["accepted_edits"])
    assert summary["rounds"][0]["rejections"].get("within noise band") == len(refused)



def validation_shy_policy():
    """A seed that is right on half the tasks (by a hash of the input) and wrong on the rest, not
    collapsed onto a label. Two examples help little on the validation tasks (a few gains, a few
    losses: within the noise band there) and help on every other task."""
    import zlib

    from evolve.bench.benchmark import load_benchmark

    inputs = {task.input for task in load_benchmark("sentiment-products").split("validation")}

    def answer(request: Request) -> str:
        text = request.messages[-1]["content"]
        right = "negative" if any(w in text for w in NEGATIVE) else "positive"
        wrong = "positive" if right == "negative" else "negative"
        key = zlib.crc32(text.encode())
        seed_right = key % 2 == 0
        system = " ".join(m["content"] or "" for m in request.messages if m["role"] == "system")
        examples = sum(1 for m in request.messages if m["role"] == "assistant") >= 2 or system.count("Review:") >= 2
        if not examples:
            return right if seed_right else wrong
        if not any(i in text for i in inputs):
            return right
        return right if (seed_right and key % 20 != 0) or key % 20 in (1, 3) else wrong

    return MockBackend(answer)


def test_a_candidate_within_the_band_on_validation_is_admitted_on_the_pooled_tasks(tmp_path):
    def example_candidates(db):
        store = LineageStore(db)
        return [c for c in store.candidates("r") if c.round == 0
                and any(e.get("component") == "example" for e in store.edits(c.id))]

    off = str(tmp_path / "off.db")
    run(off, policy=validation_shy_policy(), rounds=1, selection={"acceptance.fresh_tasks": 0})
    assert example_candidates(off) and all(c.status != "accepted" for c in example_candidates(off)), \
        "on validation alone no example set gains beyond the band"

    on = str(tmp_path / "on.db")
    run(on, policy=validation_shy_policy(), rounds=1)
    store = LineageStore(on)
    decisions = {d["candidate_id"]: d for d in store.decisions("r")}
    accepted = [c for c in example_candidates(on) if c.status == "accepted"]
    assert len(accepted) == 1
    d = decisions[accepted[0].id]
    assert d["reason"].startswith("accepted: on validation + 36 fresh evolve tasks: gain")
    assert d["stats"]["validation"]["rule"] == "band", "validation alone held it within the band"
    assert d["stats"]["dS"] > d["stats"]["validation"]["dS"]


def weak_reader_policy():
    """A seed that answers 'positive' to everything; with two examples it reads the review and is
    right on 7 tasks in 10 of either label. On a suite 65% positive that is +0.05 plain (within the
    noise band) but +0.20 label-balanced."""
    def answer(request: Request) -> str:
        text = request.messages[-1]["content"]
        examples = sum(1 for m in request.messages if m["role"] == "assistant")
        if examples < 2 or "Review " not in text:
            return "positive"
        right = "negative" if "broke" in text else "positive"
        number = int(text.split("Review ")[1].split(":")[0])
        return right if number % 10 < 7 else ("positive" if right == "negative" else "negative")

    return MockBackend(answer)


def test_a_collapsed_seed_is_repaired_by_a_label_balanced_gain(tmp_path):
    from test_decision_split import big_validation

    path = str(big_validation(tmp_path / "b.jsonl", negative_share=0.35))
    options = {"benchmark": path, "rounds": 1, "budget": 1500}
    on, off = str(tmp_path / "on.db"), str(tmp_path / "off.db")
    run(on, policy=weak_reader_policy(), **options)
    run(off, policy=weak_reader_policy(), selection={"acceptance.repair": False}, **options)
    accepted = [d for d in LineageStore(on).decisions("r") if d["accepted"]]
    assert len(accepted) == 1 and accepted[0]["stats"]["rule"] == "repair"
    assert "the incumbent fails the guard (collapse: predicts 'positive'" in accepted[0]["reason"]
    assert not any(d["accepted"] for d in LineageStore(off).decisions("r")), "within the plain band: refused"


def test_the_pruner_judges_an_ablation_on_the_pooled_tasks_it_was_accepted_on(tmp_path):
    """The example set accepted on the pooled tasks (within the band on validation alone) is ablated
    in the next round on the same evidence: validation pooled with the round's fresh tasks, where
    leaving it out loses beyond the band, so it is kept (`acceptance.pooled_rules`); on validation
    alone (the default) it is pruned."""
    alone = str(tmp_path / "alone.db")
    run(alone, policy=validation_shy_policy(), rounds=2)
    prunes = [d for d in LineageStore(alone).decisions("r") if d["kind"] == "prune"]
    assert prunes and all(d["accepted"] and "fresh_tasks" not in d["stats"] for d in prunes)
    db = str(tmp_path / "p.db")
    run(db, policy=validation_shy_policy(), rounds=2, selection={"acceptance.pooled_rules": True})
    store = LineageStore(db)
    prunes = [d for d in store.decisions("r") if d["kind"] == "prune"]
    assert prunes, "round 1 ablates the example set accepted in round 0"
    for d in prunes:
        stats = d["stats"]
        assert not d["accepted"] and d["reason"].startswith("kept ")
        assert stats["split"] == "validation+evolve" and stats["fresh_tasks"] == 36
        assert "on validation + 36 fresh evolve tasks" in d["reason"]
        assert stats["dS"] < -stats["delta"], "leaving the examples out loses beyond the pooled band"
        assert stats["validation"]["dS"] >= -stats["validation"]["delta"], "validation alone would prune it"


def test_a_seed_anchored_cost_rule_measures_every_decision_after_the_first_acceptance_from_the_seed(tmp_path):
    """`acceptance.cost_anchor: seed`: while the seed is the incumbent there is nothing to anchor; after
    an acceptance every decision's cost rule reads ΔC from the seed's tokens and pays with ΔS plus the
    incumbent's gain over the seed, and the objective prices tokens in the seed's."""
    db = str(tmp_path / "a.db")
    run(db, selection={"acceptance.cost_anchor": "seed"})
    store = LineageStore(db)
    decisions = [d for d in store.decisions("r") if d["kind"] != "prune"]
    chain = state(db).accepted_chain
    assert chain, "the mock run accepts an edit"
    first = next(d["round"] for d in decisions if d["candidate_id"] == chain[0])
    before = [d for d in decisions if d["round"] <= first]
    after = [d for d in decisions if d["round"] > first and d["stats"]["rule"] not in ("allocation", "budget")]
    assert before and all("dC_seed" not in d["stats"] for d in before)
    assert after
    for d in after:
        st = d["stats"]
        assert st["seed_gain"] > 0.3, "the accepted edit lifted the incumbent well above the seed"
        assert st["dC_seed"] == pytest.approx((st["tokens_per_task"] - st["tokens_seed"]) / st["tokens_seed"])
        assert st["dC_objective"] == pytest.approx((st["tokens_per_task"] - st["tokens_incumbent"]) / st["tokens_seed"])


def test_the_cost_anchor_is_checked_when_the_run_is_configured(tmp_path):
    with pytest.raises(ConfigError, match="cost_anchor"):
        run(str(tmp_path / "x.db"), selection={"acceptance.cost_anchor": "parent"})
