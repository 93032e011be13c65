"""The agent runtime with the mock backend: rendering, extraction, voting, tool loop, failures, batching."""

from __future__ import annotations

import asyncio

import pytest

from evolve.backends.base import Completion, Request
from evolve.backends.mock import MockBackend
from evolve.bench.runtime import evaluate, extract_answer, run_task, vote
from evolve.bench.task import Task
from evolve.bench.tools import ToolRegistry
from evolve.bench.verifiers import VerifierResult, make_verifier
from evolve.harness.model import AnswerExtraction, Control, Example, Harness, Section, Tool

LABELS = ("positive", "negative")


def task(i: int = 0, target: str = "positive") -> Task:
    return Task(id=f"t{i}", input=f"Review {i}: lovely", target=target, labels=LABELS)


def harness(**control) -> Harness:
    return Harness(system=(Section(name="task", text="Label the review."),),
                   examples=(Example(input="Review: awful", output="negative"),), control=Control(**control))


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize(("mode", "pattern", "expected"), [
    ("full", None, "Thinking.\n\nAnswer: yes"),
    ("first_line", None, "Thinking."),
    ("last_line", None, "Answer: yes"),
    ("regex", r"Answer:\s*(\w+)", "yes"),
    ("regex", r"Final:\s*(\w+)", None),
])
def test_extract_answer_modes(mode, pattern, expected):
    assert extract_answer("  Thinking.\n\nAnswer: yes \n", AnswerExtraction(mode=mode, pattern=pattern)) == expected


def test_extract_json_field():
    spec = AnswerExtraction(mode="json_field", pattern="answer")
    assert extract_answer('Sure: {"answer": "Oslo", "why": "x"}', spec) == "Oslo"
    assert extract_answer('{"answer": 42}', spec) == "42"
    assert extract_answer("no json", spec) is None


def test_run_task_renders_harness_and_scores():
    backend = MockBackend(["Positive!\nbecause it is lovely"])
    result = run(run_task(harness(answer=AnswerExtraction(mode="first_line")), task(), backend,
                          make_verifier("label")))
    assert (result.reward, result.prediction, result.parsed, result.error) == (1.0, "Positive!", True, None)
    request = backend.history[0]
    assert request.role == "policy" and request.max_tokens == 64 and request.seed is None
    assert [m["role"] for m in request.messages] == ["system", "user", "assistant", "user"]
    assert request.messages[0]["content"] == "Label the review."
    assert result.tokens_in > 0 and result.tokens_out == 5
    assert result.trajectory[0] == {"role": "user", "content": "Review 0: lovely"}
    assert result.trajectory[-1]["role"] == "verifier"


def test_self_consistency_majority_vote():
    answers = iter(["negative", "positive", "positive", "negative", "positive"])
    backend = MockBackend(lambda request: next(answers))
    result = run(run_task(harness(samples=5, temperature=0.7), task(), backend, make_verifier("label")))
    assert result.reward == 1.0 and result.prediction == "positive"
    assert len(backend.history) == 5
    seeds = [r.seed for r in backend.history]
    assert None not in seeds and len(set(seeds)) == 5
    assert result.trajectory[-1] == {"role": "vote", "content":
                                     '["negative", "positive", "positive", "negative", "positive"]'}
    assert result.tokens_out == 5


def test_greedy_samples_are_drawn_once():
    backend = MockBackend(["positive"])
    result = run(run_task(harness(samples=5, temperature=0.0), task(), backend, make_verifier("label")))
    assert result.reward == 1.0 and len(backend.history) == 1 and backend.history[0].seed is None


def test_vote_ignores_unparsed_and_breaks_ties_by_order():
    def r(norm):
        return (norm, VerifierResult(0.0, norm is not None, norm, ""))

    assert vote([r(None), r(None), r("b"), r("a"), r("a")]) == 3
    assert vote([r("b"), r("a")]) == 0
    assert vote([r(None), r(None)]) == 0
    assert vote([r("b"), r("a"), r("a")], "first") == 0


def test_first_vote_uses_first_sample():
    backend = MockBackend(["negative", "positive", "positive"])
    result = run(run_task(harness(samples=3, vote="first", temperature=1.0), task(), backend, make_verifier("label")))
    assert result.prediction == "negative" and result.reward == 0.0


def calc_harness(max_turns: int = 3) -> Harness:
    tool = Tool(name="calc", description="Arithmetic.", implementation="builtin:calculator",
                parameters={"type": "object", "properties": {"expression": {"type": "string"}}})
    return Harness(tools=(tool,), control=Control(max_turns=max_turns))


def math_task() -> Task:
    return Task(id="m1", input="What is 17 * 23?", target="391")


