"""The agent runtime: roll a harness out on tasks with the policy backend and score the answers.

`evaluate` renders every (task, trial, sample) conversation, sends each turn of all of them as one
batch to `backend.complete`, runs JSON tool calls between turns (up to `control.max_turns`),
extracts the answer (`control.answer`), scores it, and combines samples by majority vote (at
temperature 0 one sample stands for all). A failed call or tool is a scored failure (reward 0,
error kept), never an exception.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evolve.backends.base import Backend, Completion, Request
from evolve.bench.task import Task
from evolve.bench.tools import ToolRegistry, call_tool, parse_tool_call
from evolve.bench.verifiers import Verifier, VerifierResult
from evolve.errors import EvolveError
from evolve.harness.model import AnswerExtraction, Harness
from evolve.harness.render import render_messages
from evolve.jsontext import json_objects
from evolve.store.records import RolloutRecord
from evolve.templating import render

TEMPLATES = Path(__file__).resolve().parent / "templates"
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class RolloutResult:
    """One scored attempt (trial) of a harness on a task."""

    task_id: str
    trial: int
    reward: float
    prediction: str | None
    """The extracted answer that was scored (after the vote), or None."""
    parsed: bool
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    error: str | None = None
    trajectory: list[dict[str, Any]] = field(default_factory=list)
    """Messages from the task input on, tool results, other samples' answers and the verifier's detail."""

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out

    def to_record(self, *, run_id: str, harness_hash: str, benchmark: str, split: str,
                  candidate_id: str | None = None) -> RolloutRecord:
        return RolloutRecord(
            run_id=run_id, harness_hash=harness_hash, benchmark=benchmark, split=split, task_id=self.task_id,
            reward=self.reward, trial=self.trial, candidate_id=candidate_id, prediction=self.prediction,
            parsed=self.parsed, tokens_in=self.tokens_in, tokens_out=self.tokens_out, latency_s=self.latency_s,
            error=self.error, trajectory=self.trajectory,
        )


@dataclass
class _Conversation:
    task: Task
    trial: int
    sample: int
    messages: list[dict[str, str]]
    start: int
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    error: str | None = None
    text: str = ""
    done: bool = False


def extract_answer(text: str, answer: AnswerExtraction) -> str | None:
    """The answer part of a reply according to `control.answer`, or None when there is none."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if answer.mode == "full":
        return text.strip() or None
    if answer.mode == "first_line":
        return lines[0] if lines else None
    if answer.mode == "last_line":
        return lines[-1] if lines else None
    if answer.mode == "regex":
        match = re.search(answer.pattern or "", text)
        return (match.group(1) if match.groups() else match.group(0)).strip() if match else None
    return _json_field(text, answer.pattern or "")


def _json_field(text: str, name: str) -> str | None:
    for obj in json_objects(text):
        if name in obj:
            value = obj[name]
            return value if isinstance(value, str) else json.dumps(value)
    return None


def sample_seed(seed: int, task_id: str, trial: int, sample: int) -> int:
    digest = hashlib.sha256(f"{seed}:{task_id}:{trial}:{sample}".encode()).hexdigest()
    return int(digest[:8], 16) % (2**31)


def effective_samples(harness: Harness) -> int:
    """Samples actually drawn: greedy decoding (temperature 0) gives the same text every time, so one."""
    return harness.control.samples if harness.control.temperature > 0 else 1


def _request(harness: Harness, conv: _Conversation, seed: int) -> Request:
    control = harness.control
    sampled = control.temperature > 0
    return Request(
        messages=tuple(conv.messages), role="policy", temperature=control.temperature,
        max_tokens=control.max_tokens, seed=sample_seed(seed, conv.task.id, conv.trial, conv.sample) if sampled
        else None,
    )


async def _complete(backend: Backend, requests: list[Request]) -> list[Completion]:
    try:
        completions = await backend.complete(requests)
    except EvolveError:
        raise
    except Exception as exc:  # the backend broke its contract: score the batch as failures
        message = f"{type(exc).__name__}: {exc}"
        return [Completion("", error=message) for _ in requests]
    if len(completions) != len(requests):
        return [Completion("", error="backend returned a wrong number of completions") for _ in requests]
    return completions


def _advance(harness: Harness, conv: _Conversation, completion: Completion,
             last_turn: bool) -> tuple[str, dict[str, Any]] | None:
    """Take in one reply; return the tool call it asks for (None when the conversation is done)."""
    conv.tokens_in += completion.usage.prompt_tokens
    conv.tokens_out += completion.usage.completion_tokens
    conv.latency_s += completion.latency_s
    if completion.error:
        conv.error, conv.done = completion.error, True
        return None
    conv.text = completion.text
    conv.messages.append({"role": "assistant", "content": completion.text})
    call = parse_tool_call(completion.text) if harness.tools and not last_turn else None
    if call is None:
        conv.done = True
    return call


