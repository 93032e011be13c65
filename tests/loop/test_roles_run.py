"""Roles in whole runs: each role's requests reach its own server, and `verifier: judge` works in `evolve run`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI
from typer.testing import CliRunner

from evolve import api
from evolve.backends.mock import MockBackend
from evolve.cli import app
from evolve.store import LineageStore

runner = CliRunner()

PROPOSER_EDIT = json.dumps({"edits": [{"op": "add", "component": "system", "target": "format",
                                        "value": "Answer in one short sentence.",
                                        "hypothesis": "a stated answer format helps the grader"}]})
# the first line of each prompt template tells the requests apart
KINDS = {"You improve the harness": "proposer", "You review proposed edits": "critic",
         "You write a grading rubric": "rubric", "You grade the instructions": "rubric",
         "You revise a grading rubric": "rubric", "You grade an answer to a task": "judge"}
ANSWERS = {"proposer": PROPOSER_EDIT, "critic": json.dumps({"verdict": "pass", "reason": "a generic format rule"}),
           "rubric": "{}", "judge": json.dumps({"score": 7, "reason": "mostly right"})}


def kind_of(messages: list[dict[str, Any]]) -> str:
    """Which part of the engine sent these messages (`policy` when no template matches)."""
    text = "\n".join(str(m.get("content", "")) for m in messages)
    return next((kind for marker, kind in KINDS.items() if marker in text), "policy")


class RoutingFake(FakeOpenAI):
    """A fake server that answers every kind of request the way that kind needs."""

    def next_action(self, body: dict[str, Any]) -> int | float | str:
        with self._lock:
            self.chat_requests.append(body)
        return ANSWERS.get(kind_of(body.get("messages", [])), "a policy answer")

    def kinds(self) -> set[str]:
        return {kind_of(body.get("messages", [])) for body in self.chat_requests}


def judge_suite(root: Path, n: int = 24) -> Path:
    """A JSONL suite graded by the `judge` verifier (open-ended answers, a reference each)."""
    folder = root / "judged"
    folder.mkdir()
    rows = [{"id": f"q{i:02d}", "input": f"Describe in one sentence what a {thing} is used for.",
             "target": f"A {thing} is used for {use}."}
            for i, (thing, use) in enumerate([("hammer", "driving nails"), ("ladder", "reaching high places"),
                                              ("kettle", "boiling water"), ("compass", "finding north")] * (n // 4))]
    (folder / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (folder / "benchmark.yaml").write_text(
        "name: judged\ndescription: Open-ended one-sentence explanations graded by an LLM judge.\n"
        "tasks: tasks.jsonl\nverifier:\n  name: judge\n  rubric: The answer states the main use.\n", encoding="utf-8")
    return folder


def run_file(root: Path) -> Path:
    path = root / "run.yaml"
    path.write_text("evolve_batch: 4\nood: []\nselection:\n  guards.min_validation_tasks: 4\n"
                    "  surrogate.repair_attempts: 0\n  surrogate.realign_attempts: 0\n", encoding="utf-8")
    return path


def test_each_role_talks_to_its_own_server_and_the_policy_to_none(tmp_path):
    bench, db = judge_suite(tmp_path), str(tmp_path / "roles.db")
    with RoutingFake() as proposer, RoutingFake() as critic, RoutingFake() as judge:
        result = runner.invoke(app, [
            "run", "--model", "mock", "--benchmark", str(bench), "--config", str(run_file(tmp_path)),
            "--proposer-model", "hosted_vllm/prop", "--proposer-api-base", proposer.api_base,
            "--critic-model", "hosted_vllm/crit", "--critic-api-base", critic.api_base,
            "--judge-model", "hosted_vllm/judg", "--judge-api-base", judge.api_base,
            "--rounds", "1", "--budget", "60", "--report-limit", "3", "--run-id", "r", "--db", db,
            "--no-cache", "--json"])
        assert result.exit_code == 0, result.output
        assert proposer.kinds() == {"proposer"}
        assert critic.kinds() == {"critic"}
        assert judge.kinds() == {"rubric", "judge"}
        for server, name in ((proposer, "prop"), (critic, "crit"), (judge, "judg")):
            assert {body["model"] for body in server.chat_requests} == {name}
    store = LineageStore(db)
    usage = store.usage_by_role("r")
    assert usage["policy"]["calls"] > 0 and usage["judge"]["calls"] > 0
    assert usage["proposer"]["calls"] > 0 and usage["critic"]["calls"] > 0 and usage["surrogate"]["calls"] > 0
    rollouts = store.rollouts("r")
    assert rollouts and {r.reward for r in rollouts} == {0.7}  # every policy answer graded by the judge server
    roles = store.get_state("r", "roles")
    assert roles["proposer"] == {"model": "hosted_vllm/prop", "api_base": proposer.api_base, "inherited_from": None}
    assert roles["judge"]["model"] == "hosted_vllm/judg" and roles["policy"]["model"] == "mock"
    critiques = [x for c in store.candidates("r") for x in store.critiques(c.id)]
    assert any(x["kind"].endswith("llm") for x in critiques)
    operator = [c for c in store.candidates("r") if c.origin not in ("seed", "llm")]
    assert operator and all(any("llm" in x["kind"] and "skipped" not in x["kind"] for x in store.critiques(c.id))
                            for c in operator if c.status not in ("rejected_invalid",)), \
        "with --critic-model set, operator drafts get the LLM review too"
    store.close()
    for args in (["status", "r", "--db", db], ["show", "best", "--run", "r", "--db", db]):
        shown = runner.invoke(app, args, env={"COLUMNS": "300"})
        text = " ".join(shown.output.split())  # however the terminal wrapped it
        assert shown.exit_code == 0 and "proposer hosted_vllm/prop @ " + proposer.api_base in text
    report = tmp_path / "report.html"
    assert runner.invoke(app, ["report", "r", "--out", str(report), "--db", db]).exit_code == 0
    assert "judge hosted_vllm/judg" in report.read_text(encoding="utf-8")


def test_judge_verifier_run_completes_on_the_mock_backend(tmp_path):
    bench, db = judge_suite(tmp_path), str(tmp_path / "judge.db")
    result = runner.invoke(app, ["run", "--model", "mock", "--benchmark", str(bench), "--config",
                                 str(run_file(tmp_path)), "--rounds", "1", "--budget", "60", "--report-limit", "3",
                                 "--run-id", "j", "--db", db, "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["seed"]["test"]["n"] == 3
    store = LineageStore(db)
    assert store.get_run("j")["status"] == "finished"
    assert store.usage_by_role("j")["judge"]["calls"] > 0  # metered under its own role
    store.close()


def test_injected_judge_grades_every_rollout(tmp_path):
    graded: list[str] = []

    def judge(request) -> str:
        graded.append(request.role)
        return json.dumps({"score": 8 if "kettle" in request.messages[-1]["content"] else 2})

    helper = MockBackend(lambda request: json.dumps({"verdict": "pass", "reason": "ok"})
                         if request.role == "critic" else "{}")
    summary = api.run(db=str(tmp_path / "inj.db"), run_id="i", benchmark=str(judge_suite(tmp_path)), rounds=1,
                      budget=60, report_limit=8, ood=[], evolve_batch=4, policy=MockBackend(default="it boils"),
                      helper=helper, backends={"judge": MockBackend(judge)},
                      selection={"guards.min_validation_tasks": 4})
    assert set(graded) == {"judge", "surrogate"}  # the judge role serves the verifier and the rubric surrogate
    test = summary["seed"]["test"]
    assert 0.2 < test["score"] < 0.8 and test["n"] == 8
    store = LineageStore(str(tmp_path / "inj.db"))
    assert store.usage_by_role("i")["judge"]["calls"] == graded.count("judge")  # metered under its own role
    store.close()


def test_a_policy_only_api_base_is_not_sent_to_an_explicit_proposer(tmp_path):
    with RoutingFake() as policy_server, RoutingFake() as proposer_server:
        result = runner.invoke(app, [
            "run", "--model", "hosted_vllm/pol", "--api-base", policy_server.api_base,
            "--proposer-model", "hosted_vllm/prop", "--proposer-api-base", proposer_server.api_base,
            "--benchmark", str(judge_suite(tmp_path)), "--config", str(run_file(tmp_path)), "--rounds", "1",
            "--budget", "40", "--report-limit", "2", "--db", str(tmp_path / "p.db"), "--no-cache", "--json"])
        assert result.exit_code == 0, result.output
        assert policy_server.kinds() == {"policy"}
        assert proposer_server.kinds() == {"proposer", "critic", "rubric", "judge"}


@pytest.mark.embedded
def test_short_real_judge_run_on_the_embedded_model(tmp_path):
    db = str(tmp_path / "emb.db")
    summary = api.run(db=db, run_id="e", benchmark=str(judge_suite(tmp_path, n=12)), model="embedded", rounds=1,
                      budget=24, evolve_batch=2, report_limit=2, ood=[], seed=0,
                      proposer={"llm_drafts": 0, "operator_drafts": 1},
                      selection={"surrogate.rubric": False, "guards.min_validation_tasks": 2})
    store = LineageStore(db)
    assert store.get_run("e")["status"] == "finished"
    assert store.usage_by_role("e")["judge"]["tokens_out"] > 0
    assert summary["seed"]["test"]["n"] == 2
    store.close()


def test_resume_takes_role_api_bases_again_and_stores_the_roles(tmp_path):
    from engine_mocks import backends

    db = str(tmp_path / "res.db")
    policy, helper = backends()
    api.run(db=db, run_id="m", policy=policy, helper=helper, benchmark="sentiment-products", rounds=1, budget=240,
            report_limit=2, ood=[], evolve_batch=4, cache=False, proposer_model="hosted_vllm/prop",
            proposer_api_base="http://user:secretpw1@127.0.0.1:9/v1")
    store = LineageStore(db)
    assert store.get_run("m")["config"]["proposer_api_base"] == "http://***@127.0.0.1:9/v1"
    assert store.get_state("m", "roles")["proposer"]["api_base"] == "http://***@127.0.0.1:9/v1"
    store.update_run("m", status="stopped")
    policy, helper = backends()
    api.resume("m", db=db, policy=policy, helper=helper, api_bases={"proposer": "http://127.0.0.1:8/v1"})
    assert store.get_state("m", "roles")["proposer"]["api_base"] == "http://127.0.0.1:8/v1"
    assert store.get_state("m", "roles")["critic"]["api_base"] == "http://127.0.0.1:8/v1"  # inherited
    store.close()
