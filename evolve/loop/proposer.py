"""The proposer: drafts of at most b_t typed edits, conditioned on the round's context.

`Proposer` is the extension point; `LLMProposer` renders `proposers/propose.md.j2`, asks the model
for JSON (schema-constrained where the backend can), parses robustly, validates the edits against
the incumbent, and feeds errors back in a bounded repair loop. Render, call and parse are separate
functions.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from evolve.backends.base import Backend, Request
from evolve.bench.tools import BUILTIN_TOOLS
from evolve.errors import EditError
from evolve.harness import COMPONENTS, Edit, Harness, apply_edits, canonical_json, parse_edits
from evolve.harness.edits import VALID_OPS
from evolve.harness.model import CONTEXT_FIELDS, CONTROL_FIELDS, LATER_CONTROL, MEMORY_FIELDS, control_data
from evolve.loop.novelty import Directive
from evolve.loop.prompts import extract_json, render_prompt

SINGLE_TURN_FIELDS = tuple(f for f in CONTROL_FIELDS if f.split(".")[0] not in LATER_CONTROL or
                           f.startswith("choice."))
"""Control fields shown for a single-turn harness (the agent settings only matter with turns or tools)."""

_TEXT = {"type": "string"}


REASON_FIELDS = ("target_failure_cluster", "expected_effect", "specificity_risk")
"""Optional reasoning fields of an edit beside its hypothesis (stored in the candidate's meta)."""
TOOL_IMPLEMENTATIONS = tuple(f"builtin:{name}" for name in BUILTIN_TOOLS if name != "bash")
"""The tool implementations a proposer may choose from (it never names code)."""


def _tool_value() -> dict[str, Any]:
    return {"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 64}, "description": _TEXT,
        "parameters": {"type": "object"}, "implementation": {"type": "string", "enum": list(TOOL_IMPLEMENTATIONS)}},
        "required": ["name", "description", "implementation"]}


@cache
def edits_schema(budget: int = 3, tools: bool = False) -> dict[str, Any]:
    """JSON schema of a proposer reply with at most `budget` edits (one schema per budget, so a
    backend builds each grammar once). Short fields have a length bound so a weak model cannot ramble
    there; long text is bounded by max_tokens (a long maxLength makes llama.cpp grammars crash).
    The reasoning fields are optional; with `tools` a value may also be a tool object whose
    `parameters` is a JSON schema and whose implementation is one of the allow-listed ones."""
    values: list[dict[str, Any]] = [_TEXT, {"type": "number"}, {"type": "boolean"}, {"type": "null"},
                                    {"type": "object", "additionalProperties": _TEXT}]
    if tools:
        values.append(_tool_value())
    return {
        "type": "object",
        "properties": {
            "edits": {
                "type": "array",
                "minItems": 1,
                "maxItems": max(1, budget),
                "items": {
                    "type": "object",
                    "properties": {
                        "op": {"type": "string", "enum": ["add", "replace", "remove", "set"]},
                        "component": {"type": "string", "enum": list(COMPONENTS)},
                        "target": {"type": "string", "maxLength": 64},
                        "value": {"anyOf": values},
                        "hypothesis": {"type": "string", "maxLength": 200},
                        **{name: {"type": "string", "maxLength": 200} for name in REASON_FIELDS},
                    },
                    "required": ["op", "component", "target", "value", "hypothesis"],
                },
            },
        },
        "required": ["edits"],
    }


EDITS_SCHEMA = edits_schema(3)
"""The reply schema for the default budget."""

_EDIT_FIELDS = ("op", "component", "target", "value", "hypothesis")
_ALIASES = {"skills": "skill", "examples": "example", "tools": "tool", "prompt": "system", "section": "system",
            "sections": "system", "controls": "control"}


class EditReasoning(BaseModel):
    """Why one proposed edit should help, beyond its hypothesis (all optional)."""

    model_config = ConfigDict(extra="forbid")

    target_failure_cluster: str = ""
    """Which failures of the evidence the edit addresses."""
    expected_effect: str = ""
    """What should change in the scores or answers."""
    specificity_risk: str = ""
    """How benchmark-specific the edit might be."""

    def shown(self) -> bool:
        return any((self.target_failure_cluster, self.expected_effect, self.specificity_risk))


