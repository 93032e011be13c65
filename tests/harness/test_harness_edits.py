"""Typed edits: every op on every component, and the errors for bad edits."""

from __future__ import annotations

import pytest

from evolve.errors import EditError, EvolveError
from evolve.harness import Edit, Example, Harness, Section, Skill, Tool, apply_edits, parse_edits
from evolve.harness.edits import VALID_OPS
from evolve.harness.model import COMPONENTS, MAX_TEXT

TOOL = {"name": "calc", "description": "Evaluate arithmetic.", "implementation": "builtin:calculator",
        "parameters": {"type": "object", "properties": {"expr": {"type": "string"}}}}


@pytest.fixture
def base() -> Harness:
    return Harness(
        name="base",
        system=(Section(name="role", text="You are careful."), Section(name="format", text="Answer briefly.")),
        skills=(Skill(name="math", description="Use for arithmetic.", body="Compute step by step."),),
        examples=(Example(input="1+1?", output="2"), Example(input="2+2?", output="4", rationale="2 and 2")),
        tools=(Tool.model_validate(TOOL),),
    )


def one(harness: Harness, **edit) -> Harness:
    return apply_edits(harness, [Edit(**edit)])


def error_of(harness: Harness, **edit) -> str:
    with pytest.raises(EditError) as info:
        one(harness, **edit)
    message = str(info.value)
    assert "\n" not in message
    return message


# -- every valid op/component combination ------------------------------------------------------


def test_valid_ops_cover_every_component() -> None:
    assert set(VALID_OPS) == set(COMPONENTS)


def test_system_add_replace_remove(base: Harness) -> None:
    added = one(base, op="add", component="system", target="checks", value="Check the answer.")
    assert [s.name for s in added.system] == ["role", "format", "checks"]
    replaced = one(base, op="replace", component="system", target="role", value="You are terse.")
    assert replaced.section("role").text == "You are terse."
    assert [s.name for s in replaced.system] == ["role", "format"]
    removed = one(base, op="remove", component="system", target="role")
    assert [s.name for s in removed.system] == ["format"]


def test_skill_add_replace_remove(base: Harness) -> None:
    added = one(base, op="add", component="skill", target="units",
                value={"description": "Use when units appear.", "body": "Convert first."})
    assert added.skill("units").body == "Convert first."
    body_only = one(base, op="replace", component="skill", target="math", value="Write the sum first.")
    assert body_only.skill("math").body == "Write the sum first."
    assert body_only.skill("math").description == "Use for arithmetic."
    described = one(base, op="replace", component="skill", target="math", value={"description": "Any numbers."})
    assert described.skill("math").description == "Any numbers."
    assert described.skill("math").body == "Compute step by step."
    assert one(base, op="remove", component="skill", target="math").skills == ()


def test_skill_add_uses_the_target_as_name(base: Harness) -> None:
    added = one(base, op="add", component="skill", target="units",
                value={"name": "other", "description": "d", "body": "b"})
    assert [s.name for s in added.skills] == ["math", "units"]


def test_example_add_replace_remove(base: Harness) -> None:
    appended = one(base, op="add", component="example", value={"input": "3+3?", "output": "6"})
    assert [e.input for e in appended.examples] == ["1+1?", "2+2?", "3+3?"]
    inserted = one(base, op="add", component="example", target="0", value={"input": "0+0?", "output": "0"})
    assert [e.input for e in inserted.examples] == ["0+0?", "1+1?", "2+2?"]
    replaced = one(base, op="replace", component="example", target=1, value={"input": "5+5?", "output": "10"})
    assert replaced.examples[1] == Example(input="5+5?", output="10")
    removed = one(base, op="remove", component="example", target=0)
    assert [e.input for e in removed.examples] == ["2+2?"]


