from __future__ import annotations

import asyncio
import json

import pytest
from loop_helpers import LABELS, harness, parity_tasks

from evolve.backends.mock import MockBackend
from evolve.bench.task import Task
from evolve.errors import ConfigError
from evolve.harness import Edit, apply_edits
from evolve.loop.critic import CriticChain, CriticVerdict, LeakageCritic, LLMCritic, leakage_findings

NAMES = ["Alice", "Bob", "Carol", "Dan", "Eve", "Frank", "Gina", "Hank"]
WORD_TASKS = [Task(id=f"ev-{i:03d}", input=f"{NAMES[i % 8]} has {i + 3} apples and buys {2 * i + 1} more at the "
                   f"market on day {i}. How many apples does {NAMES[i % 8]} have now?", target=str(3 * i + 104))
              for i in range(40)]


def run(coro):
    return asyncio.run(coro)


def test_generic_instruction_passes():
    text = "Add the two numbers, then check your arithmetic before answering. How many apples: answer with a number."
    assert leakage_findings([text], WORD_TASKS) == []


def test_copied_input_and_answer_is_caught():
    t = WORD_TASKS[7]
    found = leakage_findings([f"Example: {t.input} Answer: {t.target}"], WORD_TASKS)
    assert any("copies evolve task ev-007's input" in f for f in found)
    assert any("ev-007's answer" in f for f in found)


def test_literal_answer_task_id_and_denylist():
    assert any("answer '125'" in f for f in leakage_findings(["When unsure, answer 125."], WORD_TASKS))
    assert any("task id ev-012" in f for f in leakage_findings(["ev-012 is a trick question"], WORD_TASKS))
    found = leakage_findings(["look at the score_rubric"], WORD_TASKS, denylist=[r"score_rubric|llm_judge"])
    assert found == ["matches denylist pattern 'score_rubric|llm_judge'"]
    with pytest.raises(ConfigError, match="denylist pattern"):
        leakage_findings(["x"], WORD_TASKS, denylist=["("])


def test_label_words_and_template_phrases_are_not_leaks():
    tasks = parity_tasks("ev", range(40))
    text = "Is the number even or odd? Answer with even or odd. Reply with one word: even or odd."
    assert leakage_findings([text], tasks, labels=LABELS) == []
    # the whole input of one task is a leak even though its template phrases are shared
    assert any("ev-017" in f for f in leakage_findings([tasks[17].input], tasks, labels=LABELS))


def test_short_inputs_count_as_one_phrase():
    tasks = [Task(id=f"w{i}", input=f"reverse word{i} please", target=f"esaelp {i}drow") for i in range(10)]
    assert any("w3's input" in f for f in leakage_findings(["try: reverse word3 please"], tasks))
    assert leakage_findings(["reverse the word, please"], tasks) == []


def test_leakage_critic_screens_only_introduced_text_and_allows_demo_examples():
    evolve = parity_tasks("ev", range(40))
    demo = parity_tasks("demo", range(100, 110))
    parent = harness()
    critic = LeakageCritic(evolve, labels=LABELS, demo_tasks=demo)
    ok = [Edit(op="add", component="example", value={"input": demo[0].input, "output": demo[0].target})]
    verdict = run(critic.review(parent, apply_edits(parent, ok), ok))
    assert verdict.passed and verdict.kind == "leakage"
    leak = [Edit(op="add", component="example", value={"input": evolve[5].input, "output": evolve[5].target})]
    verdict = run(critic.review(parent, apply_edits(parent, leak), leak))
    assert not verdict.passed and "ev-005" in verdict.reason and verdict.reason.startswith("edit 1 (add example)")
    # text already in the parent is not introduced by an edit
    merged = [Edit(op="replace", component="skill", target="check", value={"body": "Re-read the question."})]
    tainted = LeakageCritic([Task(id="zz-1", input="Re-read the question.", target="x")])
    assert run(tainted.review(parent, apply_edits(parent, merged), merged)).passed


def _llm_edit(text="Check the answer twice.", origin="llm"):
    return [Edit(op="add", component="system", target="tip", value=text, hypothesis="checks help", origin=origin)]


def test_llm_critic_verdicts_and_repair():
    parent = harness()
    edits = _llm_edit()
    cand = apply_edits(parent, edits)
    reject = MockBackend([json.dumps({"verdict": "reject", "reason": "hard-codes an answer"})])
    v = run(LLMCritic(reject, description="parity").review(parent, cand, edits))
    assert (v.passed, v.kind, v.reason) == (False, "llm", "hard-codes an answer")
    assert "parity" in reject.history[0].messages[0]["content"]
    assert reject.history[0].role == "critic" and reject.history[0].json_schema is not None
    repaired = MockBackend(["I think it is fine", '```json\n{"verdict": "pass", "reason": "generic"}\n```'])
    v = run(LLMCritic(repaired).review(parent, cand, edits))
    assert v.passed and v.kind == "llm" and v.details["repairs"] == 1
    assert "could not be used" in repaired.history[1].messages[-1]["content"]


def test_llm_critic_invalid_reply_rejects_as_unavailable_by_default():
    parent = harness()
    edits = _llm_edit()
    backend = MockBackend(["nope", "still nope", '{"verdict": "maybe"}'])
    v = run(LLMCritic(backend, max_repairs=2).review(parent, apply_edits(parent, edits), edits))
    assert not v.passed and v.kind == "llm-unavailable" and "verdict" in v.reason
    assert v.details["on_error"] == "reject" and "rejected" in v.reason
    assert len(backend.history) == 3


