"""The runtime API for production agents: load an evolved harness, render it, run it.

    from evolve import load_harness
    agent = load_harness("export/harness.json")        # a bundle, an export folder or a harness folder
    agent.messages("Is the sky green?")               # chat messages for any client
    agent.run("Is the sky green?", model="openai/gpt-4.1-mini").answer

`load_harness` accepts a harness folder (`harness.yaml` ...), a JSON bundle (`evolve export --format
json`) or a folder that holds one (`--format json|python`). A bundle's recorded version must match
the content hash of what it holds, so an edited or corrupted bundle is refused.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evolve.backends.base import Backend, Request
from evolve.errors import HarnessError
from evolve.harness import Harness, render_messages
from evolve.harness import load_harness as load_document


@dataclass(frozen=True)
class AgentResult:
    """What one run of the agent on one task produced."""

    answer: str
    """The extracted answer (the harness's answer-extraction rule applied to `text`)."""
    text: str
    """The model's full final text."""
    usage: dict[str, int]
    """`prompt_tokens`, `completion_tokens` and `total` over every call of the task."""
    trajectory: list[dict[str, Any]] = field(default_factory=list)
    """Messages exchanged, in order (the last assistant message included)."""
    error: str | None = None
    """Set when the model call failed; `answer` and `text` are then empty."""


def _task_input(task: Any) -> str:
    if isinstance(task, str):
        return task
    value = getattr(task, "input", None)
    if isinstance(value, str):
        return value
    if isinstance(task, dict) and isinstance(task.get("input"), str):
        return task["input"]
    raise TypeError(f"task must be a string or have a string `.input`, not {type(task).__name__}")


class Agent:
    """An evolved harness ready to render and run tasks."""

    def __init__(self, harness: Harness, *, source: str = "", provenance: dict[str, Any] | None = None) -> None:
        self.harness = harness
        self.source = source
        self.provenance = dict(provenance or {})

    @property
    def version(self) -> str:
        """The harness content hash (the same id `evolve lineage` and `evolve show` print)."""
        return self.harness.version

    def __repr__(self) -> str:
        return f"Agent(version={self.version!r}, name={self.harness.name!r})"

    def messages(self, task: Any) -> list[dict[str, str]]:
        """Chat messages for `task` (a string, or an object/dict with an `input` string)."""
        return render_messages(self.harness, _task_input(task))

    def run(self, task: Any, model: str | Backend = "embedded", api_base: str | None = None) -> AgentResult:
        """Run `task` against `model` (a model string such as `embedded`, `openai/...`,
        `hosted_vllm/...` with `api_base`, or a Backend object) and return the result."""
        return asyncio.run(self.arun(task, model=model, api_base=api_base))

    async def arun(self, task: Any, model: str | Backend = "embedded", api_base: str | None = None) -> AgentResult:
        """Async `run` (for callers that already have an event loop)."""
        backend = _backend(model, api_base)
        runner = _bench_runner()
        if runner is not None and not isinstance(task, str) and hasattr(task, "target"):
            return await runner(self.harness, task, backend)
        return await _direct(self.harness, self.messages(task), backend)


def _backend(model: str | Backend, api_base: str | None) -> Backend:
    if not isinstance(model, str):
        return model
    from evolve.backends import get_backend

    return get_backend(model, api_base=api_base)


def _bench_runner() -> Any:
    """The benchmark runtime's task runner when available (tools, votes), else None."""
    try:
        from evolve.bench.runtime import run_task
    except ImportError:
        return None

    async def runner(harness: Harness, task: Any, backend: Backend) -> AgentResult:
        out = await run_task(harness, task, backend)
        usage = dict(getattr(out, "usage", {}) or {})
        if not usage:
            usage = {"prompt_tokens": getattr(out, "tokens_in", 0), "completion_tokens": getattr(out, "tokens_out", 0)}
        usage.setdefault("total", usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0))
        return AgentResult(answer=str(getattr(out, "answer", "") or ""), text=str(getattr(out, "text", "") or ""),
                           usage=usage, trajectory=list(getattr(out, "trajectory", []) or []),
                           error=getattr(out, "error", None))

    return runner


async def _direct(harness: Harness, messages: list[dict[str, str]], backend: Backend) -> AgentResult:
    control = harness.control
    request = Request(messages=tuple(messages), temperature=control.temperature, max_tokens=control.max_tokens)
    (completion,) = await backend.complete([request])
    usage = {"prompt_tokens": completion.usage.prompt_tokens, "completion_tokens": completion.usage.completion_tokens,
             "total": completion.usage.total}
    trajectory = [*messages, {"role": "assistant", "content": completion.text}]
    answer = extract_answer(harness, completion.text) if completion.ok else ""
    return AgentResult(answer=answer, text=completion.text, usage=usage, trajectory=trajectory,
                       error=completion.error)


def extract_answer(harness: Harness, text: str) -> str:
    """Apply the harness's answer-extraction rule (`control.answer`) to a model text."""
    rule = harness.control.answer
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if rule.mode == "first_line":
        return lines[0] if lines else ""
    if rule.mode == "last_line":
        return lines[-1] if lines else ""
    if rule.mode == "regex":
        match = re.search(rule.pattern or "", text)
        return "" if match is None else (match.group(1) if match.groups() else match.group(0)).strip()
    if rule.mode == "json_field":
        match = re.search(r"\{.*\}", text, re.S)
        try:
            value = json.loads(match.group(0)) if match else None
        except json.JSONDecodeError:
            value = None
        return str(value.get(rule.pattern, "")) if isinstance(value, dict) else ""
    return text.strip()


def _bundle_file(path: Path) -> Path | None:
    if path.is_file() and path.suffix == ".json":
        return path
    if path.is_dir() and not (path / "harness.yaml").is_file() and (path / "harness.json").is_file():
        return path / "harness.json"
    return None


def load_harness(path: str | Path) -> Agent:
    """An Agent for a harness folder, a JSON bundle, or an export folder holding `harness.json`."""
    path = Path(path).expanduser()
    bundle_path = _bundle_file(path)
    if bundle_path is None:
        return Agent(load_document(path), source=str(path))
    harness = load_document(bundle_path)
    try:
        data = json.loads(bundle_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise HarnessError(f"{bundle_path}: unreadable bundle ({exc})") from None
    recorded = data.get("version") if isinstance(data, dict) else None
    if recorded is not None and recorded != harness.version:
        raise HarnessError(f"{bundle_path}: field 'version' is {recorded} but the content hashes to "
                           f"{harness.version}; the bundle was modified after export")
    provenance = data.get("provenance", {}) if isinstance(data, dict) else {}
    return Agent(harness, source=str(bundle_path), provenance=provenance)
