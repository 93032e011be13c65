"""Native tool calling through litellm against a fake OpenAI-compatible server on 127.0.0.1: the tool
definitions go out as `tools=`, the server's tool calls run in the sandbox, and their results come back
as `tool` messages; the same harness talks the text protocol to a backend without native tools."""

from __future__ import annotations

import asyncio
import json
import random

from evolve.backends.base import native_tools
from evolve.backends.cache import CachedBackend
from evolve.backends.litellm_backend import LiteLLMBackend
from evolve.backends.metered import MeteredBackend
from evolve.backends.mock import MockBackend
from evolve.backends.retry import RetryPolicy
from evolve.bench.runtime import run_task
from evolve.bench.task import Task
from evolve.bench.tools import builtin_tool
from evolve.bench.verifiers import make_verifier
from evolve.harness import Control, Harness

HARNESS = Harness(tools=(builtin_tool("calculator"),), control=Control(max_turns=4, max_tokens=128))
TASK = Task(id="m", input="What is 17 * 23?", target="391")


def _backend(server) -> LiteLLMBackend:
    return LiteLLMBackend("hosted_vllm/fake-model", api_bases=[server.api_base], rng=random.Random(0),
                          policy=RetryPolicy(max_retries=0, timeout_s=10.0))


def _call(expression: str, call_id: str = "call_1") -> dict:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": "calculator",
                                                         "arguments": json.dumps({"expression": expression})}}]}


def test_native_tool_calls_are_sent_and_their_results_fed_back(fake_server):
    def answer(body: dict) -> str:
        result = next(m for m in body["messages"] if m["role"] == "tool")
        return f"The product is {result['content']}."

    fake_server.script = [_call("17 * 23"), answer]
    result = asyncio.run(run_task(HARNESS, TASK, _backend(fake_server), make_verifier("numeric")))
    first, second = fake_server.chat_requests
    assert first["tools"] == [{"type": "function", "function": {
        "name": "calculator", "description": HARNESS.tools[0].description, "parameters": HARNESS.tools[0].parameters}}]
    assert first["tool_choice"] == "auto"
    assert "# Tools" not in first["messages"][0]["content"]  # no text-protocol instructions when native
    assistant, tool = second["messages"][-2:]
    assert assistant["tool_calls"][0]["id"] == "call_1"
    assert assistant["tool_calls"][0]["function"] == {"name": "calculator", "arguments": '{"expression": "17 * 23"}'}
    assert tool == {"role": "tool", "tool_call_id": "call_1", "content": "391"}
    assert result.reward == 1.0 and result.prediction == "The product is 391."
    assert [s["role"] for s in result.trajectory] == ["user", "assistant", "tool", "assistant", "verifier"]
    assert result.trajectory[1]["tool_calls"] == [{"name": "calculator", "arguments": {"expression": "17 * 23"}}]
    assert result.trajectory[1]["tokens_in"] == 7 and result.tokens_in == 14


def test_wrappers_keep_native_tools_and_the_cache_keeps_tool_calls(fake_server):
    fake_server.script = [_call("2 + 2"), "4", _call("2 + 2"), "4"]
    backend = MeteredBackend(CachedBackend(_backend(fake_server)))
    assert native_tools(backend) and not native_tools(MockBackend())
    first = asyncio.run(run_task(HARNESS, Task(id="a", input="2+2?", target="4"), backend, make_verifier("numeric")))
    again = asyncio.run(run_task(HARNESS, Task(id="a", input="2+2?", target="4"), backend, make_verifier("numeric")))
    assert first.reward == again.reward == 1.0
    assert len(fake_server.chat_requests) == 2  # the second rollout came from the cache, tool call included


def test_text_protocol_when_forced_or_without_native_support(fake_server):
    text = HARNESS.model_copy(update={"control": HARNESS.control.model_copy(update={"tool_protocol": "text"})})
    fake_server.script = ['{"tool": "calculator", "arguments": {"expression": "17 * 23"}}', "391"]
    result = asyncio.run(run_task(text, TASK, _backend(fake_server), make_verifier("numeric")))
    first, second = fake_server.chat_requests
    assert "tools" not in first and "# Tools" in first["messages"][0]["content"]
    assert second["messages"][-1]["role"] == "user" and "Result of tool calculator: 391" in \
        second["messages"][-1]["content"]
    assert result.reward == 1.0


def test_invalid_native_arguments_come_back_as_an_error(fake_server):
    broken = _call("1")
    broken["tool_calls"][0]["function"]["arguments"] = "{not json"
    fake_server.script = [broken, "done"]
    result = asyncio.run(run_task(HARNESS, Task(id="b", input="x", target="done"), _backend(fake_server),
                                  make_verifier("exact")))
    tool = fake_server.chat_requests[1]["messages"][-1]
    assert tool["role"] == "tool" and tool["content"] == "error: tool arguments must be a JSON object"
    assert result.reward == 1.0