async def _converse(harness: Harness, convs: list[_Conversation], backend: Backend, seed: int,
                    registry: ToolRegistry) -> None:
    for turn in range(harness.control.max_turns):
        active = [c for c in convs if not c.done]
        if not active:
            return
        completions = await _complete(backend, [_request(harness, c, seed) for c in active])
        last = turn == harness.control.max_turns - 1
        calls = [(conv, _advance(harness, conv, completion, last))
                 for conv, completion in zip(active, completions, strict=True)]
        calls = [(conv, call) for conv, call in calls if call is not None]
        results = await asyncio.gather(*(asyncio.to_thread(call_tool, harness.tools, call[0], call[1],
                                                           registry=registry) for _, call in calls))
        for (conv, call), result in zip(calls, results, strict=True):
            conv.messages.append({"role": "user", "content": render("tool_result.md.j2", TEMPLATES, tool=call[0],
                                                                    result=result.text).strip()})


async def _score(verifier: Verifier, task: Task, answer: str) -> VerifierResult:
    ascore = getattr(verifier, "ascore", None)
    if ascore is not None:
        return await ascore(task, answer)
    if getattr(verifier, "blocking", False):
        return await asyncio.to_thread(verifier.score, task, answer)
    return verifier.score(task, answer)


def vote(results: Sequence[tuple[str | None, VerifierResult]], how: str = "majority") -> int:
    """Index of the winning sample: most frequent normalized parsed answer (ties: earliest), or the first."""
    if how == "first" or len(results) == 1:
        return 0
    keys = [r.normalized if r.parsed and r.normalized is not None else None for _, r in results]
    counts = Counter(k for k in keys if k is not None)
    if not counts:
        return 0
    best = max(counts.values())
    return next(i for i, k in enumerate(keys) if k is not None and counts[k] == best)


async def _finish(harness: Harness, group: list[_Conversation], verifier: Verifier) -> RolloutResult:
    scored: list[tuple[str | None, VerifierResult]] = []
    for conv in group:
        answer = None if conv.error else extract_answer(conv.text, harness.control.answer)
        if conv.error:
            scored.append((None, VerifierResult(0.0, False, None, f"error: {conv.error}")))
        else:
            scored.append((answer, await _score(verifier, conv.task, answer or "")))
    ok = [i for i, c in enumerate(group) if not c.error]
    pick = ok[vote([scored[i] for i in ok], harness.control.vote)] if ok else 0
    chosen, (answer, result) = group[pick], scored[pick]
    trajectory = [*chosen.messages[chosen.start:], {"role": "verifier", "content": result.detail}]
    if len(group) > 1:
        votes = [r.normalized if r.parsed else None for _, r in scored]
        trajectory.append({"role": "vote", "content": json.dumps(votes)})
    return RolloutResult(
        task_id=chosen.task.id, trial=chosen.trial, reward=result.reward, prediction=answer,
        parsed=result.parsed, tokens_in=sum(c.tokens_in for c in group),
        tokens_out=sum(c.tokens_out for c in group), latency_s=sum(c.latency_s for c in group),
        error=chosen.error if not ok else None, trajectory=trajectory,
    )


def tool_registry(verifier: Verifier, tools: ToolRegistry | None = None) -> ToolRegistry:
    """The allow-list of a rollout: `tools`, else the one the benchmark attached to its verifier, else
    the built-ins and process-wide registrations."""
    return tools or getattr(verifier, "tool_registry", None) or ToolRegistry()


async def _run_units(harness: Harness, units: list[tuple[Task, int]], backend: Backend, verifier: Verifier,
                     seed: int, tools: ToolRegistry | None = None) -> list[RolloutResult]:
    groups = []
    samples = effective_samples(harness)
    for task, trial in units:
        messages = render_messages(harness, task.input)
        groups.append([_Conversation(task, trial, s, list(messages), len(messages) - 1) for s in range(samples)])
    await _converse(harness, [c for g in groups for c in g], backend, seed, tool_registry(verifier, tools))
    return [await _finish(harness, g, verifier) for g in groups]


async def run_task(harness: Harness, task: Task, backend: Backend, verifier: Verifier, *, trial: int = 0,
                   seed: int = 0, tools: ToolRegistry | None = None) -> RolloutResult:
    """Roll out `harness` on one task (all samples and tool turns) and score it."""
    [result] = await _run_units(harness, [(task, trial)], backend, verifier, seed, tools)
    return result


async def evaluate(harness: Harness, tasks: Sequence[Task], backend: Backend, verifier: Verifier, *,
                   trials: int = 1, seed: int = 0, batch_size: int = 64,
                   progress: Progress | None = None, tools: ToolRegistry | None = None) -> list[RolloutResult]:
    """One RolloutResult per task × trial, in order (task-major); requests go out in batches.

    `tools` is the allow-list of tool implementations (default: the one the benchmark attached to
    `verifier`, else the built-ins and process-wide registrations)."""
    units = [(task, trial) for task in tasks for trial in range(trials)]
    results: list[RolloutResult] = []
    for start in range(0, len(units), batch_size):
        results += await _run_units(harness, units[start:start + batch_size], backend, verifier, seed, tools)
        if progress is not None:
            progress(len(results), len(units))
    return results
