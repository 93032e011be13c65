"""The multi-turn agent loop: turns of all conversations of a batch go to the backend together.

Each turn: limits are checked (tokens and time of the rollout; a hit ends it with `TokenLimit` or
`TimeLimit`), the request is built (memory notes in the system message, old observations shortened
per the `context` policy, native tool definitions where the backend takes them), the reply is taken
in, and the tool calls it asks for run concurrently in the sandbox (`load-skill` and `note` are
answered by the runtime itself). Observations go back as `tool` messages (native) or as user
messages (text protocol). `control.flow` adds a planning turn, one verification round before the
answer, and extra turns after failed calls. A reply that still calls a tool when no turn is left ends
the rollout with `TurnLimit`.

Every step is kept in `Conversation.steps` (the trajectory): assistant turns with their tokens and
tool calls, observations with their time, and the runtime's own prompts.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evolve.backends.base import Backend, Completion, Request
from evolve.bench.context import Notebook, fit_context
from evolve.bench.environment import Environment
from evolve.bench.task import Task
from evolve.bench.tools import ToolResult, call_tool, definitions, parse_tool_call
from evolve.harness.model import Harness, Tool
from evolve.harness.render import RUNTIME_TOOLS, agent_tools
from evolve.templating import render

TEMPLATES = Path(__file__).resolve().parent / "templates"
Complete = Callable[[Backend, list[Request]], Any]


def prompt(name: str, **variables: Any) -> str:
    """One of the runtime's own prompt templates, rendered."""
    return render(f"{name}.md.j2", TEMPLATES, **variables).strip()


@dataclass
class Call:
    """A tool call taken from a reply."""

    id: str
    name: str
    arguments: Any
    """A dict when the arguments parsed, else the raw text (which the tool then refuses)."""


@dataclass
class Conversation:
    """One sample of one task: the chat so far, its workspace, counters and trajectory."""

    task: Task
    trial: int
    sample: int
    messages: list[dict[str, Any]]
    start: int
    """Index of the task message in `messages`."""
    max_turns: int
    workspace: Path | None = None
    native: bool = False
    notebook: Notebook | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    tool_s: float = 0.0
    error: str | None = None
    limit: str | None = None
    """The limit that ended the rollout (`TurnLimit`, `TokenLimit`, `TimeLimit`), if one did."""
    text: str = ""
    done: bool = False
    turns: int = 0
    tool_calls: int = 0
    planning: bool = False
    verified: bool = False
    retries_left: int = 0
    observations: list[int] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)

    def say(self, text: str, kind: str) -> None:
        """A prompt of the runtime (plan, act, verify) as a user message."""
        self.messages.append({"role": "user", "content": text})
        self.steps.append({"role": "user", "kind": kind, "content": text})

    def end(self, kind: str, message: str) -> None:
        self.error, self.limit, self.done = f"{kind}: {message}", kind, True
        self.steps.append({"role": "limit", "kind": kind, "content": message})


@dataclass
class AgentContext:
    """What one batch of conversations shares."""

    harness: Harness
    backend: Backend
    environment: Environment
    seed: int
    complete: Complete
    request_seed: Callable[[Conversation], int | None]
    batch_notes: Notebook | None = None
    tools: tuple[Tool, ...] = ()

    def __post_init__(self) -> None:
        self.tools = agent_tools(self.harness)


def start(conv: Conversation, harness: Harness) -> None:
    """Open the conversation: the planning prompt when `flow.plan_then_act` is on."""
    conv.retries_left = harness.control.flow.retry_on_tool_error
    if harness.control.flow.plan_then_act and conv.max_turns > 1:
        conv.planning = True
        conv.say(prompt("plan"), "plan")


def _system_with_notes(messages: list[dict[str, Any]], notebook: Notebook | None) -> list[dict[str, Any]]:
    if notebook is None or not notebook.notes or not messages or messages[0].get("role") != "system":
        return messages
    notes = prompt("notes", notes=notebook.notes)
    system = messages[0].get("content") or ""
    return [{**messages[0], "content": f"{system}\n\n{notes}" if system else notes}, *messages[1:]]


def request_for(ctx: AgentContext, conv: Conversation) -> Request:
    control = ctx.harness.control
    messages = fit_context(conv.messages, conv.observations, ctx.harness.context)
    messages = _system_with_notes(messages, conv.notebook)
    return Request(messages=tuple(messages), role="policy", temperature=control.temperature,
                   max_tokens=control.max_tokens, seed=ctx.request_seed(conv),
                   tools=tuple(definitions(ctx.tools)) if conv.native and ctx.tools else ())


def _check_limits(ctx: AgentContext, conv: Conversation) -> None:
    limits = ctx.environment.limits
    used = conv.tokens_in + conv.tokens_out
    if limits.max_tokens is not None and used >= limits.max_tokens:
        conv.end("TokenLimit", f"{used} policy tokens used; the limit is {limits.max_tokens}")
    elif limits.max_seconds is not None and conv.latency_s + conv.tool_s >= limits.max_seconds:
        conv.end("TimeLimit", f"{conv.latency_s + conv.tool_s:.1f}s of model and tool time used; the limit is "
                              f"{limits.max_seconds:g}s")


