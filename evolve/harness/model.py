"""The harness document: typed components around a frozen model.

A harness has seven component types: `system` (named prompt sections), `skill` (Agent Skills
`SKILL.md` documents), `example` (few-shot demonstrations), `control` (decoding and control flow,
with `control.flow` for agent loops), `tool` (callable tools), `memory` (notes the agent carries
across turns or tasks) and `context` (what is kept when the context fills). The version id is a
hash of the canonical JSON serialization; settings added later are left out of it while they hold
their defaults, so older harnesses keep their ids.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

COMPONENTS = ("system", "skill", "example", "control", "tool", "memory", "context")
ComponentType = Literal["system", "skill", "example", "control", "tool", "memory", "context"]
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}\Z")
MARKER_RE = re.compile(r"<!-- section: (\S+) -->")
"""A line of `system.md` that starts a section (matched with `fullmatch` on the stripped line)."""
MAX_TEXT = 20_000
"""Largest allowed text of one section, skill body, example field or tool description (characters)."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def check_name(value: str, what: str) -> str:
    """Validate a section/skill/tool name: lowercase letters, digits and dashes (no paths)."""
    if not isinstance(value, str) or not NAME_RE.fullmatch(value):
        raise ValueError(
            f"invalid {what} name {value!r}: use 1-64 lowercase letters, digits or dashes"
        )
    return value


def check_text(value: str, what: str) -> str:
    if len(value) > MAX_TEXT:
        raise ValueError(f"{what} is {len(value)} characters; the limit is {MAX_TEXT}")
    return value


def normalize_newlines(value: str) -> str:
    """Canonical line ends: CRLF and lone CR become LF (files are read with universal newlines)."""
    return value.replace("\r\n", "\n").replace("\r", "\n")


def is_marker(line: str) -> bool:
    """Whether `line` would be read as a section marker of `system.md`."""
    return MARKER_RE.fullmatch(line.strip()) is not None


class Section(_Strict):
    """One named section of the system prompt."""

    name: str
    """Section name (lowercase, digits, dashes)."""
    text: str
    """Section text (markdown)."""

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_name(v, "section")

    @field_validator("text")
    @classmethod
    def _text(cls, v: str) -> str:
        v = normalize_newlines(v).strip("\n")
        if any(is_marker(line) for line in v.split("\n")):
            raise ValueError("section text must not contain a '<!-- section: NAME -->' line")
        return check_text(v, "section text")


class Skill(_Strict):
    """An Agent Skills compatible skill (`skills/<name>/SKILL.md`)."""

    name: str
    """Skill name; also its folder name."""
    description: str
    """When the skill applies (front matter `description`)."""
    body: str
    """Instructions (markdown body of SKILL.md)."""

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_name(v, "skill")

    @field_validator("description")
    @classmethod
    def _desc(cls, v: str) -> str:
        v = " ".join(v.split())
        if not v:
            raise ValueError("skill description must not be empty")
        if len(v) > 1024:
            raise ValueError("skill description is longer than 1024 characters")
        return v

    @field_validator("body")
    @classmethod
    def _body(cls, v: str) -> str:
        return check_text(normalize_newlines(v).strip("\n"), "skill body")


class Example(_Strict):
    """A few-shot demonstration."""

    input: str
    """Task input as the policy sees it."""
    output: str
    """The answer to show (what the model should write)."""
    rationale: str | None = None
    """Optional reasoning shown before the answer."""

    @field_validator("input", "output", "rationale")
    @classmethod
    def _text(cls, v: str | None) -> str | None:
        return v if v is None else check_text(v, "example text")


class AnswerExtraction(_Strict):
    """How the final answer is extracted from the model's text."""

    mode: Literal["full", "first_line", "last_line", "regex", "json_field"] = "full"
    """`full` text, its first or last non-empty line, a `regex` group, or a field of a JSON object."""
    pattern: str | None = None
    """Regex for mode `regex` (group 1 if present) or the field name for `json_field`."""

    @model_validator(mode="after")
    def _pattern(self) -> AnswerExtraction:
        if self.mode in ("regex", "json_field") and not self.pattern:
            raise ValueError(f"answer mode {self.mode!r} needs a pattern")
        if self.mode == "regex":
            try:
                re.compile(self.pattern or "")
            except re.error as exc:
                raise ValueError(f"invalid answer regex: {exc}") from exc
        return self


class Flow(_Strict):
    """Control flow of a multi-turn agent (`control.flow`), as typed switches."""

    plan_then_act: bool = False
    """The first turn writes a short plan (no tool calls); the agent then carries it out."""
    verify_before_answer: bool = False
    """When the agent first answers, it is asked once to verify (e.g. run the tests) and answer again."""
    retry_on_tool_error: int = Field(0, ge=0, le=3)
    """Extra turns granted after failed tool calls (with a hint to fix the call), at most this many."""


