"""Programmatic operators: proposals that need no LLM.

A weak proposer model (the embedded 135M default) rarely writes useful edits; these operators make
the loop evolve something real anyway, and every draft states an honest hypothesis:

- `fewshot`: demonstration sets drawn from the benchmark's demo pool (DSPy-style bootstrap): for
  label tasks label-balanced draws of k ∈ {2, 4, 8, 16} (and one or two per label), each draw a
  single `set` edit (one mechanism: which and how many examples), every other one moved to the
  other placement; and, once the incumbent has examples, swaps of one example for another of its label;
- `format`: an answer-format section (the valid labels, or "only the final answer"): a reusable
  guard against rambling and against answers outside the label set;
- `control`: samples 1→3/5 with majority vote, max_tokens up or down, greedy decoding, the answer
  extraction mode (none of these for a harness that answers by choice), the example placement;
- `choice` (label tasks, a policy backend that scores choices): answer by scoring the labels
  (`control.choice`), calibrated by the labels' mean probability over a label-balanced draw of
  unlabeled demo inputs (a reusable guard against collapse onto one label), or uncalibrated; once
  on, a new draw of calibration inputs, or calibration off;
- `calibrated_fewshot` (label tasks, a policy backend that scores choices, a harness that still
  answers by generation): a label-balanced draw of k demonstrations and calibrated choice in one
  candidate. Demonstrations tilt a small model toward one label (the majority-label and recency
  biases contextual calibration was made for), so a draw alone may be refused as a collapse and
  calibration of a zero-shot prompt may take out the wrong bias; proposed together, a run that
  refuses collapsed stepping stones can still reach the pair;
- `section_removal`: drops one system section (those in the prune set first);
- `skill_merge`: merges two skills into one.

Search width: the few-shot operator takes half of the slots; the other operators share the rest,
those that touch a component the stall directive lists as untried first. Untried sizes k come
first, spread over the range, and every other draw also moves the examples to the other placement
(chat turns or the system prompt) when the edit budget allows two edits. Every draw is a new
direction (its bans are keyed on the examples drawn), and a rejected pair bans only that pair, so
the move stays free to pair with the next draws.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from typing import Any

from evolve.errors import EditError
from evolve.harness import Edit, Harness, apply_edits
from evolve.loop.agent_operators import AGENT_OPERATORS
from evolve.loop.config import OPERATOR_NAMES
from evolve.loop.novelty import novelty_key
from evolve.loop.proposer import Draft, ProposerContext

Proposal = list[Edit]
MAX_EXAMPLES = 16
"""The largest demonstration set the few-shot operator draws."""
SIZES = (2, 4, 8, 16)
"""Demonstration set sizes tried (plus one and two per label for label tasks)."""
FORMAT_SECTION = "answer-format"
CALIBRATION_PER_LABEL = 4
"""Calibration inputs drawn per label by the choice operator."""
MAX_CALIBRATION = 24
"""Most calibration inputs the choice operator draws."""
_MODES = {"full": "the whole output", "first_line": "the first non-empty line", "last_line": "the last non-empty line"}
_TOUCHES = {"fewshot": ("example",), "format": ("system",), "control": ("control",), "choice": ("control",),
            "calibrated_fewshot": ("example", "control"),
            "section_removal": ("system",), "skill_merge": ("skill",), "flow": ("control",), "memory": ("memory",),
            "context": ("context",), "skill_disclosure": ("control",)}
"""Components each operator edits (for the stall directive's untried components)."""
_CALIBRATED = ("dividing each label's probability by its mean probability over {n} unlabeled inputs from the demo "
               "pool (label-balanced, first {first}) takes out the bias toward one label that the prompt and its "
               "examples give the model")
_MAX_POOL = 12
"""Most proposals taken from one operator's generator per round."""


def _snippet(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def spread(values: Sequence[int]) -> list[int]:
    """`values` reordered so that every prefix covers the range: the middle first, then the farthest.

    >>> spread([2, 4, 8, 16])
    [8, 2, 16, 4]
    """
    rest = sorted(values)
    if not rest:
        return []
    order = [rest.pop(len(rest) // 2)]
    while rest:
        far = max(rest, key=lambda v: (min(abs(math.log2(v) - math.log2(o)) for o in order), -v))
        rest.remove(far)
        order.append(far)
    return order


class OperatorProposer:
    """Proposer made of programmatic operators (see module docstring); implements `Proposer`."""

    def __init__(self, demo_tasks: Sequence[Any], labels: Sequence[str] | None = (),
                 operators: Sequence[str] = OPERATOR_NAMES, max_examples: int = MAX_EXAMPLES, *,
                 scores_choices: bool = False) -> None:
        self.demo_tasks = list(demo_tasks)
        self.labels = tuple(labels or ())
        self.scores_choices = scores_choices
        """Whether the policy backend scores choices (the `choice` operator proposes nothing otherwise)."""
        self.operators = [o for o in operators if o in OPERATOR_NAMES]
        self.max_examples = max_examples
        self._generators: dict[str, Callable[[ProposerContext, random.Random], Iterator[Proposal]]] = {
            "fewshot": self._fewshot, "format": self._format, "control": self._control, "choice": self._choice,
            "calibrated_fewshot": self._calibrated_fewshot, "section_removal": self._section_removal,
            "skill_merge": self._skill_merge, **AGENT_OPERATORS,
        }

    # -- choosing --------------------------------------------------------------------------------

    async def propose(self, ctx: ProposerContext, n: int, rng: random.Random) -> list[Draft]:
        """Up to `n` drafts: half from the few-shot operator, the rest round-robin over the others."""
        pools = {name: self._valid(ctx, islice(self._generators[name](ctx, rng), _MAX_POOL))
                 for name in self.operators}
        others = [o for o in self.operators if o != "fewshot" and (o not in AGENT_OPERATORS or pools[o])]
        rng.shuffle(others)
        untried = set(ctx.directive.untried) if ctx.directive is not None else set()
        others.sort(key=lambda o: not untried.intersection(_TOUCHES.get(o, ())))
        quota = {"fewshot": math.ceil(n / 2) if pools.get("fewshot") else 0}
        drafts: list[Draft] = []
        seen: set[str] = set()

        def take(name: str) -> bool:
            while pools.get(name):
                version, edits = pools[name].pop(0)
                if version not in seen:
                    seen.add(version)
                    drafts.append(Draft(edits=edits, origin=name))
                    return True
            return False

        while quota["fewshot"] > 0 and len(drafts) < n and take("fewshot"):
            quota["fewshot"] -= 1
        while len(drafts) < n and any(pools.get(o) for o in [*others, "fewshot"]):
            for name in [*others, "fewshot"]:
                if len(drafts) < n:
                    take(name)
        return drafts

    def _valid(self, ctx: ProposerContext, proposals: Iterator[Proposal]) -> list[tuple[str, Proposal]]:
        """Proposals within budget that apply, change the harness, and repeat no banned or recently
        tried candidate (a candidate as a whole: every one of its edits is in the proposal)."""
        banned = [set(g) for g in ctx.banned]
        tried = _tried(ctx)
        valid = []
        for edits in proposals:
            if not edits or len(edits) > ctx.budget:
                continue
            keys, sigs = {novelty_key(e) for e in edits}, {_signature(e) for e in edits}
            if any(g <= keys for g in banned) or any(g <= sigs for g in tried):
                continue
            try:
                harness = apply_edits(ctx.incumbent, edits)
            except EditError:
                continue
            if harness.version != ctx.incumbent.version:
                valid.append((harness.version, edits))
        return valid

    # -- few-shot draws --------------------------------------------------------------------------

    def _label(self, output: str) -> str | None:
        value = output.strip().casefold()
        return next((lab for lab in self.labels if lab.casefold() == value), None)

    @staticmethod
    def _output(h: Harness, target: str) -> str:
        if h.control.answer.mode == "json_field" and h.control.answer.pattern:
            return json.dumps({h.control.answer.pattern: target})
        return target

    def _pool(self) -> list[Any]:
        return [t for t in self.demo_tasks if not self.labels or self._label(t.target)]

    def sizes(self, ctx: ProposerContext) -> list[int]:
        """Set sizes to draw this round: untried sizes first (spread over the range), then the least tried."""
        pool = self._pool()
        options = set(SIZES)
        if len(self.labels) >= 3:
            options |= {len(self.labels), 2 * len(self.labels)}
        options = {k for k in options if k <= min(self.max_examples, len(pool))}
        tried = Counter(int(h.target) for h in ctx.history
                        if h.component == "example" and h.op == "set" and str(h.target or "").isdigit())
        order = spread(sorted(options))
        return sorted(order, key=lambda k: (tried.get(k, 0), order.index(k)))

    def _draw(self, k: int, rng: random.Random) -> list[Any]:
        """k demonstrations: label-balanced (each label ⌊k/L⌋ times, the rest to random labels), shuffled."""
        pool = self._pool()
        if not self.labels:
            return rng.sample(pool, k)
        by_label: dict[str, list[Any]] = {}
        for t in pool:
            by_label.setdefault(self._label(t.target) or "", []).append(t)
        labels = sorted(by_label)
        rng.shuffle(labels)
        counts = dict.fromkeys(labels, k // len(labels))
        for lab in labels[: k % len(labels)]:
            counts[lab] += 1
        picks: list[Any] = []
        for lab in labels:
            picks += rng.sample(by_label[lab], min(counts[lab], len(by_label[lab])))
        rng.shuffle(picks)
        return picks

    def _set_edit(self, h: Harness, tasks: list[Any]) -> Edit:
        kind = "label-balanced " if self.labels else ""
        hypothesis = (f"A {kind}set of {len(tasks)} demonstrations drawn from the demo pool shows the model the task "
                      f"and the exact answer format without tilting it toward one answer.")
        value = [{"input": t.input, "output": self._output(h, t.target)} for t in tasks]
        return Edit(op="set", component="example", target=str(len(tasks)), value=value, hypothesis=hypothesis,
                    origin="fewshot")

    def _placement(self, h: Harness) -> Edit:
        other = "system" if h.control.examples_as == "turns" else "turns"
        where = "inside the system prompt" if other == "system" else "as earlier chat turns"
        return Edit(op="set", component="control", target="examples_as", value=other, origin="fewshot",
                    hypothesis=f"Showing the demonstrations {where} may let this model use them better.")

    def _fewshot(self, ctx: ProposerContext, rng: random.Random) -> Iterator[Proposal]:
        h = ctx.incumbent
        if not self._pool():
            return
        sizes = self.sizes(ctx)
        swaps = self._swaps(ctx, rng) if h.examples else iter(())
        draw = 0
        for _ in range(3):
            for k in sizes:
                edits = [self._set_edit(h, self._draw(k, rng))]
                if ctx.budget >= 2 and draw % 2 == 1:  # every other draw in the other placement
                    edits.append(self._placement(h))
                draw += 1
                yield edits
            yield from islice(swaps, 1)

    def _swaps(self, ctx: ProposerContext, rng: random.Random) -> Iterator[Proposal]:
        """Replace one example by another demonstration of the same label (or any, for open tasks)."""
        h = ctx.incumbent
        used = {e.input for e in h.examples}
        order = list(range(len(h.examples)))
        rng.shuffle(order)
        for index in order:
            label = self._label(h.examples[index].output) if self.labels else None
            options = [t for t in self._pool() if t.input not in used and (not self.labels or
                                                                            self._label(t.target) == label)]
            if not options:
                continue
            task = rng.choice(options)
            yield [Edit(op="replace", component="example", target=str(index), origin="fewshot",
                        value={"input": task.input, "output": self._output(h, task.target)},
                        hypothesis=f"Swapping demonstration {index} for another from the demo pool "
                                   f"({_snippet(task.input)}) tests whether that example helps or misleads.")]

    # -- answer format ---------------------------------------------------------------------------

    def _format(self, ctx: ProposerContext, rng: random.Random) -> Iterator[Proposal]:
        if ctx.incumbent.section(FORMAT_SECTION) is not None:
            return
        if self.labels:
            text = (f"Answer with exactly one of these labels and nothing else: {', '.join(self.labels)}. "
                    f"Do not explain.")
            why = ("Naming the valid labels and asking for the label alone keeps answers parseable and inside "
                   "the label set.")
        else:
            text = "Write only the final answer, with no explanation and no full sentence."
            why = "Asking for the bare answer keeps answers short and parseable."
        yield [Edit(op="add", component="system", target=FORMAT_SECTION, value=text, hypothesis=why,
                    origin="format")]

    # -- answering by choice ---------------------------------------------------------------------

    def _calibration(self, rng: random.Random) -> list[str]:
        """Unlabeled inputs for calibration: a label-balanced draw from the demo pool, up to
        CALIBRATION_PER_LABEL per label (at most MAX_CALIBRATION in all)."""
        per_label = max(1, min(CALIBRATION_PER_LABEL, MAX_CALIBRATION // max(len(self.labels), 1)))
        return [t.input for t in self._draw(per_label * len(self.labels), rng)]

    def _choice_edit(self, calibration: list[str], why: str, origin: str = "choice") -> Edit:
        return Edit(op="set", component="control", target="choice", origin=origin, hypothesis=why,
                    value={"labels": list(self.labels), "calibration": calibration})

    def _scores_labels(self, h: Harness) -> bool:
        """Whether answering `h`'s tasks by scoring the labels is possible here."""
        return self.scores_choices and len(self.labels) >= 2 and not h.agentic and bool(self._pool())

    def _choice(self, ctx: ProposerContext, rng: random.Random) -> Iterator[Proposal]:
        h = ctx.incumbent
        if not self._scores_labels(h):
            return
        current = h.control.choice

        def set_choice(calibration: list[str], why: str) -> Proposal:
            return [self._choice_edit(calibration, why)]

        for _ in range(2):
            calibration = self._calibration(rng)  # the first input names the draw: another draw, another direction
            how = _CALIBRATED.format(n=len(calibration), first=repr(_snippet(calibration[0])))
            if not current.labels:
                yield set_choice(calibration, "Scoring the labels instead of generating keeps every answer inside "
                                              f"the label set, and {how}.")
            else:
                yield set_choice(calibration, f"A new draw of calibration inputs: {how}; the current draw may "
                                              "estimate that bias badly.")
        if not current.labels:
            yield set_choice([], "Scoring the labels instead of generating keeps every answer inside the label set "
                                 "(no calibration).")
        elif current.calibration:
            yield set_choice([], "Without calibration: tests whether dividing out the label prior helps here.")

    def _calibrated_fewshot(self, ctx: ProposerContext, rng: random.Random) -> Iterator[Proposal]:
        """A label-balanced draw of k demonstrations answered by calibrated label scoring (two edits), for
        a harness that still answers by generation; sizes in the few-shot operator's order."""
        h = ctx.incumbent
        if ctx.budget < 2 or h.control.choice.labels or not self._scores_labels(h):
            return
        for _ in range(2):
            for k in self.sizes(ctx):
                examples = self._set_edit(h, self._draw(k, rng)).model_copy(update={"origin": "calibrated_fewshot"})
                calibration = self._calibration(rng)
                how = _CALIBRATED.format(n=len(calibration), first=repr(_snippet(calibration[0])))
                yield [examples, self._choice_edit(
                    calibration, f"Scoring the labels after these {k} demonstrations, {how}: demonstrations alone "
                                 f"may tilt this model toward one label.", origin="calibrated_fewshot")]

    # -- control mutations -----------------------------------------------------------------------

    def _control(self, ctx: ProposerContext, rng: random.Random) -> Iterator[Proposal]:
        c = ctx.incumbent.control

        def set_(field: str, value: Any, why: str) -> Edit:
            return Edit(op="set", component="control", target=field, value=value, hypothesis=why, origin="control")

        if ctx.incumbent.examples:
            yield [self._placement(ctx.incumbent).model_copy(update={"origin": "control"})]
        if c.choice.labels:  # a harness that answers by choice does not generate: decoding settings change nothing
            return
        if c.samples == 1:
            for k in (3, 5):
                edits = [set_("samples", k, f"Majority vote over {k} samples corrects unstable single answers "
                                            f"(costs {k}x the policy tokens).")]
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


def _signature(e: Any) -> tuple[str, str, str | None, str]:
    """What identifies an operator edit in the history: component, op, target and its (constant) hypothesis."""
    return e.component, e.op, None if e.target is None else str(e.target), e.hypothesis


def _tried(ctx: ProposerContext) -> list[set[tuple[str, str, str | None, str]]]:
    """The candidates tried since `ctx.tried_since`, each as the set of its edits' signatures; those
    with a draw of examples are left out (a draw is identified by its examples, which bans key on)."""
    by_candidate: dict[str, list[Any]] = {}
    for h in ctx.history:
        if h.round >= ctx.tried_since:
            by_candidate.setdefault(h.candidate_id, []).append(h)
    return [{_signature(h) for h in entries} for entries in by_candidate.values()
            if not any(h.component == "example" for h in entries)]