def _calls(ctx: AgentContext, conv: Conversation, completion: Completion) -> list[Call]:
    if not ctx.tools:
        return []
    if conv.native:
        return [Call(c.id, c.name, c.arguments if c.parsed() is None else c.parsed())
                for c in completion.tool_calls]
    found = parse_tool_call(completion.text)
    return [Call(f"call_{conv.turns}", found[0], found[1])] if found else []


def _assistant_message(conv: Conversation, text: str, calls: list[Call]) -> dict[str, Any]:
    if conv.native and calls:
        return {"role": "assistant", "content": text or None, "tool_calls": [
            {"id": c.id, "type": "function", "function": {
                "name": c.name, "arguments": c.arguments if isinstance(c.arguments, str) else json.dumps(c.arguments)}}
            for c in calls]}
    return {"role": "assistant", "content": text}


def take_reply(ctx: AgentContext, conv: Conversation, completion: Completion) -> list[Call]:
    """Take in one reply; return the tool calls to run (empty when the turn needs none)."""
    conv.tokens_in += completion.usage.prompt_tokens
    conv.tokens_out += completion.usage.completion_tokens
    conv.latency_s += completion.latency_s
    conv.turns += 1
    if completion.error:
        conv.error, conv.done = completion.error, True
        return []
    calls = [] if conv.planning else _calls(ctx, conv, completion)  # a plan's tool calls are not run
    conv.steps.append({"role": "assistant", "turn": conv.turns, "content": completion.text,
                       "tokens_in": completion.usage.prompt_tokens, "tokens_out": completion.usage.completion_tokens,
                       "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in calls]})
    if conv.planning:
        conv.planning = False
        conv.messages.append({"role": "assistant", "content": completion.text})
        conv.say(prompt("act"), "act")
        return []
    conv.messages.append(_assistant_message(conv, completion.text, calls))
    if calls:
        if conv.turns >= conv.max_turns:
            conv.end("TurnLimit", f"still calling tools after {conv.turns} turns")
            return []
        return calls
    if ctx.harness.control.flow.verify_before_answer and not conv.verified and conv.turns < conv.max_turns:
        conv.verified = True
        conv.say(prompt("verify"), "verify")
        return []
    conv.text, conv.done = completion.text, True
    return []


def _runtime_tool(ctx: AgentContext, conv: Conversation, call: Call) -> ToolResult:
    args = call.arguments if isinstance(call.arguments, dict) else {}
    if call.name == "load-skill":
        skill = ctx.harness.skill(str(args.get("name", "")))
        if skill is None:
            return ToolResult(f"error: unknown skill {args.get('name')!r}; available: "
                              f"{', '.join(s.name for s in ctx.harness.skills)}", False)
        return ToolResult(skill.body, True)
    notebook = conv.notebook or Notebook(ctx.harness.memory)
    reply = notebook.write(args.get("text"))
    return ToolResult(reply, not reply.startswith("error"))


def run_call(ctx: AgentContext, conv: Conversation, call: Call) -> ToolResult:
    """Run one call: the runtime's own tools here, every other tool in the sandbox."""
    if call.name in RUNTIME_TOOLS and any(t.name == call.name and t.implementation == RUNTIME_TOOLS[call.name]
                                          .implementation for t in ctx.tools):
        return _runtime_tool(ctx, conv, call)
    return call_tool(ctx.harness.tools, call.name, call.arguments, registry=ctx.environment.tools,
                     workspace=conv.workspace, limits=ctx.environment.sandbox)


def observe(ctx: AgentContext, conv: Conversation, call: Call, result: ToolResult) -> None:
    """Give a tool's result back to the policy and record it."""
    conv.tool_calls += 1
    conv.tool_s += result.seconds
    text = result.text
    if not result.ok and conv.retries_left > 0:
        conv.retries_left -= 1
        conv.max_turns += 1
        text = f"{text}\n{prompt('retry')}"
    if conv.native:
        conv.messages.append({"role": "tool", "tool_call_id": call.id, "content": text})
    else:
        conv.messages.append({"role": "user", "content": prompt("tool_result", tool=call.name, result=text)})
    conv.observations.append(len(conv.messages) - 1)
    conv.steps.append({"role": "tool", "name": call.name, "ok": result.ok, "seconds": round(result.seconds, 3),
                       "content": text})


async def converse(ctx: AgentContext, convs: list[Conversation]) -> None:
    """Run every conversation to its answer, error or limit (see the module docstring)."""
    while True:
        for conv in convs:
            if not conv.done:
                _check_limits(ctx, conv)
        active = [c for c in convs if not c.done]
        if not active:
            return
        completions = await ctx.complete(ctx.backend, [request_for(ctx, c) for c in active])
        pending = [(conv, call) for conv, completion in zip(active, completions, strict=True)
                   for call in take_reply(ctx, conv, completion)]
        results = await asyncio.gather(*(asyncio.to_thread(run_call, ctx, conv, call) for conv, call in pending))
        for (conv, call), result in zip(pending, results, strict=True):
            observe(ctx, conv, call, result)
