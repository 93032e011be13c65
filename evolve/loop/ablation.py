"""Leave-one-out ablation of accepted edits (the pruner's second half).

Every round, the accepted candidate (not accepted in this round) whose ablation is the oldest
(never ablated first) is left out of the incumbent and the result is compared with the incumbent,
paired, on the acceptance split. The left-out edits are pruned when they are

- too small: the ablation is not worse than the incumbent beyond the noise band
  (`pruner.should_prune`) and not costlier than it, or
- too expensive: what they add does not pay for their policy tokens under the cost rule
  (ΔC_edit > β0 + β1·ΔS_edit, with ΔS_edit and ΔC_edit the incumbent's gain and relative cost over
  the ablation),

and the ablation passes the guards. An ablation that is clearly needed stops early (the paired
upper bound of its ΔS is below −δ and the edits pay for their tokens).

With `acceptance.pooled_rules`, when the round's decisions pool the validation tasks with fresh
evolve tasks (`evolve.loop.pooled`), so does the pruner's, on the round's same fresh tasks: the
guards are judged on validation, and the noise band, ΔS and ΔC_edit on the pooled tasks. An edit
set is then removed by the evidence it was accepted on, not by the wider band of validation alone.
When the budget cannot pay for the fresh tasks, the edits are kept. Stopping early as clearly
needed stays a validation verdict (it keeps the edits, the side a doubt should fall on).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from evolve.harness import Edit, Harness
from evolve.loop import pruner
from evolve.loop.allocation import acceptance_tasks, evaluation
from evolve.loop.context import RoundContext
from evolve.loop.drafting import edit_dicts
from evolve.loop.oracle import rewards_by_task, summarize
from evolve.loop.pooled import Pool, floor_off, fresh_tasks
from evolve.selection import acceptance, bandit
from evolve.selection.acceptance import cost_change
from evolve.selection.early import mean_bounds, noise_band


def _pick(ctx: RoundContext) -> str | None:
    """The accepted candidate (not accepted this round) ablated longest ago, never-ablated first."""
    st = ctx.state
    chain = [cid for cid in st.accepted_chain
             if not cid.startswith(f"{ctx.run_id}.{ctx.t}.") and not cid.rsplit(".", 1)[-1].startswith("p")]
    if not chain:
        return None
    return min(chain, key=lambda cid: (st.ablated.get(cid, -1), chain.index(cid)))


async def prune(ctx: RoundContext, batch: list) -> None:
    """Ablate one accepted candidate of the chain (see module docstring); `batch` is the round's
    analyst batch (the fresh tasks of a pooled decision are drawn outside it)."""
    st = ctx.state
    removed = _pick(ctx)
    if removed is None:
        return
    chain = [[Edit.model_validate(e) for e in edit_dicts(ctx, cid)] for cid in st.accepted_chain]
    index = st.accepted_chain.index(removed)
    harness, _ = pruner.replay(ctx.parts.seed_harness, chain, skip=index)
    incumbent = ctx.harness(st.incumbent_id)
    st.ablated[removed] = ctx.t
    if harness.version == incumbent.version:
        return
    cid = f"{ctx.run_id}.{ctx.t}.p0"
    undo = [Edit(op="remove", component=e.component, target=e.target, origin="pruner",
                 hypothesis=f"ablation: drop the edits of {removed}") for e in chain[index]]
    ctx.store.add_candidate(cid, ctx.run_id, harness, parent_id=st.incumbent_id, round=ctx.t, slot=100,
                            status="pending", origin="pruner", edits=undo, meta={"ablates": removed})
    await _try(ctx, cid, harness, incumbent, removed, batch)


async def _try(ctx: RoundContext, cid: str, harness: Harness, incumbent: Harness, removed: str,
               batch: list) -> None:
    st = ctx.state
    split, tasks = acceptance_tasks(ctx, batch)
    by_id = {task.id: task for task in tasks}
    harnesses = {cid: harness, st.incumbent_id: incumbent}
    left = ctx.oracle.budget_left
    if left is not None and ctx.oracle.missing(incumbent, ctx.benchmark, split, tasks) + len(tasks) > left:
        ctx.store.update_candidate(cid, status="rejected_budget", reason="ablation skipped: budget")
        return

    async def evaluate(who: str, ids: list[str]) -> dict[str, float]:
        records = await ctx.oracle.evaluate(harnesses[who], ctx.benchmark, split, [by_id[i] for i in ids],
                                            candidate_id=who)
        return {k: sum(v) / len(v) for k, v in rewards_by_task(records).items()}

    inc = await ctx.oracle.evaluate(incumbent, ctx.benchmark, split, tasks, candidate_id=st.incumbent_id)
    inc_rewards = {k: sum(v) / len(v) for k, v in rewards_by_task(inc).items()}
    z = bandit._z(ctx.sel.allocator.confidence)

    async def needed(who: str, seen: list[str]) -> str | None:
        records = await ctx.oracle.evaluate(harness, ctx.benchmark, split, [by_id[i] for i in seen], candidate_id=who)
        d = np.array([r.reward - inc_rewards[r.task_id] for r in records], dtype=float)
        _, _, high = mean_bounds(d, len(tasks), z)
        band = noise_band(d, len(tasks), ctx.sel.acceptance)
        dc_edit = cost_change(summarize(inc)["policy_tokens"] or 0.0, summarize(records)["policy_tokens"] or 0.0,
                                ctx.sel.acceptance.cost_scale)
        pays = dc_edit <= ctx.sel.acceptance.beta0 + ctx.sel.acceptance.beta1 * -high
        return f"the edits are needed: ablation ΔS upper bound {high:+.3f} < −δ {-band:.3f}" \
            if high < -band and pays and len(seen) >= 8 else None

    alloc = await bandit.allocate(ctx.sel, [cid], st.incumbent_id, list(by_id), evaluate, ctx.ledger,
                                  ctx.rng("prune"), known={st.incumbent_id: inc_rewards}, screen=needed, charge=False)
    if cid not in alloc.survivors:
        reason = f"kept {removed}: " + (alloc.dropped.get(cid) or alloc.reason)
        ctx.store.add_decision(ctx.run_id, cid, ctx.t, False, reason, {"rule": "prune", **alloc.estimates[cid]},
                               kind="prune")
        ctx.store.update_candidate(cid, status="rejected_budget" if cid in alloc.budget_cut else
                                   "rejected_acceptance", reason=reason)
        return
    abl = await ctx.oracle.evaluate(harness, ctx.benchmark, split, tasks, candidate_id=cid)
    labels = ctx.benchmark.labels
    val = (evaluation(cid, abl, 0, labels), evaluation(st.incumbent_id, inc, 0, labels), tasks)
    _decide(ctx, cid, removed, val, await _pooled(ctx, (cid, harness, abl), (st.incumbent_id, incumbent, inc),
                                                  tasks, batch))


Judged = tuple[acceptance.Evaluation, acceptance.Evaluation, list]
"""(ablation, incumbent, tasks) of one decision."""


async def _pooled(ctx: RoundContext, ablated: tuple, kept: tuple, tasks: list, batch: list) -> Judged | str | None:
    """The decision's evidence on validation pooled with the round's fresh tasks, from the ablation's
    and the incumbent's (id, harness, validation records); None when the round pools no fresh tasks,
    why not when the budget cannot pay for them."""
    fresh = fresh_tasks(ctx, batch) if ctx.sel.acceptance.pooled_rules else []
    if not fresh:
        return None
    labels = ctx.benchmark.labels
    cid, harness, records = ablated
    pool = Pool(ctx, fresh, tasks, kept[1], kept[2], lambda who, rs: evaluation(who, rs, 0, labels))
    abl = await pool.extend(cid, harness, records)
    if abl is None:
        return pool.short[cid]
    return abl, await pool.incumbent_eval(), [*tasks, *fresh]


def _decide(ctx: RoundContext, cid: str, removed: str, val: Judged, pooled: Judged | str | None) -> None:
    st, acc = ctx.state, ctx.sel.acceptance
    abl, inc, tasks = val
    stats = _stats(ctx, *val, cfg=ctx.sel)
    on_pooled = isinstance(pooled, tuple) and not stats.get("guards")
    if on_pooled:
        stats = {**_stats(ctx, *pooled, cfg=floor_off(ctx.sel)), "split": "validation+evolve",
                 "fresh_tasks": len(pooled[2]) - len(tasks),
                 "validation": {"dS": stats["dS"], "delta": stats["delta"], "n_tasks": stats.get("n_tasks")}}
        abl_t, inc_t = pooled[0].tokens_per_task, pooled[1].tokens_per_task
    else:
        abl_t, inc_t = abl.tokens_per_task, inc.tokens_per_task
    dc_edit = cost_change(inc_t, abl_t, acc.cost_scale)
    keep, why = pruner.prune_verdict(stats["dS"], stats["delta"], dc_edit, stats.get("guards") or [], acc)
    if isinstance(pooled, str) and keep:
        keep, why = False, f"not decided on fresh tasks: {pooled} (validation alone: {why})"
    elif on_pooled:
        why += f" (on validation + {stats['fresh_tasks']} fresh evolve tasks)"
    ds = stats["dS"]
    reason = (f"pruned {removed}: " if keep else f"kept {removed}: ") + why
    stats.update(rule="prune", dC_edit=dc_edit)
    ctx.store.add_decision(ctx.run_id, cid, ctx.t, keep, reason, stats, kind="prune")
    score = acceptance.score(abl, [task.id for task in tasks])
    ctx.store.update_candidate(cid, status="accepted" if keep else "rejected_acceptance", reason=reason,
                               val_score=score, delta=ds, policy_tokens=abl.tokens_per_task)
    if keep:
        ctx.store.update_candidate(removed, status="pruned", reason=f"removed by ablation {cid}")
        st.accepted_chain = [c for c in st.accepted_chain if c != removed] + [cid]
        st.incumbent_id, st.incumbent_score = cid, score
        for h in st.history:
            if h.candidate_id == removed:
                h.verdict = "pruned"


def _stats(ctx: RoundContext, abl: acceptance.Evaluation, inc: acceptance.Evaluation, tasks: list,
           cfg: Any) -> dict[str, Any]:
    """Acceptance's statistics of the ablation against the incumbent on `tasks` (ΔS, δ, guards)."""
    gold = {task.id: task.target for task in tasks} if ctx.benchmark.labels else None
    result = acceptance.select([abl], inc, task_ids=[task.id for task in tasks], gold=gold,
                               best_ever=ctx.state.best_ever or 0.0, cfg=cfg, rng=ctx.rng("prune"))
    return dict(result.decisions[0].stats)
