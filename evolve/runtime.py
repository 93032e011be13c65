"""The runtime API for production agents: load an evolved harness, render it, run it.

    from evolve import load_harness
    agent = load_harness("export/harness.json")        # a bundle, an export folder or a harness folder
    agent.messages("Is the sky green?")               # chat messages for any client
    agent.run("Is the sky green?", model="openai/gpt-4.1-mini").answer
    done = agent.run("Fix the failing test.", workspace="my-repo", model="hosted_vllm/...", api_base=...)
    done.workspace                                     # the agent's final copy of my-repo (my-repo is untouched)

`load_harness` accepts a harness folder (`harness.yaml` ...; also what `evolve export --format skills`
writes), a JSON bundle (`evolve export --format json`) or a folder that holds one (`--format
json|python`). A bundle's recorded version must match the content hash of what it holds, so an
edited or corrupted bundle is refused. `load_prompt` reads a `--format prompt` export: rendered text
and messages, not a harness to run.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evolve.errors import HarnessError
from evolve.harness import Harness, render_messages
from evolve.harness import load_harness as load_document
from evolve.harness.io import bundle_file

if TYPE_CHECKING:
    from evolve.backends.base import Backend


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
    """Messages from the task input on (assistant turns, tool results, the vote), in order."""
    error: str | None = None
    """Set when the model call failed; `answer` and `text` are then empty."""
    reward: float | None = None
    """The verifier's reward when `run` was given a verifier, else None."""
    workspace: Path | None = None
    """With `run(..., workspace=DIR)`: the agent's final copy of DIR (DIR itself is never changed). The
    caller owns it: copy files back, then remove it."""
    changes: str = ""
    """With a workspace: unified diffs of the files the agent changed, added or removed."""


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

    def run(self, task: Any, model: str | Backend = "embedded", api_base: str | None = None, *,
            verifier: Any = None, seed: int = 0, workspace: str | Path | None = None,
            tools: Any = None) -> AgentResult:
        """Run `task` against `model` (a model string such as `embedded`, `openai/...`,
        `hosted_vllm/...` with `api_base`, or a Backend object) and return the result.

        The same multi-turn loop as evaluation: the harness's control settings apply (samples and
        vote, tool turns, flow, memory, context, answer extraction), tools run in the sandbox. With
        `workspace=DIR` the agent works on a fresh copy of DIR (returned as `result.workspace`).
        `tools` is an `evolve.bench.tools.ToolRegistry` admitting user tools (default: built-ins and
        `register_tool` registrations). With a `verifier` (see `evolve.bench.verifiers`) and a task
        that has a `target`, the result carries its `reward`.
        """
        return asyncio.run(self.arun(task, model=model, api_base=api_base, verifier=verifier, seed=seed,
                                     workspace=workspace, tools=tools))

    async def arun(self, task: Any, model: str | Backend = "embedded", api_base: str | None = None, *,
                   verifier: Any = None, seed: int = 0, workspace: str | Path | None = None,
                   tools: Any = None) -> AgentResult:
        """Async `run` (for callers that already have an event loop)."""
        from evolve.bench.environment import KeptWorkspaceEnvironment, PlainEnvironment
        from evolve.bench.runtime import run_task
        from evolve.bench.task import Task

        backend = _backend(model, api_base)
        if isinstance(task, Task):
            item = task
        else:
            item = Task(id="task", input=_task_input(task), target=str(getattr(task, "target", "") or ""))
        env = PlainEnvironment(tools)
        if workspace is not None:
            source = Path(workspace).expanduser()
            if not source.is_dir():
                raise HarnessError(f"workspace {source}: not a folder")
            item = item.model_copy(update={"meta": {**item.meta, "workspace": str(source.resolve())}})
            env = KeptWorkspaceEnvironment(tools)
        scorer = verifier if verifier is not None else _Unscored()
        out = await run_task(self.harness, item, backend, scorer, seed=seed, environment=env)
        text = next((m.get("content") or "" for m in reversed(out.trajectory) if m.get("role") == "assistant"), "")
        usage = {"prompt_tokens": out.tokens_in, "completion_tokens": out.tokens_out, "total": out.tokens}
        changes = next((m.get("content") or "" for m in out.trajectory if m.get("role") == "workspace"), "")
        return AgentResult(answer=out.prediction or "", text=text, usage=usage, trajectory=list(out.trajectory),
                           error=out.error, reward=out.reward if verifier is not None else None,
                           workspace=getattr(env, "kept", None), changes=changes)


class _Unscored:
    """A verifier for production tasks without a target: scores nothing, normalizes answers for the vote."""

    name = "unscored"

    def score(self, task: Any, prediction: str) -> Any:
        from evolve.bench.verifiers import VerifierResult

        normalized = " ".join(prediction.lower().split()) or None
        return VerifierResult(0.0, normalized is not None, normalized, "no target: not scored")


def _backend(model: str | Backend, api_base: str | None) -> Backend:
    if not isinstance(model, str):
        return model
    from evolve.backends import get_backend

    return get_backend(model, api_base=api_base)


def load_harness(path: str | Path) -> Agent:
    """An Agent for a harness folder, a JSON bundle, or an export folder holding `harness.json`."""
    path = Path(path).expanduser()
    bundle_path = bundle_file(path)
    if bundle_path is None:
        if _is_prompt_export(path):
            raise HarnessError(f"{path}: a prompt export (rendered text): read it with evolve.load_prompt, or "
                               "export --format json or skills for a harness to run")
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


def _is_prompt_export(path: Path) -> bool:
    return path.is_dir() and (path / "prompt.md").is_file() and not (path / "system.md").is_file()


@dataclass(frozen=True)
class PromptExport:
    """A `--format prompt` export read back: the messages before the task, and the settings beside them."""

    prefix: list[dict[str, str]]
    """The system message and the few-shot turns, in order."""
    control: Any
    """The control settings (`evolve.harness.Control`) from `harness.yaml`."""
    tools: tuple[Any, ...] = ()
    """The tools (`evolve.harness.Tool`) from `harness.yaml`; described in the prompt text."""

    def messages(self, task: Any) -> list[dict[str, str]]:
        """Chat messages for `task`: the prefix, then the task input as the last user message."""
        return [*(dict(m) for m in self.prefix), {"role": "user", "content": _task_input(task)}]


def load_prompt(path: str | Path) -> PromptExport:
    """Read a prompt export folder: `prompt.md`, `messages.json` (few-shot turns) and `harness.yaml`."""
    folder = Path(path).expanduser()
    if not _is_prompt_export(folder):
        raise HarnessError(f"{folder}: not a prompt export (expected a folder with prompt.md)")
    settings = load_document(folder) if (folder / "harness.yaml").is_file() else Harness()  # settings, no text
    turns_file = folder / "messages.json"
    if turns_file.is_file():
        try:
            data = json.loads(turns_file.read_text(encoding="utf-8"))
            prefix = [{"role": str(m["role"]), "content": str(m["content"])} for m in data["messages"]]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise HarnessError(f"{turns_file}: not a messages file ({exc})") from None
    else:
        text = (folder / "prompt.md").read_text(encoding="utf-8")
        prefix = [{"role": "system", "content": text[:-1] if text.endswith("\n") else text}]
    return PromptExport(prefix=prefix, control=settings.control, tools=settings.tools)
