"""The `judge` verifier: an LLM grades open-ended answers against a rubric (prompt: templates/judge.md.j2)."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evolve.backends.base import Request
from evolve.bench.task import Task
from evolve.bench.verifiers import VerifierResult
from evolve.errors import BenchmarkError
from evolve.templating import render

TEMPLATES = Path(__file__).resolve().parent / "templates"
_SCORE_RE = re.compile(r'"?score"?\s*[:=]\s*(\d+(?:\.\d+)?)', re.IGNORECASE)


class JudgeOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    rubric: str = "The answer is correct, complete and consistent with the reference answer."
    """What a good answer does."""
    max_score: int = Field(10, ge=1, le=100)
    """Top of the judge's integer scale; reward = score / max_score."""
    max_tokens: int = Field(96, ge=8, le=2048)
    """Most tokens of the judge's reply."""


def parse_judge_reply(text: str, max_score: int) -> float | None:
    """The judge's score in [0, 1] from its reply (JSON object, else `score: N`), or None."""
    match = re.search(r"\{.*\}", text or "", re.DOTALL)
    value: Any = None
    if match:
        try:
            value = json.loads(match.group(0)).get("score")
        except (json.JSONDecodeError, AttributeError):
            value = None
    if value is None:
        found = _SCORE_RE.search(text or "")
        value = found.group(1) if found else None
    try:
        score = float(value)
    except (TypeError, ValueError):
        return None
    return min(max(score / max_score, 0.0), 1.0)


class RubricJudge:
    """Reward = judge score / max_score. Needs a backend (`make_verifier(spec, backend=...)` or `.backend = ...`)."""

    name = "judge"

    def __init__(self, options: JudgeOptions | None = None, *, backend: Any = None) -> None:
        self.options = options or JudgeOptions()
        self.backend = backend

    def request(self, task: Task, prediction: str) -> Request:
        prompt = render("judge.md.j2", TEMPLATES, task_input=task.input, reference=task.target,
                        rubric=self.options.rubric, prediction=prediction, max_score=self.options.max_score)
        return Request(messages=({"role": "system", "content": ""}, {"role": "user", "content": prompt}),
                       role="judge", temperature=0.0, max_tokens=self.options.max_tokens)

    async def ascore(self, task: Task, prediction: str) -> VerifierResult:
        if not (prediction or "").strip():
            return VerifierResult(0.0, False, None, "empty answer")
        if self.backend is None:
            raise BenchmarkError("verifier 'judge' needs a backend; pass backend= to make_verifier")
        [completion] = await self.backend.complete([self.request(task, prediction)])
        if completion.error:
            return VerifierResult(0.0, True, None, f"judge failed: {completion.error}")
        reward = parse_judge_reply(completion.text, self.options.max_score)
        if reward is None:
            return VerifierResult(0.0, True, None, f"judge reply unparseable: {completion.text[:120]!r}")
        return VerifierResult(reward, True, " ".join(prediction.split())[:200], f"judge score {reward:.2f}")

    def score(self, task: Task, prediction: str) -> VerifierResult:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.ascore(task, prediction))
        box: list[VerifierResult | BaseException] = []

        def work() -> None:
            try:
                box.append(asyncio.run(self.ascore(task, prediction)))
            except BaseException as exc:  # handed back to the calling thread
                box.append(exc)

        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
        if isinstance(box[0], BaseException):
            raise box[0]
        return box[0]
