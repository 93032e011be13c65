"""Typed edits on one harness component, applied purely.

An edit is `add | replace | remove | set` on one component:

| component | add | replace | remove | set |
|---|---|---|---|---|
| system  | target=new section name, value=text | target=section, value=text | target=section | - |
| skill   | target=name, value={description, body} | target=name, value={description?, body?} | target=name | - |
| example | value={input, output, rationale?}, target=index? | target=index, value={...} | target=index | value=[...] |
| control | - | - | - | target=field (e.g. `samples`, `answer.mode`, `flow.verify_before_answer`), value |
| tool    | value={name, description, parameters, implementation} | target=name, value={...} | target=name | - |
| memory  | - | - | - | target=field (`scope`, `update`, `max_notes`, `max_chars`), value |
| context | - | - | - | target=field (`strategy`, `budget_tokens`, `keep_last`), value |

`set` on examples replaces the whole demonstration set (value: a list of examples; optional target:
its size). `apply_edits` validates every edit and raises EditError with the offending edit's position; the
input harness is never modified.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evolve.errors import EditError, describe_validation, one_line
from evolve.harness.model import (
    CONTEXT_FIELDS,
    CONTROL_FIELDS,
    MEMORY_FIELDS,
    ComponentType,
    Context,
    Control,
    Example,
    Harness,
    Memory,
    Section,
    Skill,
    Tool,
    canonical_json,
)

Op = Literal["add", "replace", "remove", "set"]
VALID_OPS: dict[str, tuple[str, ...]] = {
    "system": ("add", "replace", "remove"),
    "skill": ("add", "replace", "remove"),
    "example": ("add", "replace", "remove", "set"),
    "control": ("set",),
    "tool": ("add", "replace", "remove"),
    "memory": ("set",),
    "context": ("set",),
}


class Edit(BaseModel):
    """One typed edit with the hypothesis of why it should help."""

    model_config = ConfigDict(extra="forbid", frozen=True, coerce_numbers_to_str=True)

    op: Op
    """Operation."""
    component: ComponentType
    """Component type the edit changes."""
    target: str | None = None
    """Section/skill/tool name, example index (a number is accepted), or control field."""
    value: Any = None
    """New content (see the module table)."""
    hypothesis: str = Field("", max_length=2000)
    """Why this edit should help (kept in the lineage)."""
    origin: str = "llm"
    """Who made it: `llm`, or the name of a programmatic operator."""

    def key(self) -> str:
        """Canonical text of what the edit does (for duplicate detection)."""
        return canonical_json([self.op, self.component, self.target, self.value])

    def summary(self) -> str:
        """Short human-readable description."""
        target = f" {self.target}" if self.target is not None else ""
        return f"{self.op} {self.component}{target}"

    def text(self) -> str:
        """All text the edit introduces (for leakage screens and similarity)."""
        return _flatten(self.value)


def _flatten(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        return "\n".join(_flatten(v) for v in value.values())
    if isinstance(value, list | tuple):
        return "\n".join(_flatten(v) for v in value)
    return str(value)


def apply_edits(harness: Harness, edits: list[Edit]) -> Harness:
    """Return a new harness with `edits` applied in order; raise EditError on the first invalid one."""
    data = harness.model_dump(mode="json")
    for position, edit in enumerate(edits):
        try:
            _check_op(edit)
            _APPLY[edit.component](data, edit)
        except EditError as exc:
            raise EditError(one_line(f"edit {position + 1} ({edit.summary()}): {exc}")) from None
    try:
        return Harness.model_validate(data)
    except ValidationError as exc:
        raise EditError(describe_validation(exc, "edited harness")) from None


def _check_op(edit: Edit) -> None:
    valid = VALID_OPS[edit.component]
    if edit.op not in valid:
        raise EditError(f"op {edit.op!r} is not valid for component {edit.component!r}; valid: {', '.join(valid)}")


def _validated(model: type[BaseModel], value: Any, what: str) -> dict[str, Any]:
    try:
        return model.model_validate(value).model_dump(mode="json")
    except ValidationError as exc:
        raise EditError(describe_validation(exc, what)) from None


def _find(items: list[dict[str, Any]], name: str | None, what: str) -> int:
    for index, item in enumerate(items):
        if item["name"] == name:
            return index
    known = ", ".join(i["name"] for i in items) or "none"
    raise EditError(f"unknown {what} {name!r}; existing: {known}")


def _require_target(edit: Edit) -> str:
    if edit.target is None or str(edit.target) == "":
        raise EditError("a target is required")
    return str(edit.target)


def _apply_system(data: dict[str, Any], edit: Edit) -> None:
    sections = data["system"]
    name = _require_target(edit)
    if edit.op == "remove":
        sections.pop(_find(sections, name, "section"))
        return
    if not isinstance(edit.value, str):
        raise EditError("value must be the section text")
    new = _validated(Section, {"name": name, "text": edit.value}, "section")
    if edit.op == "add":
        if any(s["name"] == name for s in sections):
            raise EditError(f"section {name!r} already exists (use replace)")
        sections.append(new)
    else:
        sections[_find(sections, name, "section")] = new


def _apply_skill(data: dict[str, Any], edit: Edit) -> None:
    skills = data["skills"]
    name = _require_target(edit)
    if edit.op == "remove":
        skills.pop(_find(skills, name, "skill"))
        return
    value = {"body": edit.value} if isinstance(edit.value, str) else edit.value
    if not isinstance(value, dict):
        raise EditError("value must be {description, body} or the body text")
    if edit.op == "add":
        if any(s["name"] == name for s in skills):
            raise EditError(f"skill {name!r} already exists (use replace)")
        skills.append(_validated(Skill, {**value, "name": name}, "skill"))
    else:
        index = _find(skills, name, "skill")
        skills[index] = _validated(Skill, {**skills[index], **value, "name": name}, "skill")


def _example_index(edit: Edit, size: int, allow_end: bool) -> int:
    if edit.target is None or not edit.target.isascii() or not edit.target.isdigit():
        raise EditError(f"example target must be an index (0, 1, ...), got {edit.target!r}")
    index = int(edit.target)
    limit = size if allow_end else size - 1
    if not 0 <= index <= limit:
        raise EditError(f"example index {index} out of range 0..{limit}")
    return index


def _set_examples(data: dict[str, Any], edit: Edit) -> None:
    """Replace the whole demonstration set (one mechanism: which and how many examples)."""
    if not isinstance(edit.value, list):
        raise EditError("value must be a list of examples {input, output, rationale?}")
    if edit.target not in (None, "") and str(edit.target) != str(len(edit.value)):
        raise EditError(f"target {edit.target!r} must be the number of examples ({len(edit.value)})")
    new = [_validated(Example, item, f"example {i}") for i, item in enumerate(edit.value)]
    inputs = [e["input"] for e in new]
    if len(set(inputs)) != len(inputs):
        raise EditError("two examples have the same input")
    data["examples"] = new


def _apply_example(data: dict[str, Any], edit: Edit) -> None:
    examples = data["examples"]
    if edit.op == "set":
        _set_examples(data, edit)
        return
    if edit.op == "remove":
        examples.pop(_example_index(edit, len(examples), False))
        return
    new = _validated(Example, edit.value, "example")
    if edit.op == "add":
        index = len(examples) if edit.target is None else _example_index(edit, len(examples), True)
        if any(e["input"] == new["input"] for e in examples):
            raise EditError("an example with the same input already exists")
        examples.insert(index, new)
    else:
        examples[_example_index(edit, len(examples), False)] = new


def _apply_control(data: dict[str, Any], edit: Edit) -> None:
    field = _require_target(edit)
    if field not in CONTROL_FIELDS:
        raise EditError(f"unknown control field {field!r}; valid: {', '.join(CONTROL_FIELDS)}")
    control = dict(data["control"])
    if "." in field:
        group, key = field.split(".", 1)
        control[group] = {**control.get(group, {}), key: edit.value}
    else:
        control[field] = edit.value
    data["control"] = _validated(Control, control, "control")


def _apply_tool(data: dict[str, Any], edit: Edit) -> None:
    tools = data["tools"]
    if edit.op == "remove":
        tools.pop(_find(tools, _require_target(edit), "tool"))
        return
    if not isinstance(edit.value, dict):
        raise EditError("value must be a tool object")
    if edit.op == "add":
        new = _validated(Tool, edit.value, "tool")
        if any(t["name"] == new["name"] for t in tools):
            raise EditError(f"tool {new['name']!r} already exists (use replace)")
        tools.append(new)
    else:
        index = _find(tools, _require_target(edit), "tool")
        tools[index] = _validated(Tool, {**tools[index], **edit.value}, "tool")


def _setter(name: str, fields: tuple[str, ...], model: type[BaseModel]) -> Any:
    def apply(data: dict[str, Any], edit: Edit) -> None:
        field = _require_target(edit)
        if field not in fields:
            raise EditError(f"unknown {name} field {field!r}; valid: {', '.join(fields)}")
        data[name] = _validated(model, {**data[name], field: edit.value}, name)

    return apply


_APPLY = {
    "system": _apply_system,
    "skill": _apply_skill,
    "example": _apply_example,
    "control": _apply_control,
    "tool": _apply_tool,
    "memory": _setter("memory", MEMORY_FIELDS, Memory),
    "context": _setter("context", CONTEXT_FIELDS, Context),
}


def parse_edits(raw: Any, source: str = "edits") -> list[Edit]:
    """Validate a list of edit objects (e.g. parsed model output); raise EditError naming the field."""
    if isinstance(raw, dict) and "edits" in raw:
        raw = raw["edits"]
    if not isinstance(raw, list):
        raise EditError(f"{source}: expected a list of edits")
    edits = []
    for index, item in enumerate(raw):
        try:
            edits.append(Edit.model_validate(item))
        except ValidationError as exc:
            raise EditError(one_line(describe_validation(exc, f"{source}[{index}]"))) from None
    return edits