class Choice(_Strict):
    """Answer by choosing one of fixed labels (`control.choice`) instead of generating text.

    Each label is scored as the start of the reply (its log-probability, under the case variants
    `label`, `Label` and `label` in lower case), and the most likely label is the answer: it can
    never fall outside the label set. With `calibration` inputs (unlabeled task inputs, best drawn
    label-balanced), each label's probability is first divided by its mean probability over those
    inputs under the same prompt: calibration against the bias toward one label that a prompt and
    its examples give the model (batch calibration on a fixed set). Needs a policy backend that
    scores choices; answers in one step (no tools or turns)."""

    labels: tuple[str, ...] = ()
    """The answers to choose from (empty: off, the model generates its answer)."""
    calibration: tuple[str, ...] = ()
    """Inputs whose mean label probabilities are the prior divided out (empty: uncalibrated)."""

    @field_validator("labels")
    @classmethod
    def _labels(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        labels = tuple(label.strip() for label in v)
        if len(labels) == 1 or len(labels) > 32:
            raise ValueError(f"choice.labels needs 2 to 32 labels, got {len(labels)}")
        if any(not label or len(label) > 100 for label in labels):
            raise ValueError("choice.labels: every label is 1 to 100 characters")
        if len({label.lower() for label in labels}) != len(labels):
            raise ValueError("choice.labels: labels must differ (ignoring case)")
        return labels

    @field_validator("calibration")
    @classmethod
    def _calibration(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if len(v) > 64 or any(not text.strip() or len(text) > 4000 for text in v):
            raise ValueError("choice.calibration: at most 64 inputs of 1 to 4000 characters")
        return tuple(check_text(text, "calibration input") for text in v)

    @model_validator(mode="after")
    def _calibrated_labels(self) -> Choice:
        if self.calibration and not self.labels:
            raise ValueError("choice.calibration needs choice.labels")
        return self


class Control(_Strict):
    """Decoding and control-flow settings."""

    temperature: float = Field(0.0, ge=0.0, le=2.0)
    """Sampling temperature of the policy."""
    max_tokens: int = Field(64, ge=1, le=8192)
    """Most tokens the policy may write per call."""
    samples: int = Field(1, ge=1, le=16)
    """Samples per task; >1 enables self-consistency voting."""
    vote: Literal["majority", "first"] = "majority"
    """How samples are combined."""
    max_turns: int = Field(1, ge=1, le=64)
    """Most policy turns (tool calls) per task."""
    examples_as: Literal["turns", "system"] = "turns"
    """Render few-shot examples as chat turns or inside the system prompt."""
    answer: AnswerExtraction = AnswerExtraction()
    """Answer extraction."""
    flow: Flow = Flow()
    """Agent control flow: plan-then-act, verify-before-answer, retry-on-tool-error."""
    skills_as: Literal["inline", "on_request"] = "inline"
    """Skills inlined in the system prompt, or listed by name and description with the body loaded
    when the agent calls `load-skill` (progressive disclosure)."""
    tool_protocol: Literal["auto", "native", "text"] = "auto"
    """How tools reach the model: native function calling where the backend supports it (`auto`,
    `native`), or the text-JSON protocol described in the system prompt (`text`)."""
    choice: Choice = Choice()
    """Answer by scoring fixed labels (optionally calibrated) instead of generating; see `Choice`."""

    @model_validator(mode="after")
    def _single_step_choice(self) -> Control:
        if self.choice.labels and self.max_turns > 1:
            raise ValueError("control.choice answers in one step: it needs max_turns 1")
        return self


CONTROL_FIELDS = tuple(f for f in Control.model_fields if f not in ("answer", "flow", "choice")) + (
    "answer.mode", "answer.pattern", *(f"flow.{f}" for f in Flow.model_fields),
    "choice", *(f"choice.{f}" for f in Choice.model_fields))


class Memory(_Strict):
    """Notes the agent keeps (component `memory`): written with the `note` tool, shown in later turns."""

    scope: Literal["off", "turns", "batch"] = "off"
    """`off`; `turns`: notes carried across the turns of one task; `batch`: shared by the tasks of one
    rollout batch (a note written by one task is seen by the others from their next turn)."""
    update: Literal["append", "replace"] = "append"
    """`append` keeps the latest `max_notes` notes; `replace`: a new note replaces the old ones."""
    max_notes: int = Field(5, ge=1, le=50)
    """Most notes kept."""
    max_chars: int = Field(300, ge=20, le=2000)
    """Longest note kept (longer ones are cut)."""


class Context(_Strict):
    """What is kept when the conversation outgrows its budget (component `context`)."""

    strategy: Literal["keep", "truncate", "summarize"] = "keep"
    """`keep` everything; `truncate` old tool observations to a marker; `summarize` them to their first
    and last lines."""
    budget_tokens: int = Field(6000, ge=256, le=1_000_000)
    """Estimated tokens (characters / 4) above which old observations are shortened."""
    keep_last: int = Field(2, ge=0, le=64)
    """Most recent observations always kept whole."""


MEMORY_FIELDS = tuple(Memory.model_fields)
CONTEXT_FIELDS = tuple(Context.model_fields)
LATER_CONTROL = ("flow", "skills_as", "tool_protocol", "choice")
"""Control settings added after the format was first fixed: left out of files and the version id
while at their defaults."""


def control_data(control: Control) -> dict[str, Any]:
    """The control settings as stored: later settings only when they differ from their defaults."""
    data = control.model_dump(mode="json")
    defaults = Control().model_dump(mode="json")
    for key in LATER_CONTROL:
        if data[key] == defaults[key]:
            del data[key]
    return data


class Tool(_Strict):
    """A tool the policy may call with a JSON object `{"tool": name, "arguments": {...}}`."""

    name: str
    """Tool name."""
    description: str
    """What the tool does."""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    """JSON schema of the arguments."""
    implementation: str
    """Reference `builtin:<name>` or `python:<module>:<function>`."""

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return check_name(v, "tool")

    @field_validator("description")
    @classmethod
    def _desc(cls, v: str) -> str:
        return check_text(v, "tool description")

    @field_validator("implementation")
    @classmethod
    def _impl(cls, v: str) -> str:
        if not re.match(r"^(builtin:[a-z_][a-z0-9_]*|python:[\w.]+:\w+)\Z", v):
            raise ValueError(f"tool implementation {v!r} must be builtin:<name> or python:<module>:<function>")
        return v


class Harness(_Strict):
    """A complete harness. Immutable: edits return new harnesses."""

    name: str = "harness"
    """Human label (not part of the version id)."""
    description: str = ""
    """What this harness is for (not part of the version id)."""
    system: tuple[Section, ...] = ()
    """System prompt sections, in order."""
    skills: tuple[Skill, ...] = ()
    """Skills, kept sorted by name (their order carries no meaning)."""
    examples: tuple[Example, ...] = ()
    """Few-shot examples, in order."""
    control: Control = Control()
    """Decoding and control settings."""
    tools: tuple[Tool, ...] = ()
    """Tools, in order."""
    memory: Memory = Memory()
    """Agent notes across turns or tasks."""
    context: Context = Context()
    """Context management."""
    _system_prompt: dict[Any, tuple[int, str]] = PrivateAttr(default_factory=dict)
    """Rendered system prompts per variant: {variant: (id of the harness it was rendered for, text)}."""

    def __copy__(self) -> Harness:
        """A shallow copy (what `model_copy` makes) with its own, empty render cache: a shared cache
        would serve one copy's rendering to another copy that later reuses its memory address."""
        copied = super().__copy__()
        copied._system_prompt = {}
        return copied

    def __eq__(self, other: object) -> bool:
        """Equal when every field is equal; the private render cache takes no part."""
        if not isinstance(other, Harness):
            return NotImplemented
        return self.__dict__ == other.__dict__

    @field_validator("skills")
    @classmethod
    def _sorted_skills(cls, v: tuple[Skill, ...]) -> tuple[Skill, ...]:
        return tuple(sorted(v, key=lambda s: s.name))

    @model_validator(mode="after")
    def _unique(self) -> Harness:
        for what, items in (("section", self.system), ("skill", self.skills), ("tool", self.tools)):
            names = [i.name for i in items]
            dupes = sorted({n for n in names if names.count(n) > 1})
            if dupes:
                raise ValueError(f"duplicate {what} name(s): {', '.join(dupes)}")
        return self

    @model_validator(mode="after")
    def _choice_without_tools(self) -> Harness:
        if self.control.choice.labels and self.tools:
            raise ValueError("control.choice answers in one step: it cannot be combined with tools")
        return self

    def content(self) -> dict[str, Any]:
        """The versioned content (everything except name and description; later settings only when set)."""
        data = self.model_dump(mode="json", exclude={"name", "description", "memory", "context"})
        data["skills"] = sorted(data["skills"], key=lambda s: s["name"])
        data["control"] = control_data(self.control)
        for key in ("memory", "context"):
            value = getattr(self, key)
            if value != type(value)():
                data[key] = value.model_dump(mode="json")
        return data

    @property
    def agentic(self) -> bool:
        """Whether the harness runs a multi-turn loop (more than one turn, or tools)."""
        return self.control.max_turns > 1 or bool(self.tools)

    @property
    def version(self) -> str:
        """Content hash: sha256 of the canonical JSON of `content()` (first 16 hex digits)."""
        return content_hash(self.content())

    def section(self, name: str) -> Section | None:
        return next((s for s in self.system if s.name == name), None)

    def skill(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)

    def tool(self, name: str) -> Tool | None:
        return next((t for t in self.tools if t.name == name), None)

    def text_size(self) -> int:
        """Characters of prompt material (a proxy for policy tokens before any rollout)."""
        return (
            sum(len(s.text) for s in self.system)
            + sum(len(s.body) + len(s.description) for s in self.skills)
            + sum(len(e.input) + len(e.output) + len(e.rationale or "") for e in self.examples)
        )


def canonical_json(data: Any) -> str:
    """Canonical JSON: sorted keys, no whitespace, UTF-8."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(data: Any) -> str:
    return hashlib.sha256(canonical_json(data).encode("utf-8")).hexdigest()[:16]