@pytest.mark.parametrize(
    ("field", "value", "read"),
    [
        ("temperature", 0.7, lambda c: c.temperature),
        ("max_tokens", 128, lambda c: c.max_tokens),
        ("samples", 5, lambda c: c.samples),
        ("vote", "first", lambda c: c.vote),
        ("max_turns", 3, lambda c: c.max_turns),
        ("examples_as", "system", lambda c: c.examples_as),
        ("answer.mode", "first_line", lambda c: c.answer.mode),
    ],
)
def test_control_set(base: Harness, field: str, value, read) -> None:
    assert read(one(base, op="set", component="control", target=field, value=value).control) == value


def test_control_set_answer_regex_needs_pattern_first(base: Harness) -> None:
    assert "needs a pattern" in error_of(base, op="set", component="control", target="answer.mode", value="regex")
    edited = apply_edits(base, [
        Edit(op="set", component="control", target="answer.pattern", value=r"(\d+)"),
        Edit(op="set", component="control", target="answer.mode", value="regex"),
    ])
    assert (edited.control.answer.mode, edited.control.answer.pattern) == ("regex", r"(\d+)")


def test_tool_add_replace_remove(base: Harness) -> None:
    new = {**TOOL, "name": "search", "description": "Search notes.", "implementation": "python:pkg.mod:search"}
    added = one(base, op="add", component="tool", value=new)
    assert [t.name for t in added.tools] == ["calc", "search"]
    replaced = one(base, op="replace", component="tool", target="calc", value={"description": "Do math."})
    assert replaced.tool("calc").description == "Do math."
    assert replaced.tool("calc").implementation == "builtin:calculator"
    assert one(base, op="remove", component="tool", target="calc").tools == ()


def test_agent_settings_are_set_by_typed_edits(base: Harness) -> None:
    edited = apply_edits(base, [
        Edit(op="set", component="control", target="flow.verify_before_answer", value=True),
        Edit(op="set", component="control", target="skills_as", value="on_request"),
        Edit(op="set", component="memory", target="scope", value="batch"),
        Edit(op="set", component="context", target="strategy", value="summarize"),
        Edit(op="set", component="context", target="budget_tokens", value=2000),
    ])
    assert edited.control.flow.verify_before_answer and edited.control.skills_as == "on_request"
    assert (edited.memory.scope, edited.context.strategy, edited.context.budget_tokens) == ("batch", "summarize",
                                                                                           2000)
    assert "unknown memory field 'size'; valid: scope, update" in error_of(base, op="set", component="memory",
                                                                          target="size", value=1)
    assert "strategy" in error_of(base, op="set", component="context", target="strategy", value="forget")
    assert "retry_on_tool_error" in error_of(base, op="set", component="control", target="flow.retry_on_tool_error",
                                             value=9)
    assert "valid: set" in error_of(base, op="add", component="memory", target="scope", value="turns")


def test_answering_by_choice_is_a_typed_control_setting(base: Harness) -> None:
    plain = Harness()
    on = apply_edits(plain, [
        Edit(op="set", component="control", target="choice.labels", value=["positive", "negative"]),
        Edit(op="set", component="control", target="choice.calibration", value=["a review", "another review"]),
    ])
    assert on.control.choice.labels == ("positive", "negative") and len(on.control.choice.calibration) == 2
    assert on.version != plain.version and "choice" not in plain.content()["control"], "off: not in the version"
    whole = one(plain, op="set", component="control", target="choice", value={"labels": ["yes", "no"]})
    assert whole.control.choice.labels == ("yes", "no") and whole.control.choice.calibration == ()
    for value, message in ((["only"], "2 to 32 labels"), (["Yes", "yes"], "must differ"), (["a", ""], "1 to 100")):
        assert message in error_of(plain, op="set", component="control", target="choice.labels", value=value)
    assert "needs choice.labels" in error_of(plain, op="set", component="control", target="choice.calibration",
                                             value=["x"])
    assert "cannot be combined with tools" in error_of(base, op="set", component="control", target="choice",
                                                       value={"labels": ["a", "b"]})
    assert "max_turns 1" in error_of(on, op="set", component="control", target="max_turns", value=3)


