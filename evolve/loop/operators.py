"""Programmatic operators: proposals that need no LLM.

A weak proposer model (the embedded 135M default) rarely writes useful edits; these operators make
the loop evolve something real anyway, and every draft states an honest hypothesis:

- `fewshot`: label-balanced demonstrations from the benchmark's demo pool (DSPy-style bootstrap):
  adds examples of the least represented labels, or replaces an example of an over-represented one;
- `control`: samples 1→3/5 with majority vote, max_tokens up or down, greedy decoding, the answer
  extraction mode;
- `section_removal`: drops one system section (those in the prune set first);
- `skill_merge`: merges two skills into one.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from evolve.errors import EditError
from evolve.harness import Edit, Harness, apply_edits
from evolve.loop.config import OPERATOR_NAMES
from evolve.loop.novelty import novelty_key
from evolve.loop.proposer import Draft, ProposerContext

Proposal = list[Edit]
MAX_EXAMPLES = 8
"""The few-shot operator stops adding (and only rebalances) beyond this many examples."""
_MODES = {"full": "the whole output", "first_line": "the first non-empty line", "last_line": "the last non-empty line"}


def _snippet(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class OperatorProposer:
    """Proposer made of programmatic operators (see module docstring); implements `Proposer`."""

    def __init__(self, demo_tasks: Sequence[Any], labels: Sequence[str] | None = (),
                 operators: Sequence[str] = OPERATOR_NAMES, max_examples: int = MAX_EXAMPLES) -> None:
        self.demo_tasks = list(demo_tasks)
        self.labels = tuple(labels or ())
        self.operators = [o for o in operators if o in OPERATOR_NAMES]
        self.max_examples = max_examples
        self._generators: dict[str, Callable[[ProposerContext, random.Random], Iterator[Proposal]]] = {
            "fewshot": self._fewshot, "control": self._control,
            "section_removal": self._section_removal, "skill_merge": self._skill_merge,
        }

    # -- choosing --------------------------------------------------------------------------------

    async def propose(self, ctx: ProposerContext, n: int, rng: random.Random) -> list[Draft]:
        """Up to `n` drafts from different operators where possible (few-shot first when it applies)."""
        pools = {name: self._valid(ctx, self._generators[name](ctx, rng)) for name in self.operators}
        order = [o for o in self.operators if o != "fewshot"]
        rng.shuffle(order)
        if "fewshot" in self.operators:
            order.insert(0, "fewshot")
        drafts: list[Draft] = []
        seen: set[str] = set()
        while len(drafts) < n and any(pools[o] for o in order):
            for name in order:
                while pools[name] and len(drafts) < n:
                    version, edits = pools[name].pop(rng.randrange(len(pools[name])))
                    if version not in seen:
                        seen.add(version)
                        drafts.append(Draft(edits=edits, origin=name))
                        break
        return drafts

    def _valid(self, ctx: ProposerContext, proposals: Iterator[Proposal]) -> list[tuple[str, Proposal]]:
        """Proposals within budget that apply, change the harness, and repeat nothing banned or tried."""
        banned = set(ctx.banned)
        tried = {(h.component, h.op, h.target, h.hypothesis) for h in ctx.history}
        valid = []
        for edits in proposals:
            if not edits or len(edits) > ctx.budget:
                continue
            if any(novelty_key(e) in banned or (e.component, e.op, e.target, e.hypothesis) in tried for e in edits):
                continue
            try:
                harness = apply_edits(ctx.incumbent, edits)
            except EditError:
                continue
            if harness.version != ctx.incumbent.version:
                valid.append((harness.version, edits))
        return valid

    # -- few-shot bootstrap ----------------------------------------------------------------------

    def _label(self, output: str) -> str | None:
        value = output.strip().casefold()
        return next((lab for lab in self.labels if lab.casefold() == value), None)

    @staticmethod
    def _output(h: Harness, target: str) -> str:
        if h.control.answer.mode == "json_field" and h.control.answer.pattern:
            return json.dumps({h.control.answer.pattern: target})
        return target

    def _example_edit(self, h: Harness, task: Any, op: str = "add", index: int | None = None,
                      why: str = "") -> Edit:
        label = f"labelled '{task.target}'" if self.labels else "with its answer"
        hypothesis = (f"A demonstration from the demo pool {label} ({_snippet(task.input)}) shows the model the "
                      f"task and the exact answer format{why}.")
        return Edit(op=op, component="example", target=None if index is None else str(index),
                    value={"input": task.input, "output": self._output(h, task.target)},
                    hypothesis=hypothesis, origin="fewshot")

    def _fewshot(self, ctx: ProposerContext, rng: random.Random) -> Iterator[Proposal]:
        h = ctx.incumbent
        used = {e.input for e in h.examples}
        pool = [t for t in self.demo_tasks if t.input not in used and (not self.labels or self._label(t.target))]
        if not pool:
            return
        rng.shuffle(pool)
        if not self.labels:
            room = max(0, min(ctx.budget, self.max_examples - len(h.examples)))
            for start in range(0, min(len(pool), 4 * max(room, 1)), max(room, 1)):
                if room:
                    yield [self._example_edit(h, t) for t in pool[start:start + room]]
            return
        by_label: dict[str, list[Any]] = {}
        for t in pool:
            by_label.setdefault(self._label(t.target) or "", []).append(t)
        counts = Counter(self._label(e.output) for e in h.examples)
        for _ in range(4):
            yield from self._balanced(h, ctx.budget, by_label, counts, rng)

    def _balanced(self, h: Harness, budget: int, by_label: dict[str, list[Any]], counts: Counter,
                  rng: random.Random) -> Iterator[Proposal]:
        available = [lab for lab in self.labels if by_label.get(lab)]
        if not available:
            return
        least = sorted(available, key=lambda lab: (counts.get(lab, 0), rng.random()))
        most = max(self.labels, key=lambda lab: (counts.get(lab, 0), lab))
        if counts.get(most, 0) - counts.get(least[0], 0) >= 2:
            index = next(i for i, e in enumerate(h.examples) if self._label(e.output) == most)
            task = rng.choice(by_label[least[0]])
            yield [self._example_edit(h, task, "replace", index,
                                      f", replacing one of {counts[most]} examples labelled '{most}' to balance "
                                      f"the labels")]
            return
        room = max(0, min(budget, self.max_examples - len(h.examples)))
        picks = self._label_picks(available, counts, room, rng)
        tasks, seen = [], set()
        for lab in picks:
            options = [t for t in by_label[lab] if t.input not in seen]
            if options:
                task = rng.choice(options)
                seen.add(task.input)
                tasks.append(task)
        if tasks:
            yield [self._example_edit(h, t, why=", keeping the labels balanced") for t in tasks]

    @staticmethod
    def _label_picks(available: list[str], counts: Counter, room: int, rng: random.Random) -> list[str]:
        """Labels to add, least represented first; the prefix that leaves the most balanced set
        (the longest among equally balanced ones)."""
        current = {lab: counts.get(lab, 0) for lab in available}
        picks, best, best_len = [], None, 0
        for _ in range(room):
            lab = min(available, key=lambda x: (current[x], rng.random()))
            current[lab] += 1
            picks.append(lab)
            spread = max(current.values()) - min(current.values())
            if best is None or spread <= best:
                best, best_len = spread, len(picks)
        return picks[:best_len]

    # -- control mutations -----------------------------------------------------------------------

    def _control(self, ctx: ProposerContext, rng: random.Random) -> Iterator[Proposal]:
        c = ctx.incumbent.control

        def set_(field: str, value: Any, why: str) -> Edit:
            return Edit(op="set", component="control", target=field, value=value, hypothesis=why, origin="control")

        if c.samples == 1:
            for k in (3, 5):
                vote = set_("samples", k, f"Majority vote over {k} samples corrects unstable single answers "
                                          f"(costs {k}x the policy tokens).")
                edits = [vote]
                if c.temperature == 0:
                    edits.append(set_("temperature", 0.7, f"Sampling at temperature 0.7 makes the {k} voted samples "
                                                          f"differ (identical greedy samples cannot vote)."))
                if c.vote != "majority":
                    edits.append(set_("vote", "majority", f"Majority voting over the {k} samples (instead of taking "
                                                          f"the first) is what makes them useful."))
                yield edits
        else:
            yield [set_("samples", 1, f"One sample instead of {c.samples} cuts policy tokens; tests whether the "
                                      f"vote is worth its cost.")]
        if ctx.incumbent.examples:
            other = "system" if c.examples_as == "turns" else "turns"
            where = "inside the system prompt" if other == "system" else "as earlier chat turns"
            yield [set_("examples_as", other, f"Showing the few-shot examples {where} may let this model use them "
                                              f"(small models react differently to in-prompt lists and to turns).")]
        if c.max_tokens < 1024:
            yield [set_("max_tokens", min(1024, c.max_tokens * 2),
                        f"Answers may be cut off before the final answer; max_tokens {c.max_tokens}→"
                        f"{min(1024, c.max_tokens * 2)} leaves room (more tokens when used).")]
        if c.max_tokens > 16:
            yield [set_("max_tokens", max(8, c.max_tokens // 2),
                        f"Answers are short; max_tokens {c.max_tokens}→{max(8, c.max_tokens // 2)} stops rambling "
                        f"and cuts policy tokens.")]
        if c.temperature > 0 and c.samples == 1:
            yield [set_("temperature", 0.0, "Greedy decoding is more reliable than sampling for a single answer.")]
        for mode, what in _MODES.items():
            if mode != c.answer.mode:
                yield [set_("answer.mode", mode, f"Extracting {what} as the answer may parse the model's outputs "
                                                 f"better than mode '{c.answer.mode}'.")]

    # -- removal and merge -----------------------------------------------------------------------

    def _section_removal(self, ctx: ProposerContext, rng: random.Random) -> Iterator[Proposal]:
        pruned = {e.target for p in ctx.prune if p.component == "system" for e in p.edits}
        sections = sorted(ctx.incumbent.system, key=lambda s: (s.name not in pruned, rng.random()))
        for s in sections:
            note = " (it is in the prune set: no recent gain)" if s.name in pruned else ""
            yield [Edit(op="remove", component="system", target=s.name, origin="section_removal",
                        hypothesis=f"Section '{s.name}' may not help this model{note}; removing it shortens the "
                                   f"prompt by {len(s.text)} characters and tests whether it is needed.")]

    def _skill_merge(self, ctx: ProposerContext, rng: random.Random) -> Iterator[Proposal]:
        skills = list(ctx.incumbent.skills)
        pairs = [(a, b) for i, a in enumerate(skills) for b in skills[i + 1:]]
        rng.shuffle(pairs)
        for a, b in pairs:
            description = f"{a.description} {b.description}"[:1024]
            why = (f"Merging skills '{a.name}' and '{b.name}' into one removes overlapping instructions (a shorter "
                   f"prompt) while keeping both procedures.")
            yield [Edit(op="replace", component="skill", target=a.name, origin="skill_merge", hypothesis=why,
                        value={"description": description, "body": f"{a.body}\n\n{b.body}"}),
                   Edit(op="remove", component="skill", target=b.name, origin="skill_merge", hypothesis=why)]
