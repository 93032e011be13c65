"""Programmatic operators for agent harnesses (no LLM), so a weak proposer still evolves the agent loop.

They propose only for harnesses that run a multi-turn loop (more than one turn, or tools); for
single-turn harnesses they yield nothing and leave the other operators' draws unchanged.

- `flow`: switch one `control.flow` setting: verify-before-answer, plan-then-act, retry-on-tool-error;
- `memory`: notes across turns or across the tasks of a batch, and the update policy;
- `context`: what is dropped when the context fills (truncate or summarize old observations) and its
  token budget;
- `skill_disclosure`: skills inlined in the prompt or listed and loaded on request (the token cost
  decides).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

from evolve.harness import Edit
from evolve.loop.proposer import ProposerContext

Proposal = list[Edit]
Generator = Callable[[ProposerContext, random.Random], Iterator[Proposal]]


def _set(component: str, target: str, value: Any, why: str, origin: str) -> Edit:
    return Edit(op="set", component=component, target=target, value=value, hypothesis=why, origin=origin)


def flow(ctx: ProposerContext, rng: random.Random) -> Iterator[Proposal]:
    """One control-flow switch per proposal."""
    h = ctx.incumbent
    if not h.agentic:
        return
    f = h.control.flow
    yield [_set("control", "flow.verify_before_answer", not f.verify_before_answer,
                "Asking the agent to check its work (e.g. run the tests) before it answers catches wrong fixes "
                "that look done." if not f.verify_before_answer else
                "The verification round costs a turn and tokens on every task; test whether it still pays.", "flow")]
    yield [_set("control", "flow.plan_then_act", not f.plan_then_act,
                "A short plan before the first tool call keeps multi-step tasks on track." if not f.plan_then_act
                else "The planning turn costs tokens; test whether acting directly does as well.", "flow")]
    retry = 1 if f.retry_on_tool_error == 0 else 0
    yield [_set("control", "flow.retry_on_tool_error", retry,
                "An extra turn with a hint after a failed tool call lets the agent fix a malformed call instead of "
                "running out of turns." if retry else
                "Extra turns after tool errors cost tokens; test whether they are needed.", "flow")]


def memory(ctx: ProposerContext, rng: random.Random) -> Iterator[Proposal]:
    """Turn notes on (per task or shared by a batch), off, or change how they are updated."""
    h = ctx.incumbent
    if not h.agentic:
        return
    m = h.memory
    if m.scope == "off":
        yield [_set("memory", "scope", "turns", "Notes the agent keeps across its turns (findings, what it tried) "
                                                "survive when old observations are shortened.", "memory")]
        yield [_set("memory", "scope", "batch", "Notes shared across the tasks of a batch let a lesson learned on "
                                                "one task (a convention, a pitfall) help the next ones.", "memory")]
        return
    other = "batch" if m.scope == "turns" else "turns"
    yield [_set("memory", "scope", other, f"Notes scoped to {other} instead of {m.scope} may carry the right "
                                          f"information for this task family.", "memory")]
    yield [_set("memory", "scope", "off", "The notes cost tokens in every request; test whether they help.",
                "memory")]
    update = "replace" if m.update == "append" else "append"
    yield [_set("memory", "update", update, f"Updating notes by {update} keeps the notebook "
                                            f"{'short and current' if update == 'replace' else 'complete'}.",
                "memory")]


def context(ctx: ProposerContext, rng: random.Random) -> Iterator[Proposal]:
    """Shorten old observations when the context fills, or change the budget."""
    h = ctx.incumbent
    if not h.agentic:
        return
    c = h.context
    if c.strategy == "keep":
        for strategy, how in (("summarize", "cut to their first and last lines"), ("truncate", "replaced by a "
                                                                                           "marker")):
            yield [_set("context", "strategy", strategy, f"Old tool observations {how} once the conversation "
                                                         f"passes {c.budget_tokens} tokens keep long tasks within "
                                                         f"the model's context and cut policy tokens.", "context")]
        return
    yield [_set("context", "strategy", "keep", "Shortened observations may hide what the agent needs; test "
                                               "keeping them whole.", "context")]
    for budget in (max(256, c.budget_tokens // 2), min(1_000_000, c.budget_tokens * 2)):
        if budget != c.budget_tokens:
            yield [_set("context", "budget_tokens", budget, f"A context budget of {budget} tokens instead of "
                                                            f"{c.budget_tokens} trades detail for policy tokens.",
                        "context")]


def skill_disclosure(ctx: ProposerContext, rng: random.Random) -> Iterator[Proposal]:
    """Inline skills, or list them and load the body on request."""
    h = ctx.incumbent
    if not h.agentic or not h.skills:
        return
    if h.control.skills_as == "inline":
        chars = sum(len(s.body) for s in h.skills)
        yield [_set("control", "skills_as", "on_request", f"Listing the {len(h.skills)} skill(s) by name and "
                                                          f"description and loading a body only when it applies "
                                                          f"saves about {chars // 4} tokens per request.",
                    "skill_disclosure")]
    else:
        yield [_set("control", "skills_as", "inline", "Inlined skills are always in view: the agent cannot miss "
                                                      "one it would not think to load.", "skill_disclosure")]


AGENT_OPERATORS: dict[str, Generator] = {
    "flow": flow, "memory": memory, "context": context, "skill_disclosure": skill_disclosure,
}
"""Agent operators by name (registered in `evolve.loop.operators.OperatorProposer`)."""
