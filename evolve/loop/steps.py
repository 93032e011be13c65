"""The steps of one round that need no allocation: analyst, edit budget, critic, memory.

Each step is a function of the round's `RoundContext` (see context.py); the engine sequences them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evolve.bench.task import Task
from evolve.harness import Harness
from evolve.loop import analyst, budget, repair
from evolve.loop.context import Cand, RoundContext
from evolve.loop.memory import Memory


@dataclass(frozen=True)
class Analysis:
    """The analyst's output: the evidence package, the evolve batch and the incumbent's rollouts on it."""

    evidence: Any
    batch: list[Task]
    records: list[Any]


async def analyse(ctx: RoundContext, incumbent: Harness) -> Analysis:
    """Roll the incumbent out on a seeded evolve batch and digest the results into evidence."""
    tasks = ctx.benchmark.split("evolve")
    rng = ctx.rng("analyst")
    batch = rng.sample(tasks, min(ctx.cfg.evolve_batch, len(tasks)))
    records = await ctx.oracle.evaluate(incumbent, ctx.benchmark, "evolve", batch,
                                        candidate_id=ctx.state.incumbent_id)
    loop = ctx.loop
    evidence = analyst.digest(records, {task.id: task for task in batch}, n_fail=loop.n_fail,
                              n_success=loop.n_success, max_chars=loop.evidence_chars, rng=rng,
                              open_problems=open_problems(ctx))
    return Analysis(evidence, batch, records)


def open_problems(ctx: RoundContext) -> list[str]:
    """The optimization memory's open problems, one short line each (none without memory)."""
    if not (ctx.loop.memory and ctx.state.memory):
        return []
    return [f"[{p.label}] {p.description} ({len(p.attempts)} attempt(s))"
            for p in Memory.model_validate(ctx.state.memory).open_problems()]


def edit_budget(ctx: RoundContext) -> int:
    """b_t of this round: the RRSI cosine schedule, damped by volatility when enabled."""
    loop, st = ctx.loop, ctx.state
    b_t = budget.edit_budget(ctx.t, ctx.cfg.rounds, loop.b_min, loop.b_max)
    if loop.volatility and st.damper:
        b_t = budget.VolatilityDamper.from_json(st.damper).damp(b_t, loop.b_min)
    return b_t


async def critique(ctx: RoundContext, incumbent: Harness, cands: list[Cand]) -> list[Cand]:
    """Critic rejections cost no oracle rollouts and do not count as tried. A rejected model-written
    draft gets one revision from the proposer, reviewed again (see repair.py)."""
    critic = ctx.parts.critic
    if critic is None:
        return cands
    kept: list[Cand] = []
    seen = {incumbent.version, *(c.harness.version for c in cands)}
    queue = list(cands)
    while queue:
        c = queue.pop(0)
        verdict = await critic.review(incumbent, c.harness, c.edits, None)
        ctx.store.add_critique(c.id, verdict.kind, "pass" if verdict.passed else "reject", verdict.reason,
                               verdict.details)
        if c.meta.get("repair_of"):
            repair.note(ctx, c.meta["repair_of"], {"outcome": "passed the critic" if verdict.passed
                                                   else f"rejected again ({verdict.kind}): {verdict.reason}"})
        if verdict.passed:
            kept.append(c)
            continue
        ctx.store.update_candidate(c.id, status="rejected_critic", reason=f"critic ({verdict.kind}): "
                                   f"{verdict.reason}")
        ctx.state.record(ctx.t, c.id, c.edits, "critic_reject", None)
        if repair.repairable(ctx, c, verdict.kind):
            revised = await repair.revise(ctx, incumbent, c, verdict.reason, seen)
            if revised is not None:
                queue.insert(0, revised)
    return kept


def remember(ctx: RoundContext, cands: list[Cand], outcome: dict[str, Any], evidence: Any) -> None:
    """Update the optimization memory: each attempt with its ΔS against this round's incumbent
    (the full decision's ΔS, or the paired mean over the tasks a stopped candidate saw)."""
    if not ctx.loop.memory:
        return
    st = ctx.state
    memory = Memory.model_validate(st.memory) if st.memory else Memory()
    attempts = [{"candidate_id": c.id, "edits": c.edits, "accepted": outcome["accepted"] == c.id,
                 "verdict": _verdict(c, outcome), "delta": outcome["deltas"].get(c.id)}
                for c in cands]
    memory.update(ctx.t, evidence, attempts)
    st.memory = memory.model_dump(mode="json")


def _verdict(c: Cand, outcome: dict[str, Any]) -> str:
    if outcome["accepted"] == c.id:
        return "accepted"
    if c.id in outcome.get("admissible", []):
        return "admissible, not best"
    return "rejected" if c.id in outcome["scores"] else "stopped early"
