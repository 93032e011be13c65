"""Harness folders on disk: loading errors name the file (and line), saving, bundles, rendering, diffs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evolve.errors import ConfigError, HarnessError
from evolve.harness import (
    Example,
    Harness,
    Section,
    Skill,
    Tool,
    diff_harnesses,
    load_harness,
    render_messages,
    save_harness,
    system_prompt,
)
from evolve.harness.io import noncanonical_files
from evolve.paths import data_dir
from evolve.templating import render


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A writable copy of the shipped `structured` harness."""
    return Path(shutil.copytree(data_dir("harnesses") / "structured", tmp_path / "structured"))


def load_error(path: Path) -> str:
    with pytest.raises(HarnessError) as info:
        load_harness(path)
    message = str(info.value)
    assert "\n" not in message
    return message


# -- harness.yaml ------------------------------------------------------------------------------


def test_malformed_yaml_names_file_and_line(folder: Path) -> None:
    meta = folder / "harness.yaml"
    meta.write_text("name: broken\ncontrol:\n  samples: 1\n   max_tokens: [\n", encoding="utf-8")
    message = load_error(folder)
    assert message.startswith(f"{meta}: line 4")


def test_unclosed_bracket_names_its_line(folder: Path) -> None:
    (folder / "harness.yaml").write_text("name: x\ntools: [\n  {name: a\n", encoding="utf-8")
    message = load_error(folder)
    assert "harness.yaml: line" in message


def test_unknown_top_level_key_lists_valid_keys(folder: Path) -> None:
    (folder / "harness.yaml").write_text("name: x\nsystem_prompt: hi\n", encoding="utf-8")
    message = load_error(folder)
    assert "harness.yaml: line 2: unknown key(s) system_prompt" in message
    assert "valid: name, description, control, tools" in message


def test_non_string_keys_are_reported(folder: Path) -> None:
    (folder / "harness.yaml").write_text("name: x\n123: y\nnull: z\n", encoding="utf-8")
    assert "line 2: unknown key(s) 123, None" in load_error(folder)


def test_unknown_control_key_names_the_field_and_line(folder: Path) -> None:
    (folder / "harness.yaml").write_text("name: x\ncontrol:\n  samples: 2\n  top_p: 0.9\n", encoding="utf-8")
    message = load_error(folder)
    assert "harness.yaml: line 4: field 'control.top_p'" in message


def test_invalid_control_value_names_the_field_and_line(folder: Path) -> None:
    (folder / "harness.yaml").write_text("control:\n  samples: 99\n", encoding="utf-8")
    assert "harness.yaml: line 2: field 'control.samples'" in load_error(folder)


def test_invalid_tool_names_its_line(folder: Path) -> None:
    tool = "  - name: {}\n    description: d\n    implementation: builtin:x\n"
    (folder / "harness.yaml").write_text("name: x\ntools:\n" + tool.format("ok") + tool.format("../bad"),
                                         encoding="utf-8")
    assert "harness.yaml: line 6: field 'tools.1.name': invalid tool name '../bad'" in load_error(folder)


def test_top_level_must_be_a_mapping(folder: Path) -> None:
    (folder / "harness.yaml").write_text("- a\n- b\n", encoding="utf-8")
    assert "expected a mapping" in load_error(folder)


def test_empty_harness_yaml_uses_folder_name_and_defaults(tmp_path: Path) -> None:
    (tmp_path / "bare").mkdir()
    (tmp_path / "bare" / "harness.yaml").write_text("", encoding="utf-8")
    h = load_harness(tmp_path / "bare")
    assert (h.name, h.system, h.skills, h.examples, h.tools) == ("bare", (), (), (), ())


def test_missing_folder_and_missing_yaml(tmp_path: Path) -> None:
    assert "not a harness folder" in load_error(tmp_path / "absent")
    (tmp_path / "empty").mkdir()
    assert "missing harness.yaml" in load_error(tmp_path / "empty")


