"""Property tests: byte-stable load/save, stable content hashes, pure and reversible edits."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from harness_strategies import examples, folder_bytes, harnesses, sections, skills, texts, tools
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evolve.errors import HarnessError
from evolve.harness import (
    Edit,
    Example,
    Harness,
    Section,
    Skill,
    Tool,
    apply_edits,
    load_harness,
    render_files,
    save_harness,
    system_prompt,
)
from evolve.paths import data_dir

# EVOLVE_HYPOTHESIS_EXAMPLES=2000 runs a deeper search (the default keeps the suite fast on small machines).
PROPS = settings(max_examples=int(os.environ.get("EVOLVE_HYPOTHESIS_EXAMPLES", "60")), deadline=None,
                 suppress_health_check=[HealthCheck.too_slow])


def _save_load(harness: Harness) -> tuple[dict[str, bytes], Harness]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = save_harness(harness, Path(tmp) / "h")
        return folder_bytes(folder), load_harness(folder)


@PROPS
@given(harnesses())
def test_save_load_save_is_byte_identical(harness: Harness) -> None:
    first, loaded = _save_load(harness)
    second, _ = _save_load(loaded)
    assert second == first
    assert loaded == harness
    assert loaded.version == harness.version


@PROPS
@given(harnesses())
def test_saved_files_are_exactly_render_files(harness: Harness) -> None:
    saved, _ = _save_load(harness)
    assert saved == {rel: text.encode("utf-8") for rel, text in render_files(harness).items()}


@PROPS
@given(harnesses(), texts, texts)
def test_version_ignores_name_and_description(harness: Harness, name: str, description: str) -> None:
    relabeled = harness.model_copy(update={"name": name, "description": description})
    assert relabeled.version == harness.version
    assert Harness.model_validate(harness.model_dump(mode="json")).version == harness.version


@PROPS
@given(harnesses(), sections)
def test_version_changes_when_content_changes(harness: Harness, section: Section) -> None:
    if harness.section(section.name) is not None:
        changed = apply_edits(harness, [Edit(op="remove", component="system", target=section.name)])
    else:
        changed = apply_edits(harness, [Edit(op="add", component="system", target=section.name, value=section.text)])
    assert changed.version != harness.version


@PROPS
@given(harnesses(), st.integers(1, 8192))
def test_version_changes_with_control(harness: Harness, max_tokens: int) -> None:
    changed = apply_edits(harness, [Edit(op="set", component="control", target="max_tokens", value=max_tokens)])
    assert (changed.version == harness.version) == (max_tokens == harness.control.max_tokens)


SHIPPED_VERSIONS = {"extract-city-tuned": "8fc4ee1c0a58393b", "extract-quantity-tuned": "8e6e282d8a9e6a5f",
                    "minimal": "4873753378943602", "sentiment-tuned": "745766a485c6c38a",
                    "structured": "7e219eb9088d53ef", "topic-tuned": "28b5e95adc7b226b"}
"""Versions of the shipped single-turn harnesses from before memory, context, flow, skills_as and
tool_protocol existed: settings at their defaults must not change a version id."""


def test_settings_at_their_defaults_keep_older_version_ids() -> None:
    for name, version in SHIPPED_VERSIONS.items():
        harness = load_harness(data_dir("harnesses") / name)
        assert harness.version == version, name
        text = render_files(harness)["harness.yaml"]
        assert not any(key in text for key in ("flow:", "skills_as", "tool_protocol", "memory:", "context:"))


@PROPS
@given(harnesses(), st.sampled_from([("memory", "scope", "batch"), ("context", "strategy", "summarize"),
                                     ("control", "flow.verify_before_answer", True),
                                     ("control", "skills_as", "on_request")]))
def test_version_changes_with_agent_settings(harness: Harness, change: tuple) -> None:
    component, target, value = change
    changed = apply_edits(harness, [Edit(op="set", component=component, target=target, value=value)])
    before = harness.model_dump(mode="json")
    after = changed.model_dump(mode="json")
    assert (changed.version == harness.version) == (before == after)


@PROPS
@given(harnesses())
def test_skill_order_does_not_change_version(harness: Harness) -> None:
    reversed_skills = harness.model_copy(update={"skills": tuple(reversed(harness.skills))})
    assert reversed_skills.version == harness.version


def _edits_for(harness: Harness, section: Section, skill: Skill, example: Example, tool: Tool) -> list[Edit]:
    edits = [Edit(op="set", component="control", target="samples", value=harness.control.samples % 16 + 1)]
    if harness.section(section.name) is None:
        edits.append(Edit(op="add", component="system", target=section.name, value=section.text))
    if harness.skill(skill.name) is None:
        edits.append(Edit(op="add", component="skill", target=skill.name,
                          value={"description": skill.description, "body": skill.body}))
    if all(e.input != example.input for e in harness.examples):
        edits.append(Edit(op="add", component="example", value=example.model_dump()))
    if harness.tool(tool.name) is None:
        edits.append(Edit(op="add", component="tool", value=tool.model_dump(mode="json")))
    return edits


@PROPS
@given(harnesses(), sections, skills, examples, tools)
def test_apply_edits_is_pure(harness: Harness, section: Section, skill: Skill, example: Example, tool: Tool) -> None:
    before_dump, before_version = harness.model_dump(mode="json"), harness.version
    edits = _edits_for(harness, section, skill, example, tool)
    edits_before = [e.model_dump() for e in edits]
    result = apply_edits(harness, edits)
    assert harness.model_dump(mode="json") == before_dump
    assert harness.version == before_version
    assert [e.model_dump() for e in edits] == edits_before
    assert apply_edits(harness, edits) == result
    assert result.version != before_version


@PROPS
@given(harnesses(), sections, skills, examples, tools)
def test_add_then_remove_returns_the_same_version(
    harness: Harness, section: Section, skill: Skill, example: Example, tool: Tool
) -> None:
    cases = []
    if harness.section(section.name) is None:
        cases.append((Edit(op="add", component="system", target=section.name, value=section.text),
                      Edit(op="remove", component="system", target=section.name)))
    if harness.skill(skill.name) is None:
        cases.append((Edit(op="add", component="skill", target=skill.name,
                           value={"description": skill.description, "body": skill.body}),
                      Edit(op="remove", component="skill", target=skill.name)))
    if all(e.input != example.input for e in harness.examples):
        index = len(harness.examples) // 2
        cases.append((Edit(op="add", component="example", target=index, value=example.model_dump()),
                      Edit(op="remove", component="example", target=index)))
    if harness.tool(tool.name) is None:
        cases.append((Edit(op="add", component="tool", value=tool.model_dump(mode="json")),
                      Edit(op="remove", component="tool", target=tool.name)))
    for add, remove in cases:
        added = apply_edits(harness, [add])
        assert added.version != harness.version
        assert apply_edits(added, [remove]).version == harness.version
        assert apply_edits(harness, [add, remove]) == harness


@PROPS
@given(harnesses())
def test_replace_with_same_content_keeps_version(harness: Harness) -> None:
    edits = [Edit(op="replace", component="system", target=s.name, value=s.text) for s in harness.system]
    edits += [Edit(op="replace", component="skill", target=s.name, value={"body": s.body}) for s in harness.skills]
    assert apply_edits(harness, edits).version == harness.version


def test_every_shipped_harness_is_canonical(tmp_path: Path) -> None:
    shipped = sorted(p for p in data_dir("harnesses").iterdir() if (p / "harness.yaml").is_file())
    assert {p.name for p in shipped} >= {"minimal", "structured"}
    for folder in shipped:
        copy = save_harness(load_harness(folder), tmp_path / folder.name)
        assert folder_bytes(copy) == folder_bytes(folder), folder.name


def test_structured_seed_has_skill_examples_and_control() -> None:
    h = load_harness(data_dir("harnesses") / "structured")
    assert h.skills and len(h.examples) >= 2 and len(h.system) >= 2
    assert h.control != load_harness(data_dir("harnesses") / "minimal").control


long_texts = st.text(st.characters(exclude_categories=("Cs",)), min_size=90, max_size=400)


@PROPS
@given(long_texts, long_texts, st.lists(st.sampled_from([" ", "  ", "\n", "\t", "word", "-", ":", "#", "'"]),
                                        min_size=40, max_size=120).map("".join))
def test_long_yaml_strings_round_trip(name: str, description: str, spaced: str) -> None:
    """Folded YAML scalars (long lines, runs of spaces, line breaks) read back unchanged."""
    harness = Harness(name=name, description=description + spaced,
                      tools=(Tool(name="t", description=spaced + description, implementation="builtin:t"),))
    first, loaded = _save_load(harness)
    assert (loaded.name, loaded.description, loaded.tools) == (harness.name, harness.description, harness.tools)
    assert _save_load(loaded)[0] == first


yaml_like = st.lists(
    st.sampled_from(["name: x", "control:", "  samples: 2", "  answer:", "    mode: regex", "tools:", "- name: t",
                     "  implementation: builtin:t", "description: |", "  text", "[", "{a: 1}", "- 1", "? k", "&a x",
                     "*a", "!!python/object:os.system x", "123: 4", "null: 5", "\t", "---", "...", ": :"]) | texts,
    max_size=8,
).map("\n".join)
skill_like = st.lists(st.sampled_from(["---", "name: s", "description: d", "name: [", "body", ""]) | texts,
                      max_size=6).map("\n".join)
jsonl_like = st.lists(st.sampled_from(['{"input": "a", "output": "b"}', '{"input": 1}', "[]", "{", "null", ""]) | texts,
                      max_size=4).map("\n".join)


@PROPS
@given(yaml_like, texts, skill_like, jsonl_like, st.sampled_from(["s", "S", "x.y", "a b"]))
def test_any_folder_content_loads_or_raises_harness_error(
    meta: str, system: str, skill: str, examples_text: str, skill_dir: str
) -> None:
    """Arbitrary file content never escapes as anything but a valid Harness or a one-line HarnessError."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "harness.yaml").write_text(meta, encoding="utf-8")
        (folder / "system.md").write_text("<!-- section: a -->\n" + system, encoding="utf-8")
        (folder / "skills" / skill_dir).mkdir(parents=True)
        (folder / "skills" / skill_dir / "SKILL.md").write_text(skill, encoding="utf-8")
        (folder / "examples.jsonl").write_text(examples_text, encoding="utf-8")
        try:
            harness = load_harness(folder)
        except HarnessError as exc:
            assert "\n" not in str(exc) and str(folder) in str(exc)
        else:
            assert isinstance(harness, Harness)


@PROPS
@given(harnesses())
def test_rendering_does_not_change_equality(harness: Harness) -> None:
    twin = Harness.model_validate(harness.model_dump(mode="json"))
    prompt = system_prompt(harness)
    assert harness == twin and twin == harness
    assert system_prompt(twin) == prompt


def test_copies_render_their_own_system_prompt() -> None:
    """Copies never share a render cache: a copy that reuses a freed copy's address would read its text."""
    from evolve.harness import Control, Example, Section

    base = Harness(system=(Section(name="role", text="Answer."),), examples=(Example(input="a", output="b"),),
                   control=Control(examples_as="turns"))
    system_prompt(base)
    for _ in range(200):  # freed copies' addresses are reused by later ones
        for placement in ("turns", "system"):
            copy = base.model_copy(update={"control": Control(examples_as=placement)})
            assert copy._system_prompt is not base._system_prompt
            assert ("Input: a" in system_prompt(copy)) == (placement == "system")
