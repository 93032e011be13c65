"""Seeded task generation from hand-written templates and vocabularies.

A generator spec (the `generator:` block of a benchmark.yaml) lists classes, each with a target and
sentence templates, and the slot vocabularies the templates draw from:

    generator:
      count: 260
      slots: {product: [kettle, lamp], city: [Lisbon, Oslo]}
      classes:
        - target: positive
          templates: ["The {product} works perfectly."]
        - target: "{city}"
          templates: ["I moved to {city} after visiting {city_2}."]

`{slot}` is filled from `slots[slot]`; `{slot_2}`, `{slot_3}` draw a different value of the same
vocabulary. Targets may use the same placeholders; the filled text starts with a capital. Classes
are used in turn (balanced labels) and the order is shuffled; duplicate inputs are redrawn. Same
spec + seed = same tasks.
"""

from __future__ import annotations

import random
import re
import string
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evolve.errors import BenchmarkError

_SUFFIX = re.compile(r"^(.*)_(\d+)$")
MAX_TRIES = 50


class GeneratorClass(BaseModel):
    """One class of generated items: a target and the templates that express it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    target: str
    """The answer (a label, or a template such as `{city}`)."""
    templates: list[str] = Field(min_length=1)
    """Input templates with `{slot}` placeholders."""


class GeneratorSpec(BaseModel):
    """A seeded template generator."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    count: int = Field(gt=0, le=100_000)
    """Number of tasks to generate."""
    seed: int = 0
    """Generation seed (the task set; the split seed is separate)."""
    prefix: str = ""
    """Text put before every input (e.g. `Review: `)."""
    suffix: str = ""
    """Text put after every input (e.g. a question such as `\\nPositive or negative?`)."""
    slots: dict[str, list[str]] = Field(default_factory=dict)
    """Vocabularies."""
    classes: list[GeneratorClass] = Field(min_length=1)
    """Classes, used in turn."""

    @model_validator(mode="after")
    def _slots_known(self) -> GeneratorSpec:
        for cls in self.classes:
            for text in [cls.target, *cls.templates]:
                for name in placeholders(text):
                    base = slot_base(name)
                    if base not in self.slots:
                        raise ValueError(f"template {text!r} uses unknown slot {name!r}; "
                                         f"slots: {', '.join(sorted(self.slots))}")
        return self


def placeholders(text: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(text) if name]


def slot_base(name: str) -> str:
    match = _SUFFIX.match(name)
    return match.group(1) if match else name


def _fill(texts: list[str], slots: dict[str, list[str]], rng: random.Random) -> list[str]:
    values: dict[str, str] = {}
    for text in texts:
        for name in placeholders(text):
            if name in values:
                continue
            base = slot_base(name)
            used = {v for k, v in values.items() if slot_base(k) == base}
            choices = [v for v in slots[base] if v not in used] or slots[base]
            values[name] = rng.choice(choices)
    return [text.format(**values) for text in texts]


def generate(spec: GeneratorSpec, source: str = "generator") -> list[dict[str, Any]]:
    """Generate `spec.count` rows `{"input", "target", "meta"}` deterministically from `spec.seed`."""
    rng = random.Random(spec.seed)
    order = [i % len(spec.classes) for i in range(spec.count)]
    rng.shuffle(order)
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for class_index in order:
        cls = spec.classes[class_index]
        for _ in range(MAX_TRIES):
            template_index = rng.randrange(len(cls.templates))
            text, target = _fill([cls.templates[template_index], cls.target], spec.slots, rng)
            text = f"{spec.prefix}{text[:1].upper()}{text[1:]}{spec.suffix}"
            if text not in seen:
                break
        else:
            raise BenchmarkError(f"{source}: cannot make {spec.count} distinct inputs; "
                                 f"add templates or vocabulary, or lower 'count' (made {len(rows)})")
        seen.add(text)
        rows.append({"input": text, "target": target,
                     "meta": {"class": class_index, "template": template_index}})
    return rows