def test_non_utf8_file_is_a_harness_error(folder: Path) -> None:
    (folder / "system.md").write_bytes(b"<!-- section: a -->\n\xff\xfe bad\n")
    message = load_error(folder)
    assert "system.md" in message and "UTF-8" in message


def test_byte_order_marks_are_ignored(folder: Path) -> None:
    clean = load_harness(folder)
    for rel in ("harness.yaml", "system.md", "examples.jsonl", "skills/answer-format/SKILL.md"):
        path = folder / rel
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert load_harness(folder) == clean
    assert noncanonical_files(folder) == sorted(
        ["examples.jsonl", "harness.yaml", "skills/answer-format/SKILL.md", "system.md"])


# -- system.md ---------------------------------------------------------------------------------


def test_text_before_first_marker_names_the_line(folder: Path) -> None:
    (folder / "system.md").write_text("\n\nstray text\n<!-- section: a -->\nx\n", encoding="utf-8")
    message = load_error(folder)
    assert "system.md: line 3" in message


def test_bad_section_name_names_system_md_and_line(folder: Path) -> None:
    (folder / "system.md").write_text("<!-- section: ok -->\nx\n<!-- section: Bad_Name -->\ny\n", encoding="utf-8")
    message = load_error(folder)
    assert "system.md: line 3" in message and "invalid section name 'Bad_Name'" in message


def test_duplicate_section_names_the_second_line(folder: Path) -> None:
    (folder / "system.md").write_text("<!-- section: a -->\nx\n<!-- section: a -->\ny\n", encoding="utf-8")
    assert "system.md: line 3: duplicate section name 'a'" in load_error(folder)


def test_oversize_section_names_system_md(folder: Path) -> None:
    (folder / "system.md").write_text("<!-- section: a -->\n" + "x" * 20_001 + "\n", encoding="utf-8")
    message = load_error(folder)
    assert "system.md: line 1" in message and "limit" in message


def test_crlf_files_load_like_lf_files(folder: Path) -> None:
    lf = load_harness(folder)
    for rel in ("system.md", "skills/answer-format/SKILL.md", "harness.yaml"):
        path = folder / rel
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert load_harness(folder) == lf


# -- skills/ -----------------------------------------------------------------------------------


def write_skill(folder: Path, text: str, name: str = "answer-format") -> Path:
    path = folder / "skills" / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("no front matter\n", "line 1: SKILL.md must start with '---'"),
        ("---\nname: answer-format\ndescription: d\n", "front matter is not closed"),
        ("---\nname: answer-format\n---\nbody\n", "needs 'name' and 'description'"),
        ("---\nname: [unclosed\ndescription: d\n---\nbody\n", "invalid front matter"),
        ("---\nname: other\ndescription: d\n---\nbody\n", "differs from folder 'answer-format'"),
        ("---\nname: answer-format\ndescription: '   '\n---\nbody\n", "description must not be empty"),
        ("---\n- a list\n---\nbody\n", "needs 'name' and 'description'"),
        ("---\nname: answer-format\ndescription: d\nlicense: MIT\n---\nb\n", "unsupported front matter key(s) license"),
        ("---\nname: answer-format\ndescription: [a, b]\n---\nb\n", "'description' must be text, got list"),
        ("---\nname: answer-format\ndescription: d\n----\nbody\n", "front matter is not closed"),
    ],
)
def test_bad_skill_front_matter(folder: Path, text: str, needle: str) -> None:
    path = write_skill(folder, text)
    message = load_error(folder)
    assert str(path) in message and needle in message


def test_skill_front_matter_error_has_line(folder: Path) -> None:
    write_skill(folder, "---\nname: answer-format\ndescription: [x\n---\nbody\n")
    assert "SKILL.md: line" in load_error(folder)