class Draft(BaseModel):
    """One proposal: the edits (empty when the reply stayed invalid) and the exchange that produced it."""

    model_config = ConfigDict(extra="forbid")

    edits: list[Edit] = Field(default_factory=list)
    origin: str
    """`llm`, or the name of the programmatic operator."""
    messages: list[dict[str, str]] = Field(default_factory=list)
    """The rendered proposer context (kept for training the proposer later)."""
    reply: str = ""
    """The model's last reply (empty for operators)."""
    error: str | None = None
    """Why the draft has no edits (invalid after repairs, backend failure)."""
    repairs: int = 0
    """Repair rounds used."""
    reasoning: list[EditReasoning] = Field(default_factory=list)
    """Per edit, the reasoning fields the model gave (empty when it gave none)."""


class ProposerContext(BaseModel):
    """What a proposer sees in one round."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    incumbent: Harness
    evidence: str = ""
    """The analyst's rendered evidence package."""
    history: list[Any] = Field(default_factory=list)
    """Earlier edits with verdicts: objects with round, component, op, target, hypothesis, verdict, delta."""
    memory: str = ""
    """Rendered optimization memory."""
    directive: Directive | None = None
    """Exploration directive (RESERVED slots for untried components when stalled)."""
    prune: list[Any] = Field(default_factory=list)
    """Prune set entries (PruneEntry: component, edits, describe())."""
    budget: int = Field(1, ge=1)
    """b_t: the most edits a draft may bundle."""
    description: str = ""
    """What the benchmark asks for."""
    labels: tuple[str, ...] = ()
    """Valid answers for label tasks."""
    banned: list[list[str]] = Field(default_factory=list)
    """Rejected directions: each the novelty keys of one rejected candidate's edits, banned only as a
    whole (a draft repeats one when it contains every key)."""
    history_shown: int = 30
    """Most recent history entries rendered (older ones are counted)."""
    widen: int = 0
    """Rounds in a row that accepted nothing (the round's operator drafts and oracle slots grow with it)."""
    tried_since: int = 0
    """Earliest round whose tried edits operators still avoid (older ones may be retried)."""


@runtime_checkable
class Proposer(Protocol):
    """Makes drafts for one round.

    Contract: `propose(ctx, n, rng)` returns at most `n` drafts (operators may return fewer when
    nothing applicable is left), each with at most `ctx.budget` edits that apply to `ctx.incumbent`
    and change it, or with `error` set and no edits. It never raises for a bad model reply (that is
    a draft with an error); it raises only for systemic failures (missing template, backend that
    cannot start). All randomness comes from `rng`; `ctx` is not modified.
    """

    async def propose(self, ctx: ProposerContext, n: int, rng: random.Random) -> list[Draft]:
        """Draft up to `n` candidates."""
        ...