def test_edits_apply_in_order_and_later_edits_see_earlier_ones(base: Harness) -> None:
    edited = apply_edits(base, [
        Edit(op="add", component="system", target="extra", value="x"),
        Edit(op="replace", component="system", target="extra", value="y"),
    ])
    assert edited.section("extra").text == "y"


# -- bad edits ---------------------------------------------------------------------------------


@pytest.mark.parametrize("component", ["system", "skill", "tool"])
def test_unknown_target_names_it_and_lists_existing(base: Harness, component: str) -> None:
    value = {"system": "text", "skill": "body", "tool": {"description": "d"}}[component]
    message = error_of(base, op="replace", component=component, target="nope", value=value)
    existing = {"system": "role, format", "skill": "math", "tool": "calc"}[component]
    assert "'nope'" in message and f"existing: {existing}" in message
    message = error_of(base, op="remove", component=component, target="nope")
    assert "'nope'" in message and existing in message


def test_unknown_target_in_empty_component(base: Harness) -> None:
    empty = base.model_copy(update={"skills": ()})
    assert "existing: none" in error_of(empty, op="remove", component="skill", target="math")


def test_unknown_control_field_lists_valid_fields(base: Harness) -> None:
    message = error_of(base, op="set", component="control", target="top_p", value=0.9)
    assert "'top_p'" in message and "samples" in message and "answer.mode" in message


@pytest.mark.parametrize("target", ["7", "-1", "x", "1_0", " 1", None])
def test_bad_example_index(base: Harness, target) -> None:
    message = error_of(base, op="remove", component="example", target=target)
    assert "example" in message


def test_error_names_the_position_of_the_bad_edit(base: Harness) -> None:
    with pytest.raises(EditError, match=r"^edit 2 \(remove system nope\): unknown section 'nope'"):
        apply_edits(base, [Edit(op="set", component="control", target="samples", value=3),
                           Edit(op="remove", component="system", target="nope")])


@pytest.mark.parametrize(
    ("component", "target", "value"),
    [
        ("system", "role", "again"),
        ("skill", "math", {"description": "d", "body": "b"}),
        ("tool", None, TOOL),
        ("example", None, {"input": "1+1?", "output": "two"}),
    ],
)
def test_add_collision_is_an_error(base: Harness, component: str, target, value) -> None:
    message = error_of(base, op="add", component=component, target=target, value=value)
    assert "already exists" in message


def test_duplicate_skill_names_in_one_edit_list(base: Harness) -> None:
    add = Edit(op="add", component="skill", target="units", value={"description": "d", "body": "b"})
    with pytest.raises(EditError, match="skill 'units' already exists"):
        apply_edits(base, [add, add])


def test_renaming_a_tool_onto_another_is_an_error(base: Harness) -> None:
    two = one(base, op="add", component="tool", value={**TOOL, "name": "other"})
    with pytest.raises(EditError, match="duplicate tool name"):
        one(two, op="replace", component="tool", target="other", value={"name": "calc"})


@pytest.mark.parametrize("name", ["../x", "a/b", "..", "/abs", "A", "a b", "a.md", "", "x\n", "-x", "a" * 65])
@pytest.mark.parametrize("component", ["skill", "system"])
def test_bad_names_are_rejected(base: Harness, component: str, name: str) -> None:
    value = {"description": "d", "body": "b"} if component == "skill" else "text"
    message = error_of(base, op="add", component=component, target=name, value=value)
    assert "name" in message or "target is required" in message


def test_path_traversing_tool_name_is_rejected(base: Harness) -> None:
    assert "invalid tool name" in error_of(base, op="add", component="tool", value={**TOOL, "name": "../x"})