def test_bad_skill_folder_name_is_rejected(folder: Path) -> None:
    path = write_skill(folder, "---\nname: Bad.Name\ndescription: d\n---\nbody\n", name="Bad.Name")
    message = load_error(folder)
    assert str(path) in message and "invalid skill name" in message


def test_hidden_entries_in_skills_are_ignored(folder: Path) -> None:
    clean = load_harness(folder)
    (folder / "skills" / ".DS_Store").write_bytes(b"\x00\x01")
    assert load_harness(folder) == clean


def test_skills_entry_must_be_a_folder_with_skill_md(folder: Path) -> None:
    (folder / "skills" / "notes.txt").write_text("x", encoding="utf-8")
    assert "must be a folder with SKILL.md" in load_error(folder)


# -- examples.jsonl ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ('{"input": "a", "output": ', "line 2: invalid JSON"),
        ('["a", "b"]', "line 2: expected a JSON object"),
        ('{"input": "a"}', "line 2: field 'output'"),
        ('{"input": "a", "output": "b", "score": 1}', "line 2: field 'score'"),
    ],
)
def test_malformed_example_line_names_file_and_line(folder: Path, line: str, needle: str) -> None:
    path = folder / "examples.jsonl"
    path.write_text('{"input": "q", "output": "a"}\n' + line + "\n", encoding="utf-8")
    message = load_error(folder)
    assert str(path) in message and needle in message


def test_blank_example_lines_are_skipped_and_not_rewritten(folder: Path, tmp_path: Path) -> None:
    path = folder / "examples.jsonl"
    path.write_text('\n{"input": "q", "output": "a"}\n\n', encoding="utf-8")
    h = load_harness(folder)
    assert h.examples == (Example(input="q", output="a"),)
    saved = save_harness(h, tmp_path / "copy")
    assert (saved / "examples.jsonl").read_text(encoding="utf-8") == '{"input": "q", "output": "a"}\n'


# -- saving and bundles ------------------------------------------------------------------------


def test_save_replaces_stale_files_and_keeps_others(tmp_path: Path) -> None:
    rich = Harness(system=(Section(name="a", text="x"),), skills=(Skill(name="s", description="d", body="b"),),
                   examples=(Example(input="i", output="o"),))
    target = save_harness(rich, tmp_path / "h")
    (target / "README.md").write_text("notes", encoding="utf-8")
    save_harness(Harness(name="bare"), target)
    assert sorted(p.name for p in target.iterdir()) == ["README.md", "harness.yaml"]
    assert load_harness(target) == Harness(name="bare")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".harness-")]