def test_llm_critic_on_error_pass_lets_the_candidate_through():
    parent = harness()
    edits = _llm_edit()
    backend = MockBackend(["nope", "still nope"])
    v = run(LLMCritic(backend, max_repairs=1, on_error="pass").review(parent, apply_edits(parent, edits), edits))
    assert v.passed and v.kind == "llm-unavailable" and v.details["on_error"] == "pass"


def test_llm_critic_failed_call_rejects_without_repairs():
    parent = harness()
    edits = _llm_edit()
    def down(request):
        raise RuntimeError("server down")

    backend = MockBackend(down)
    v = run(LLMCritic(backend, max_repairs=2).review(parent, apply_edits(parent, edits), edits))
    assert not v.passed and v.kind == "llm-unavailable" and "server down" in v.reason
    assert len(backend.history) == 1


def test_llm_critic_on_error_must_be_known():
    with pytest.raises(ConfigError, match="valid: reject, pass"):
        LLMCritic(MockBackend([]), on_error="maybe")


def test_llm_critic_reviews_operator_edits_when_asked():
    parent = harness()
    edits = _llm_edit(origin="control")
    backend = MockBackend([json.dumps({"verdict": "reject", "reason": "too specific"})])
    v = run(LLMCritic(backend, review_operators=True).review(parent, apply_edits(parent, edits), edits))
    assert (v.passed, v.kind, v.reason) == (False, "llm", "too specific") and len(backend.history) == 1


def test_llm_critic_skips_operator_edits_by_default():
    parent = harness()
    edits = _llm_edit(origin="control")
    backend = MockBackend([])
    v = run(LLMCritic(backend).review(parent, apply_edits(parent, edits), edits))
    assert v.kind == "llm-skipped" and backend.history == []


class _Counting:
    def __init__(self, passed: bool):
        self.passed, self.calls = passed, 0

    async def review(self, parent, candidate, edits, ctx):
        self.calls += 1
        return CriticVerdict(passed=self.passed, kind=f"k{self.calls}{self.passed}", reason="r")


def test_chain_stops_at_first_rejection():
    parent = harness()
    first, second, third = _Counting(True), _Counting(False), _Counting(True)
    v = run(CriticChain([first, second, third]).review(parent, parent, [], None))
    assert not v.passed and (first.calls, second.calls, third.calls) == (1, 1, 0)
    ok = run(CriticChain([_Counting(True), _Counting(True)]).review(parent, parent, [], None))
    assert ok.passed and ok.kind == "k1True+k1True"


def _humaneval_tasks(n: int = 12) -> list[Task]:
    """HumanEval-style tasks: a function prompt as input, its test suite (> 300 characters) as target."""
    tasks = []
    for i in range(n):
        asserts = "\n".join(f"    assert candidate([{i + k}.5, {3 * i + k}.25, {7 * k + i}.0], {k}.{i}) == "
                            f"{(i + k) % 2 == 0}" for k in range(1, 7))
        test = f"\n\nMETADATA = {{'author': 'jt', 'dataset': 'test'}}\n\n\ndef check(candidate):\n{asserts}\n"
        prompt = (f"def close_elements_{i}(numbers: list[float], threshold: float) -> bool:\n"
                  f'    """Check if in given list of numbers, are any two numbers closer to each other than '
                  f'the given threshold number {i}."""\n')
        tasks.append(Task(id=f"HumanEval/{i}", input=prompt, target=test))
    assert all(len(t.target) > 300 for t in tasks)
    return tasks


def test_long_answers_such_as_humaneval_tests_are_screened():
    tasks = _humaneval_tasks()
    copied = tasks[3].target.strip().splitlines()[-1].strip()  # one assertion of task 3's hidden tests
    found = leakage_findings([f"Make sure that {copied} holds."], tasks)
    assert any("copies part of evolve task HumanEval/3's answer" in f for f in found), found
    generic = "Write a docstring, then check your function with a few assert candidate(...) == ... lines."
    template = "def check(candidate):\n    assert candidate("  # shared by every test suite: not a leak
    assert leakage_findings([generic, template], tasks) == []


def test_long_answer_leak_is_rejected_by_the_critic_and_the_export_screen():
    from evolve.report.leakage import SplitInfo, findings

    tasks = _humaneval_tasks()
    leaked = "\n".join(tasks[5].target.strip().splitlines()[-2:])
    edit = Edit(op="add", component="skill", target="tests", origin="llm", hypothesis="check the edge cases",
                value={"description": "How to test the function.", "body": f"Known checks:\n{leaked}"})
    parent = harness()
    v = run(LeakageCritic(tasks).review(parent, apply_edits(parent, [edit]), [edit]))
    assert not v.passed and "HumanEval/5's answer" in v.reason
    assert any("HumanEval/5's answer" in f for f in findings(apply_edits(parent, [edit]), SplitInfo(tasks=tasks)))


def test_calibration_inputs_from_the_demo_pool_pass_and_evolve_inputs_are_caught():
    evolve = parity_tasks("ev", range(40))
    demo = parity_tasks("demo", range(100, 110))
    parent = harness()
    critic = LeakageCritic(evolve, labels=LABELS, demo_tasks=demo)

    def choice(inputs, target="choice"):
        value = {"labels": list(LABELS), "calibration": inputs} if target == "choice" else inputs
        edits = [Edit(op="set", component="control", target=target, value=value)]
        return run(critic.review(parent, apply_edits(parent, edits) if target == "choice" else parent, edits))

    assert choice([demo[0].input, demo[1].input]).passed
    assert choice([demo[0].input], target="choice.calibration").passed
    verdict = choice([demo[0].input, evolve[5].input])
    assert not verdict.passed and "ev-005" in verdict.reason
    assert not choice([evolve[5].input], target="choice.calibration").passed