def _slug(name: str) -> str:
    """A model's section/skill/tool name in the allowed form ("Answer Format" -> "answer-format")."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.strip().lower()).strip("-")
    return slug[:64] or name


def _normalize_item(item: Any) -> Any:
    if not isinstance(item, dict):
        return item
    out = {k: item[k] for k in _EDIT_FIELDS if k in item}
    component = str(out.get("component", "")).strip().lower()
    out["component"] = _ALIASES.get(component, component)
    target = out.get("target")
    if isinstance(target, int | float) and not isinstance(target, bool):
        out["target"] = str(int(target))
    elif isinstance(target, str) and not target.strip():
        out["target"] = None
    elif isinstance(target, str) and out["component"] in ("system", "skill", "tool"):
        out["target"] = _slug(target)
    if out.get("hypothesis") is None:
        out["hypothesis"] = ""
    out["hypothesis"] = str(out["hypothesis"])[:2000]
    return out


def _raw_items(text: str) -> list[Any]:
    raw = extract_json(text)
    if isinstance(raw, dict) and "edits" not in raw and "op" in raw:
        raw = [raw]
    if isinstance(raw, dict) and "edits" in raw:
        raw = raw["edits"]
    if not isinstance(raw, list):
        raise EditError('expected {"edits": [...]}')
    return raw


def reply_reasoning(text: str, n: int) -> list[EditReasoning]:
    """The reasoning fields of the first `n` edits of a valid reply (empty when none has any)."""
    found = []
    for item in _raw_items(text)[:n]:
        item = item if isinstance(item, dict) else {}
        found.append(EditReasoning(**{k: " ".join(str(item.get(k) or "").split())[:300] for k in REASON_FIELDS}))
    return found if any(r.shown() for r in found) else []


def _check_tools(edits: list[Edit]) -> None:
    """A tool's parameters must be a JSON schema object. Which implementations a run admits is the
    tool critic's check (it knows the run's registry); the schema offers only the allow-listed ones."""
    for position, e in enumerate(edits, start=1):
        params = e.value.get("parameters") if e.component == "tool" and isinstance(e.value, dict) else None
        if params is not None and not isinstance(params, dict):
            raise EditError(f"edit {position}: a tool's parameters must be a JSON schema object")


def validate_reply(text: str, incumbent: Harness, budget: int, origin: str = "llm",
                   required: tuple[str, ...] = ()) -> list[Edit]:
    """Parse a reply into at most `budget` edits that apply to `incumbent` and change it (and, when
    `required` is given, touch at least one of those components: a RESERVED slot).

    Raises EditError (or ValueError for missing JSON) with the reason, worded for the model.
    """
    raw = _raw_items(text)
    edits = parse_edits([_normalize_item(i) for i in raw], "edits")
    edits = [e.model_copy(update={"origin": origin}) for e in edits][:budget]
    if not edits:
        raise EditError("the reply contains no edits")
    if required and not any(e.component in required for e in edits):
        raise EditError(f"this slot is RESERVED: at least one edit must change one of: {', '.join(required)}")
    _check_tools(edits)
    candidate = apply_edits(incumbent, edits)
    if candidate.version == incumbent.version:
        raise EditError("the edits do not change the harness")
    return edits


def _history_lines(ctx: ProposerContext) -> tuple[list[str], int]:
    items = list(ctx.history)[-ctx.history_shown:] if ctx.history_shown else []
    lines = []
    for h in items:
        target = f" {h.target}" if getattr(h, "target", None) not in (None, "") else ""
        delta = f", ΔS {h.delta:+.3f}" if getattr(h, "delta", None) is not None else ""
        hyp = f" — {h.hypothesis}" if getattr(h, "hypothesis", "") else ""
        lines.append(f"round {h.round}: {h.op} {h.component}{target}{hyp} → {h.verdict}{delta}")
    return lines, len(ctx.history) - len(items)


def _harness_view(h: Harness) -> dict[str, Any]:
    return {
        "sections": [{"name": s.name, "text": s.text} for s in h.system],
        "skills": [{"name": s.name, "description": s.description, "body": s.body} for s in h.skills],
        "examples": [{"index": i, "input": e.input, "output": e.output} for i, e in enumerate(h.examples)],
        "control": canonical_json(control_data(h.control)),
        "tools": [{"name": t.name, "description": t.description} for t in h.tools],
        "agentic": h.agentic,
        "memory": canonical_json(h.memory.model_dump(mode="json")),
        "context": canonical_json(h.context.model_dump(mode="json")),
    }


def _render(ctx: ProposerContext, slot: int, folder: str | Path | None) -> list[dict[str, str]]:
    history, older = _history_lines(ctx)
    directive = ctx.directive or Directive()
    variables = {
        "ctx": ctx, "harness": _harness_view(ctx.incumbent), "history": history, "older": older,
        "directive": directive, "reserved": slot < directive.reserved_slots,
        "prune": [p.describe() if hasattr(p, "describe") else str(p) for p in ctx.prune],
        "ops": VALID_OPS, "labels": list(ctx.labels),
        "control_fields": CONTROL_FIELDS if ctx.incumbent.agentic else SINGLE_TURN_FIELDS,
        "memory_fields": MEMORY_FIELDS, "context_fields": CONTEXT_FIELDS,
        "implementations": list(TOOL_IMPLEMENTATIONS), "reason_fields": REASON_FIELDS,
    }
    return [{"role": "system", "content": render_prompt("propose_system.md.j2", folder, **variables).strip()},
            {"role": "user", "content": render_prompt("propose.md.j2", folder, **variables).strip()}]


def _size(messages: list[dict[str, str]]) -> int:
    return sum(len(m["content"]) for m in messages)


def render_messages(ctx: ProposerContext, slot: int, folder: str | Path | None = None,
                    max_chars: int | None = None) -> list[dict[str, str]]:
    """The chat messages of proposer slot `slot` (slots below the directive's reserved count are RESERVED).

    With `max_chars`, the optional parts shrink until the messages fit (or cannot shrink further):
    first the history (most recent entries kept), then the memory, then the evidence. The harness,
    the budget and the rules are never cut.
    """
    messages = _render(ctx, slot, folder)
    for step in ("history", "history", "history", "memory", "evidence"):
        excess = _size(messages) - max_chars if max_chars is not None else 0
        if excess <= 0:
            break
        if step == "history":
            ctx = ctx.model_copy(update={"history_shown": max(3, ctx.history_shown // 2)})
        else:
            text = getattr(ctx, step)
            ctx = ctx.model_copy(update={step: _shorten(text, max(200, len(text) - excess))})
        messages = _render(ctx, slot, folder)
    return messages


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass
class _Exchange:
    messages: list[dict[str, str]]
    seed: int
    required: tuple[str, ...] = ()
    turns: list[dict[str, str]] = field(default_factory=list)
    reply: str = ""
    error: str | None = None
    edits: list[Edit] | None = None
    repairs: int = 0
    tools: bool = False


class LLMProposer:
    """Proposer backed by a language model (see module docstring)."""

    def __init__(self, backend: Backend, template_dir: str | Path | None = None, max_repairs: int = 2,
                 temperature: float = 0.7, max_tokens: int = 512, max_context_chars: int | None = None) -> None:
        self.backend = backend
        self.max_context_chars = max_context_chars
        self.template_dir = template_dir
        self.max_repairs = max_repairs
        self.temperature = temperature
        self.max_tokens = max_tokens

    def _request(self, x: _Exchange, budget: int) -> Request:
        return Request(messages=tuple(x.messages + x.turns), role="proposer", temperature=self.temperature,
                       max_tokens=self.max_tokens, seed=x.seed, json_schema=edits_schema(budget, x.tools))

    def _repair_turns(self, x: _Exchange) -> list[dict[str, str]]:
        text = render_prompt("repair.md.j2", self.template_dir, error=x.error, expected='{"edits": [...]}')
        return [{"role": "assistant", "content": x.reply}, {"role": "user", "content": text.strip()}]

    async def propose(self, ctx: ProposerContext, n: int, rng: random.Random) -> list[Draft]:
        """Draft `n` candidates, in one batched call per repair round."""
        directive = ctx.directive or Directive()
        exchanges = [_Exchange(render_messages(ctx, slot, self.template_dir, self.max_context_chars),
                               rng.randrange(2**31),
                               tuple(directive.untried) if slot < directive.reserved_slots else (),
                               tools=ctx.incumbent.agentic)
                     for slot in range(n)]
        for attempt in range(self.max_repairs + 1):
            pending = [x for x in exchanges if x.edits is None and (attempt == 0 or x.error is not None)]
            if not pending:
                break
            if attempt:
                for x in pending:
                    x.turns += self._repair_turns(x)
                    x.repairs += 1
            completions = await self.backend.complete([self._request(x, ctx.budget) for x in pending])
            for x, completion in zip(pending, completions, strict=True):
                x.reply = completion.text
                if not completion.ok:
                    x.error = f"proposer call failed: {completion.error}"
                    x.edits = []  # a backend failure is not repaired
                    continue
                try:
                    x.edits, x.error = validate_reply(completion.text, ctx.incumbent, ctx.budget,
                                                         required=x.required), None
                except (EditError, ValueError) as exc:
                    x.error = str(exc)
        return [self._draft(x) for x in exchanges]

    async def repair(self, draft: Draft, reason: str, incumbent: Harness, budget: int,
                     seed: int) -> tuple[Draft, int]:
        """One revision of a critic-rejected draft (`proposers/critic_repair.md.j2` with the critic's
        reason), validated like a first reply but not repaired again. Returns the revised draft (with
        `error` and no edits when the reply is unusable) and the tokens the call used."""
        text = render_prompt("critic_repair.md.j2", self.template_dir, reason=reason, budget=budget).strip()
        messages = [*draft.messages, {"role": "assistant", "content": draft.reply}, {"role": "user", "content": text}]
        x = _Exchange(messages, seed, tools=incumbent.agentic)
        [completion] = await self.backend.complete([self._request(x, budget)])
        edits, error = [], None
        if not completion.ok:
            error = f"proposer call failed: {completion.error}"
        else:
            try:
                edits = validate_reply(completion.text, incumbent, budget)
            except (EditError, ValueError) as exc:
                error = f"invalid repair: {exc}"
        reasoning = reply_reasoning(completion.text, len(edits)) if edits else []
        return (Draft(edits=edits, origin="llm", messages=messages, reply=completion.text, error=error,
                      reasoning=reasoning), completion.usage.total)

    @staticmethod
    def _draft(x: _Exchange) -> Draft:
        error = None
        if not x.edits:
            error = x.error or "no edits"
            if x.edits is None:
                error = f"invalid reply after {x.repairs} repair(s): {error}"
        reasoning = reply_reasoning(x.reply, len(x.edits)) if x.edits else []
        return Draft(edits=x.edits or [], origin="llm", messages=x.messages, reply=x.reply, error=error,
                     repairs=x.repairs, reasoning=reasoning)
