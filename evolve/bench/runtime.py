"""The agent runtime: roll a harness out on tasks with the policy backend and score the results.

`evaluate` renders every (task, trial, sample) conversation, gives each its own fresh workspace when
the benchmark's environment has one, runs the multi-turn agent loop (`evolve.bench.agent`: all
conversations' turns go to `backend.complete` as one batch; tool calls run in the sandbox), extracts
the answer (`control.answer`), scores it (a workspace verifier sees the final workspace), and
combines samples by majority vote (at temperature 0 one sample stands for all). A harness that
answers by choice (`control.choice`) is scored instead of generated (`evolve.bench.choice`). A failed call, tool
or hit limit is a scored failure (reward 0, error kept), never an exception. The environment travels
with the benchmark's verifier (`verifier.environment`), so `evaluate(harness, tasks, backend,
verifier, trials=, seed=)` needs no other argument.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evolve.backends.base import Backend, Completion, Request, native_tools
from evolve.bench.agent import AgentContext, Conversation, converse, start
from evolve.bench.choice import choose
from evolve.bench.context import Notebook
from evolve.bench.environment import Environment, environment_of
from evolve.bench.task import Task
from evolve.bench.tools import ToolRegistry
from evolve.bench.trajectory import workspace_changes
from evolve.bench.verifiers import Verifier, VerifierResult
from evolve.errors import EvolveError
from evolve.harness.model import AnswerExtraction, Harness
from evolve.harness.render import agent_tools, render_messages
from evolve.jsontext import json_objects
from evolve.store.records import RolloutRecord

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
    """The task input, then every turn (assistant text, tokens, tool calls), observation and runtime
    prompt, the verifier's detail, the workspace changes and the samples' votes."""

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
    """Samples actually drawn: greedy decoding (temperature 0) gives the same text every time, so one;
    a harness that answers by choice scores its labels once."""
    if harness.control.choice.labels:
        return 1
    return harness.control.samples if harness.control.temperature > 0 else 1


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


async def _score(verifier: Verifier, task: Task, answer: str, workspace: Path | None = None) -> VerifierResult:
    if workspace is not None and hasattr(verifier, "score_workspace"):
        if getattr(verifier, "blocking", False):
            return await asyncio.to_thread(verifier.score_workspace, task, answer, workspace)
        return verifier.score_workspace(task, answer, workspace)
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


async def _score_one(harness: Harness, conv: Conversation, verifier: Verifier) -> tuple[str | None, VerifierResult]:
    if conv.error and conv.limit is None:
        return None, VerifierResult(0.0, False, None, f"error: {conv.error}")
    answer = None if conv.error else extract_answer(conv.text, harness.control.answer)
    result = await _score(verifier, conv.task, answer or "", conv.workspace)
    if conv.limit is not None:  # the work done is still checked (for the analyst), but a hit limit fails
        result = VerifierResult(0.0, result.parsed, result.normalized, f"{conv.limit}; {result.detail}")
    return answer, result


async def _finish(harness: Harness, group: list[Conversation], verifier: Verifier) -> RolloutResult:
    scored = [await _score_one(harness, conv, verifier) for conv in group]
    ok = [i for i, c in enumerate(group) if not c.error or c.limit is not None]
    pick = ok[vote([scored[i] for i in ok], harness.control.vote)] if ok else 0
    chosen, (answer, result) = group[pick], scored[pick]
    task_message = {"role": "user", "content": chosen.messages[chosen.start].get("content") or ""}
    trajectory = [task_message, *chosen.steps, {"role": "verifier", "content": result.detail}]
    if chosen.workspace is not None:
        changes = workspace_changes(chosen.task.meta.get("workspace"), chosen.workspace)
        if changes:
            trajectory.append({"role": "workspace", "content": changes})
    if len(group) > 1:
        votes = [r.normalized if r.parsed else None for _, r in scored]
        trajectory.append({"role": "vote", "content": json.dumps(votes)})
    return RolloutResult(
        task_id=chosen.task.id, trial=chosen.trial, reward=result.reward, prediction=answer,
        parsed=result.parsed, tokens_in=sum(c.tokens_in for c in group),
        tokens_out=sum(c.tokens_out for c in group), latency_s=sum(c.latency_s + c.tool_s for c in group),
        error=chosen.error if not ok or chosen.limit is not None else None, trajectory=trajectory,
    )


def rollout_environment(verifier: Verifier, tools: ToolRegistry | None = None,
                        environment: Environment | None = None) -> Environment:
    """The environment of a rollout: `environment`, else the one the benchmark attached to `verifier`
    (else a plain one); `tools` replaces its allow-list."""
    env = environment or environment_of(verifier)
    if tools is not None:
        env = copy.copy(env)
        env.tools = tools
    return env


def _conversation(harness: Harness, task: Task, trial: int, sample: int, env: Environment, native: bool,
                  notes: Notebook | None) -> Conversation:
    messages = render_messages(harness, task.input, native_tools=native)
    max_turns = min(harness.control.max_turns, env.limits.max_turns or harness.control.max_turns)
    conv = Conversation(task, trial, sample, list(messages), len(messages) - 1, max_turns, native=native,
                        notebook=notes if harness.memory.scope == "batch" else
                        Notebook(harness.memory) if harness.memory.scope == "turns" else None)
    conv.workspace = env.open_workspace(task)
    start(conv, harness)
    return conv


async def _chosen_units(harness: Harness, units: list[tuple[Task, int]], backend: Backend,
                        verifier: Verifier) -> list[RolloutResult]:
    """Rollouts of a harness that answers by choice (`evolve.bench.choice`): one scoring call per task."""
    chosen = await choose(harness, [task.input for task, _ in units], backend, _complete)
    results = []
    for (task, trial), c in zip(units, chosen, strict=True):
        if c.answer is None:
            result = VerifierResult(0.0, False, None, f"error: {c.error}")
        else:
            result = await _score(verifier, task, c.answer)
        evidence = {"scores": c.scores, **({"prior": c.prior} if c.prior is not None else {})}
        trajectory = [{"role": "user", "content": str(task.input)},
                      {"role": "assistant", "content": c.answer or ""},
                      {"role": "choice", "content": json.dumps(evidence)},
                      {"role": "verifier", "content": result.detail}]
        results.append(RolloutResult(task_id=task.id, trial=trial, reward=result.reward, prediction=c.answer,
                                     parsed=result.parsed, tokens_in=c.tokens_in, tokens_out=c.tokens_out,
                                     latency_s=c.latency_s, error=c.error, trajectory=trajectory))
    return results


async def _run_units(harness: Harness, units: list[tuple[Task, int]], backend: Backend, verifier: Verifier,
                     seed: int, env: Environment) -> list[RolloutResult]:
    if harness.control.choice.labels:
        return await _chosen_units(harness, units, backend, verifier)
    samples = effective_samples(harness)
    native = bool(agent_tools(harness)) and harness.control.tool_protocol != "text" and native_tools(backend)
    notes = Notebook(harness.memory) if harness.memory.scope == "batch" else None
    groups: list[list[Conversation]] = []
    try:
        for task, trial in units:
            groups.append([_conversation(harness, task, trial, s, env, native, notes) for s in range(samples)])
        ctx = AgentContext(harness, backend, env, seed, _complete,
                           lambda c: sample_seed(seed, c.task.id, c.trial, c.sample)
                           if harness.control.temperature > 0 else None, batch_notes=notes)
        await converse(ctx, [c for g in groups for c in g])
        return [await _finish(harness, g, verifier) for g in groups]
    finally:
        for group in groups:
            for conv in group:
                if conv.workspace is not None:
                    env.close_workspace(conv.workspace)


async def run_task(harness: Harness, task: Task, backend: Backend, verifier: Verifier, *, trial: int = 0,
                   seed: int = 0, tools: ToolRegistry | None = None,
                   environment: Environment | None = None) -> RolloutResult:
    """Roll out `harness` on one task (all samples and tool turns) and score it."""
    env = rollout_environment(verifier, tools, environment)
    [result] = await _run_units(harness, [(task, trial)], backend, verifier, seed, env)
    return result


async def evaluate(harness: Harness, tasks: Sequence[Task], backend: Backend, verifier: Verifier, *,
                   trials: int = 1, seed: int = 0, batch_size: int = 64,
                   progress: Progress | None = None, tools: ToolRegistry | None = None,
                   environment: Environment | None = None) -> list[RolloutResult]:
    """One RolloutResult per task × trial, in order (task-major); requests go out in batches.

    The environment (workspaces, tool allow-list, limits) is `environment`, else the one the
    benchmark attached to `verifier`; `tools` replaces its allow-list."""
    env = rollout_environment(verifier, tools, environment)
    units = [(task, trial) for task in tasks for trial in range(trials)]
    results: list[RolloutResult] = []
    for begin in range(0, len(units), batch_size):
        results += await _run_units(harness, units[begin:begin + batch_size], backend, verifier, seed, env)
        if progress is not None:
            progress(len(results), len(units))
    return results
