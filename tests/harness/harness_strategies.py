"""Hypothesis strategies for harness documents, and helpers to compare harness folders byte for byte."""

from __future__ import annotations

from pathlib import Path

from hypothesis import strategies as st

from evolve.harness import Context, Control, Example, Flow, Harness, Memory, Section, Skill, Tool
from evolve.harness.model import AnswerExtraction, is_marker

names = st.from_regex(r"[a-z0-9][a-z0-9-]{0,12}", fullmatch=True)
# Any text without surrogates (not encodable as UTF-8), including CR, NUL, U+2028 and other odd characters.
texts = st.text(st.characters(exclude_categories=("Cs",)), max_size=80)
lines_text = texts.filter(lambda t: not any(is_marker(line) for line in t.replace("\r", "\n").split("\n")))
descriptions = texts.filter(lambda t: t.split() != [])

sections = st.builds(Section, name=names, text=lines_text)
skills = st.builds(Skill, name=names, description=descriptions, body=lines_text)
examples = st.builds(Example, input=texts, output=texts, rationale=st.none() | texts)
json_scalars = st.none() | st.booleans() | st.integers(-(2**31), 2**31) | texts
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)
tools = st.builds(
    Tool,
    name=names,
    description=texts,
    parameters=st.dictionaries(texts, json_values, max_size=3),
    implementation=st.from_regex(r"builtin:[a-z_][a-z0-9_]{0,8}", fullmatch=True),
)
answers = st.one_of(
    st.builds(AnswerExtraction, mode=st.sampled_from(["full", "first_line", "last_line"])),
    st.builds(AnswerExtraction, mode=st.just("regex"), pattern=st.sampled_from([r"(\d+)", r"answer: (\w+)", "x"])),
    st.builds(AnswerExtraction, mode=st.just("json_field"), pattern=names),
)
controls = st.builds(
    Control,
    temperature=st.floats(0.0, 2.0, allow_nan=False),
    max_tokens=st.integers(1, 8192),
    samples=st.integers(1, 16),
    vote=st.sampled_from(["majority", "first"]),
    max_turns=st.integers(1, 64),
    examples_as=st.sampled_from(["turns", "system"]),
    answer=answers,
    flow=st.just(Flow()) | st.builds(Flow, plan_then_act=st.booleans(), verify_before_answer=st.booleans(),
                                     retry_on_tool_error=st.integers(0, 3)),
    skills_as=st.sampled_from(["inline", "on_request"]),
    tool_protocol=st.sampled_from(["auto", "native", "text"]),
)
memories = st.just(Memory()) | st.builds(Memory, scope=st.sampled_from(["off", "turns", "batch"]),
                                         update=st.sampled_from(["append", "replace"]),
                                         max_notes=st.integers(1, 50), max_chars=st.integers(20, 2000))
contexts = st.just(Context()) | st.builds(Context, strategy=st.sampled_from(["keep", "truncate", "summarize"]),
                                          budget_tokens=st.integers(256, 100_000), keep_last=st.integers(0, 64))


def _unique(items: list, key=lambda x: x.name) -> tuple:
    seen: dict = {}
    for item in items:
        seen.setdefault(key(item), item)
    return tuple(seen.values())


@st.composite
def harnesses(draw: st.DrawFn) -> Harness:
    """Any valid harness (unique section/skill/tool names, unique example inputs)."""
    return Harness(
        name=draw(texts),
        description=draw(texts),
        system=_unique(draw(st.lists(sections, max_size=4))),
        skills=_unique(draw(st.lists(skills, max_size=3))),
        examples=_unique(draw(st.lists(examples, max_size=3)), key=lambda e: e.input),
        control=draw(controls),
        tools=_unique(draw(st.lists(tools, max_size=2))),
        memory=draw(memories),
        context=draw(contexts),
    )


def folder_bytes(path: Path) -> dict[str, bytes]:
    """Every file under `path` as {relative posix path: bytes}."""
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}