@pytest.mark.parametrize(
    ("component", "op", "target", "value"),
    [
        ("system", "add", "big", "x" * (MAX_TEXT + 1)),
        ("system", "replace", "role", "x" * (MAX_TEXT + 1)),
        ("skill", "add", "big", {"description": "d", "body": "x" * (MAX_TEXT + 1)}),
        ("skill", "replace", "math", {"description": "d" * 1025}),
        ("example", "add", None, {"input": "x" * (MAX_TEXT + 1), "output": "o"}),
        ("example", "add", None, {"input": "i", "output": "o", "rationale": "x" * (MAX_TEXT + 1)}),
        ("tool", "replace", "calc", {"description": "x" * (MAX_TEXT + 1)}),
    ],
)
def test_oversize_text_is_rejected(base: Harness, component: str, op: str, target, value) -> None:
    message = error_of(base, op=op, component=component, target=target, value=value)
    assert "limit" in message or "longer than" in message


def test_text_at_the_limit_is_accepted(base: Harness) -> None:
    edited = one(base, op="add", component="system", target="big", value="x" * MAX_TEXT)
    assert len(edited.section("big").text) == MAX_TEXT


@pytest.mark.parametrize(
    ("component", "op"),
    [(c, op) for c in COMPONENTS for op in ("add", "replace", "remove", "set") if op not in VALID_OPS[c]],
)
def test_wrong_op_for_component(base: Harness, component: str, op: str) -> None:
    message = error_of(base, op=op, component=component, target="role", value="x")
    assert f"op {op!r} is not valid for component {component!r}" in message
    assert "valid: " + ", ".join(VALID_OPS[component]) in message


def test_missing_target_and_wrong_value_types(base: Harness) -> None:
    assert "target is required" in error_of(base, op="add", component="system", value="text")
    assert "section text" in error_of(base, op="add", component="system", target="new", value={"text": "t"})
    assert "tool object" in error_of(base, op="add", component="tool", value="calc")
    assert "{description, body}" in error_of(base, op="add", component="skill", target="new", value=3)
    assert "description" in error_of(base, op="add", component="skill", target="new", value="body only")


def test_section_text_with_a_marker_line_is_rejected(base: Harness) -> None:
    message = error_of(base, op="add", component="system", target="new", value="a\n  <!-- section: evil -->\nb")
    assert "section" in message


def test_invalid_control_value(base: Harness) -> None:
    assert "samples" in error_of(base, op="set", component="control", target="samples", value=0)
    assert "temperature" in error_of(base, op="set", component="control", target="temperature", value="hot")


def test_failed_edit_list_leaves_input_untouched(base: Harness) -> None:
    before = base.model_dump()
    with pytest.raises(EditError):
        apply_edits(base, [Edit(op="remove", component="system", target="role"),
                           Edit(op="remove", component="system", target="role")])
    assert base.model_dump() == before


def test_edit_errors_are_user_errors() -> None:
    assert issubclass(EditError, EvolveError) and EditError.exit_code == 2


# -- parsing edits from model output -----------------------------------------------------------


def test_parse_edits_accepts_list_or_wrapper_and_numeric_targets() -> None:
    raw = [{"op": "remove", "component": "example", "target": 0, "hypothesis": "less noise"}]
    assert parse_edits(raw) == parse_edits({"edits": raw})
    assert parse_edits(raw)[0].target == "0"


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ("not a list", "expected a list of edits"),
        ([{"op": "delete", "component": "system"}], "edits[0]: field 'op'"),
        ([{"op": "add", "component": "systems"}], "edits[0]: field 'component'"),
        ([{"op": "add", "component": "system"}, {"op": "add", "component": "system", "colour": 1}],
         "edits[1]: field 'colour'"),
        ([{"op": "add", "component": "system", "hypothesis": "h" * 2001}], "edits[0]: field 'hypothesis'"),
    ],
)
def test_parse_edits_errors_name_the_field(raw, needle: str) -> None:
    with pytest.raises(EditError) as info:
        parse_edits(raw)
    assert needle in str(info.value) and "\n" not in str(info.value)


def test_edit_key_summary_and_text() -> None:
    edit = Edit(op="add", component="skill", target="units", value={"description": "d", "body": "b"})
    assert edit.summary() == "add skill units"
    assert edit.text() == "d\nb"
    same = Edit(op="add", component="skill", target="units", value={"body": "b", "description": "d"}, hypothesis="h")
    assert edit.key() == same.key()