def test_save_onto_a_file_is_a_harness_error(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("x", encoding="utf-8")
    with pytest.raises(HarnessError, match="not a folder"):
        save_harness(Harness(), tmp_path / "taken")


def test_noncanonical_files_lists_changed_missing_and_extra(folder: Path) -> None:
    assert noncanonical_files(folder) == []
    (folder / "system.md").write_text((folder / "system.md").read_text(encoding="utf-8") + "\n\n", encoding="utf-8")
    (folder / "skills" / "answer-format" / "notes.md").write_text("extra", encoding="utf-8")
    assert noncanonical_files(folder) == ["skills/answer-format/notes.md", "system.md"]
    save_harness(load_harness(folder), folder)
    assert noncanonical_files(folder) == []


def test_json_bundle_loads_bare_or_wrapped(tmp_path: Path) -> None:
    h = load_harness(data_dir("harnesses") / "structured")
    (tmp_path / "bare.json").write_text(json.dumps(h.model_dump(mode="json")), encoding="utf-8")
    (tmp_path / "wrapped.json").write_text(json.dumps({"harness": h.model_dump(mode="json")}), encoding="utf-8")
    assert load_harness(tmp_path / "bare.json") == h == load_harness(tmp_path / "wrapped.json")


def test_bad_json_bundle_names_line(tmp_path: Path) -> None:
    (tmp_path / "b.json").write_text('{\n  "name": "x",\n  oops\n}', encoding="utf-8")
    assert "b.json: line 3: invalid JSON" in load_error(tmp_path / "b.json")
    (tmp_path / "c.json").write_text('{"system": [{"name": "../x", "text": "t"}]}', encoding="utf-8")
    assert "c.json: field 'system.0.name'" in load_error(tmp_path / "c.json")


# -- rendering ---------------------------------------------------------------------------------


def test_render_has_explicit_system_message_even_when_empty() -> None:
    messages = render_messages(Harness(), "What is 2+2?")
    assert messages == [{"role": "system", "content": ""}, {"role": "user", "content": "What is 2+2?"}]


def test_render_example_turns_in_order() -> None:
    h = Harness(
        system=(Section(name="role", text="Be brief."), Section(name="format", text="One word.")),
        examples=(Example(input="q1", output="a1"), Example(input="q2", output="a2", rationale="because")),
    )
    messages = render_messages(h, "task")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert messages[0]["content"] == "Be brief.\n\nOne word."
    assert [m["content"] for m in messages[1:]] == ["q1", "a1", "q2", "because\na2", "task"]


def test_render_examples_inside_system_prompt() -> None:
    h = Harness(examples=(Example(input="q1", output="a1", rationale="r1"),),
                control={"examples_as": "system"})
    messages = render_messages(h, "task")
    assert len(messages) == 2
    assert "Input: q1" in messages[0]["content"] and "Reasoning: r1" in messages[0]["content"]
    assert "Answer: a1" in messages[0]["content"]


def test_render_skills_sorted_and_tools_listed() -> None:
    h = Harness(
        skills=(Skill(name="zeta", description="Last.", body="Z body"), Skill(name="alpha", description="First.",
                                                                             body="A body")),
        tools=(Tool(name="calc", description="Math.", implementation="builtin:calc",
                    parameters={"type": "object", "properties": {"x": {"type": "number"}}}),),
    )
    text = system_prompt(h)
    assert text.index("## alpha") < text.index("## zeta")
    assert "When to use: First." in text and "A body" in text
    assert '- calc: Math. Arguments schema: {"properties": {"x": {"type": "number"}}, "type": "object"}' in text


def test_render_keeps_jinja_syntax_in_content_literal() -> None:
    h = Harness(system=(Section(name="a", text="Use {{ braces }} and {% raw %} literally."),))
    assert system_prompt(h) == "Use {{ braces }} and {% raw %} literally."


def test_templates_use_strict_undefined(tmp_path: Path) -> None:
    (tmp_path / "t.j2").write_text("Hello {{ name }} from {{ place }}", encoding="utf-8")
    assert render("t.j2", tmp_path, name="a", place="b") == "Hello a from b\n"
    with pytest.raises(ConfigError, match="'place' is undefined"):
        render("t.j2", tmp_path, name="a")
    with pytest.raises(ConfigError, match="not found"):
        render("missing.j2", tmp_path)


def test_template_syntax_error_names_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "bad.j2").write_text("ok\n{% if %}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line 2"):
        render("bad.j2", tmp_path)


# -- diff --------------------------------------------------------------------------------------


def test_diff_per_component() -> None:
    a = Harness(system=(Section(name="role", text="old"), Section(name="gone", text="bye")),
                skills=(Skill(name="s", description="d", body="b"),))
    b = Harness(system=(Section(name="role", text="new"), Section(name="fresh", text="hi")),
                skills=(Skill(name="s", description="d", body="b"),), control={"samples": 3})
    diffs = {d.component: d for d in diff_harnesses(a, b, "A", "B")}
    assert {k: d.status for k, d in diffs.items()} == {
        "control": "changed", "system/fresh": "added", "system/gone": "removed", "system/role": "changed"}
    role = diffs["system/role"].lines
    assert role[:2] == ("--- A/system/role", "+++ B/system/role")
    assert "-old" in role and "+new" in role
    assert diff_harnesses(a, a) == []