def test_tool_loop_calls_calculator_and_feeds_the_result_back():
    def reply(request: Request) -> str:
        last = request.messages[-1]["content"]
        if "Result of tool calc: 391" in last:
            return "The answer is 391."
        return 'I will compute. {"tool": "calc", "arguments": {"expression": "17 * 23"}}'

    backend = MockBackend(reply)
    result = run(run_task(calc_harness(), math_task(), backend, make_verifier("numeric")))
    assert result.reward == 1.0 and result.prediction == "The answer is 391."
    assert len(backend.history) == 2
    assert "# Tools" in backend.history[0].messages[0]["content"]
    roles = [m["role"] for m in result.trajectory]
    assert roles == ["user", "assistant", "tool", "assistant", "verifier"]
    turn, observation = result.trajectory[1], result.trajectory[2]
    assert turn["turn"] == 1 and turn["tokens_out"] > 0 and turn["tool_calls"] == [
        {"name": "calc", "arguments": {"expression": "17 * 23"}}]
    assert (observation["name"], observation["ok"], observation["content"]) == ("calc", True, "391")


def test_tool_errors_go_back_to_the_policy_and_turns_are_bounded():
    backend = MockBackend(lambda request: '{"tool": "nope", "arguments": {}}')
    result = run(run_task(calc_harness(max_turns=3), math_task(), backend, make_verifier("numeric")))
    assert len(backend.history) == 3
    assert "unknown tool 'nope'; available: calc" in backend.history[1].messages[-1]["content"]
    assert result.reward == 0.0 and result.error == "TurnLimit: still calling tools after 3 turns"
    assert result.trajectory[-2] == {"role": "limit", "kind": "TurnLimit",
                                     "content": "still calling tools after 3 turns"}

    bad = MockBackend(lambda request: '{"tool": "calc", "arguments": {"expression": "__import__(1)"}}')
    run(run_task(calc_harness(max_turns=2), math_task(), bad, make_verifier("numeric")))
    assert "error: ValueError" in bad.history[1].messages[-1]["content"]


def test_registered_python_tool_runs_in_the_sandbox(tmp_path):
    (tmp_path / "my_tools.py").write_text("import os\ndef count(text):\n    return f'{len(text.split())} "
                                          "{sorted(os.environ)}'\n", encoding="utf-8")
    tool = Tool(name="count", description="Count words.", implementation="python:my_tools:count")
    backend = MockBackend(lambda r: "done" if "Result of tool" in r.messages[-1]["content"]
                          else '{"tool": "count", "arguments": {"text": "a b c"}}')
    harness = Harness(tools=(tool,), control=Control(max_turns=2))
    registry = ToolRegistry([{"implementation": "python:my_tools:count", "path": str(tmp_path)}])
    result = run(run_task(harness, Task(id="c", input="count", target="done"), backend, make_verifier("exact"),
                          tools=registry))
    observation = backend.history[1].messages[-1]["content"]
    assert result.reward == 1.0 and "Result of tool count: 3 ['HOME', 'LANG', 'PATH', 'TMPDIR']" in observation

    unregistered = MockBackend(lambda r: "done" if "Result of tool" in r.messages[-1]["content"]
                               else '{"tool": "count", "arguments": {"text": "a b c"}}')
    run(run_task(harness, Task(id="c", input="count", target="done"), unregistered, make_verifier("exact")))
    assert "is not on the allow-list" in unregistered.history[1].messages[-1]["content"]


def test_failed_completion_is_a_scored_failure():
    backend = MockBackend(lambda request: (_ for _ in ()).throw(RuntimeError("model crashed")))
    result = run(run_task(harness(), task(), backend, make_verifier("label")))
    assert result.reward == 0.0 and not result.parsed
    assert "model crashed" in result.error


class BrokenBackend:
    name = "broken"

    async def complete(self, requests):
        raise ConnectionError("socket closed")


class ShortBackend:
    name = "short"

    async def complete(self, requests):
        return [Completion("positive")]


def test_backend_exceptions_and_contract_breaks_become_failures():
    results = run(evaluate(harness(), [task(0), task(1)], BrokenBackend(), make_verifier("label")))
    assert [r.reward for r in results] == [0.0, 0.0]
    assert all("socket closed" in r.error for r in results)
    results = run(evaluate(harness(), [task(0), task(1)], ShortBackend(), make_verifier("label")))
    assert all("wrong number" in r.error for r in results)


class CountingBackend(MockBackend):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.batches: list[int] = []

    async def complete(self, requests):
        self.batches.append(len(requests))
        return await super().complete(requests)


def test_evaluate_batches_orders_results_and_reports_progress():
    tasks = [task(i, "positive" if i % 2 == 0 else "negative") for i in range(5)]
    backend = CountingBackend(default="positive")
    seen = []
    results = run(evaluate(harness(), tasks, backend, make_verifier("label"), trials=2, batch_size=4,
                           progress=lambda done, total: seen.append((done, total))))
    assert [(r.task_id, r.trial) for r in results] == [(f"t{i}", k) for i in range(5) for k in range(2)]
    assert [r.reward for r in results] == [1.0, 1.0, 0.0, 0.0] * 2 + [1.0, 1.0]
    assert backend.batches == [4, 4, 2]
    assert seen == [(4, 10), (8, 10), (10, 10)]


def test_to_record():
    result = run(run_task(harness(), task(), MockBackend(["positive"]), make_verifier("label"), trial=2))
    record = result.to_record(run_id="r1", harness_hash="h", benchmark="b", split="test", candidate_id="c")
    assert record.key == ("r1", "h", "b", "test", "t0", 2)
    assert record.reward == 1.0 and record.prediction == "positive" and record.candidate_id == "c"
    assert record.trajectory == result.trajectory
