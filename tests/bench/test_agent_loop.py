"""The agent loop's harness settings: control.flow, memory, context and skills on request."""

from __future__ import annotations

import asyncio
import json

from evolve.backends.mock import MockBackend
from evolve.bench.context import ELIDED, Notebook, estimate_tokens, fit_context
from evolve.bench.runtime import evaluate, run_task
from evolve.bench.task import Task
from evolve.bench.tools import builtin_tool
from evolve.bench.verifiers import make_verifier
from evolve.harness import Context, Control, Flow, Harness, Memory, Skill, render_messages

CALC = builtin_tool("calculator")
TASK = Task(id="t", input="What is 6 * 7?", target="42")


def _harness(**kw) -> Harness:
    control = {"max_turns": 6, "max_tokens": 64, **kw.pop("control", {})}
    return Harness(tools=(CALC,), control=Control(**control), **kw)


def _last(request) -> str:
    return request.messages[-1].get("content") or ""


def test_plan_then_act_spends_a_planning_turn_without_tools():
    def policy(request) -> str:
        last = _last(request)
        if "write a short numbered plan" in last:
            return '1. compute with the calculator {"tool": "calculator", "arguments": {"expression": "1"}}'
        if "carry out your plan" in last:
            return '{"tool": "calculator", "arguments": {"expression": "6 * 7"}}'
        return "42"

    result = asyncio.run(run_task(_harness(control={"flow": Flow(plan_then_act=True)}), TASK, MockBackend(policy),
                                  make_verifier("numeric")))
    kinds = [s.get("kind") or s["role"] for s in result.trajectory]
    assert kinds == ["user", "plan", "assistant", "act", "assistant", "tool", "assistant", "verifier"]
    assert result.reward == 1.0 and next(s for s in result.trajectory if s["role"] == "tool")["content"] == "42"


def test_verify_before_answer_asks_once_then_takes_the_answer():
    answers = iter(["41", '{"tool": "calculator", "arguments": {"expression": "6 * 7"}}', "42"])
    backend = MockBackend(lambda r: next(answers))
    result = asyncio.run(run_task(_harness(control={"flow": Flow(verify_before_answer=True)}), TASK, backend,
                                  make_verifier("numeric")))
    assert [s.get("kind") for s in result.trajectory if s["role"] == "user"] == [None, "verify"]
    assert result.reward == 1.0 and len(backend.history) == 3
    plain = asyncio.run(run_task(_harness(), TASK, MockBackend(["41"]), make_verifier("numeric")))
    assert plain.reward == 0.0


def test_retry_on_tool_error_grants_extra_turns_with_a_hint():
    calls = iter(['{"tool": "calculator", "arguments": {"expression": "6 *"}}',
                  '{"tool": "calculator", "arguments": {"expression": "6 * 7"}}', "42"])
    harness = _harness(control={"max_turns": 2, "flow": Flow(retry_on_tool_error=1)})
    backend = MockBackend(lambda r: next(calls))
    result = asyncio.run(run_task(harness, TASK, backend, make_verifier("numeric")))
    assert "try again" in backend.history[1].messages[-1]["content"] and result.reward == 1.0
    strict = asyncio.run(run_task(_harness(control={"max_turns": 2}), TASK, MockBackend([
        '{"tool": "calculator", "arguments": {"expression": "6 *"}}',
        '{"tool": "calculator", "arguments": {"expression": "6 * 7"}}']), make_verifier("numeric")))
    assert strict.error.startswith("TurnLimit")


def test_skills_on_request_list_names_and_load_the_body():
    skill = Skill(name="multiply", description="How to multiply carefully.", body="Use the calculator for products.")
    harness = _harness(skills=(skill,), control={"skills_as": "on_request"})
    system = render_messages(harness, "x")[0]["content"]
    assert "- multiply: How to multiply carefully." in system and "Use the calculator" not in system
    assert "load-skill" in system
    inline = render_messages(_harness(skills=(skill,)), "x")[0]["content"]
    assert "Use the calculator for products." in inline and "load-skill" not in inline
    replies = iter(['{"tool": "load-skill", "arguments": {"name": "multiply"}}', "42"])
    backend = MockBackend(lambda r: next(replies))
    asyncio.run(run_task(harness, TASK, backend, make_verifier("numeric")))
    assert "Result of tool load-skill: Use the calculator for products." in backend.history[1].messages[-1]["content"]


def test_memory_across_turns_and_across_the_tasks_of_a_batch():
    tasks = [Task(id=f"t{i}", input=f"task {i}", target="ok") for i in range(2)]

    def policy(request) -> str:
        text = "\n".join(m.get("content") or "" for m in request.messages)
        system = request.messages[0]["content"]
        if "task 0" in text and "noted" not in text:
            return '{"tool": "note", "arguments": {"text": "answers are lowercase ok"}}'
        if "task 1" in text and "answers are lowercase ok" not in system:
            return '{"tool": "calculator", "arguments": {"expression": "1"}}'
        return "ok"

    shared = _harness(memory=Memory(scope="batch"))
    results = asyncio.run(evaluate(shared, tasks, MockBackend(policy), make_verifier("exact")))
    assert [r.reward for r in results] == [1.0, 1.0]
    second = results[1].trajectory
    assert [s["role"] for s in second] == ["user", "assistant", "tool", "assistant", "verifier"]  # saw the note
    alone = asyncio.run(evaluate(_harness(memory=Memory(scope="turns")), tasks, MockBackend(policy),
                                 make_verifier("exact")))
    assert len([s for s in alone[1].trajectory if s["role"] == "tool"]) == 5  # never sees task 0's note


def test_notebook_update_policies():
    notes = Notebook(Memory(update="append", max_notes=2, max_chars=20))
    for text in ("one", "two", "three " * 10):
        notes.write(text)
    assert notes.notes == ["two", "three three three th"]
    latest = Notebook(Memory(update="replace"))
    latest.write("a")
    latest.write("b")
    assert latest.notes == ["b"] and latest.write("") == "error: a note needs text"


def test_context_policy_shortens_old_observations_in_requests_only():
    observations = [f"line {i}\n" + "x" * 400 + f"\nend {i}" for i in range(6)]
    replies = iter([json.dumps({"tool": "calculator", "arguments": {"expression": str(i)}}) for i in range(6)] + ["5"])
    seen: list[list[dict]] = []

    def policy(request):
        seen.append([dict(m) for m in request.messages])
        return next(replies)

    harness = _harness(control={"max_turns": 8}, context=Context(strategy="truncate", budget_tokens=256, keep_last=1))
    result = asyncio.run(run_task(harness, Task(id="c", input="count", target="5"), MockBackend(policy),
                                  make_verifier("numeric")))
    last_request = seen[-1]
    assert any(m["content"] == ELIDED for m in last_request)
    assert "Result of tool calculator: 5" in last_request[-1]["content"]  # the newest observation stays whole
    assert all(s["content"] != ELIDED for s in result.trajectory)  # the stored trajectory keeps everything
    messages = [{"role": "system", "content": "s"}] + [{"role": "user", "content": o} for o in observations]
    summarized = fit_context(messages, list(range(1, 7)), Context(strategy="summarize", budget_tokens=300,
                                                                  keep_last=2))
    assert summarized[1]["content"].startswith("line 0\n… (1 lines not shown) …\nend 0")
    assert summarized[-1]["content"] == observations[-1] and estimate_tokens(summarized) < estimate_tokens(messages)
