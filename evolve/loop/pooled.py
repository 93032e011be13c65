"""Decisions on the validation split pooled with fresh evolve tasks (`acceptance.fresh_tasks`).

The validation split is fixed and reused round after round, and each round's winner is the best of
several candidates on those very tasks: an incumbent accepted on it fits the split more than the
task (its validation score runs ahead of its evolve and test scores), so a later candidate that is
truly better shows no gain there, and a lucky one shows a gain it does not have. So every candidate
the allocator evaluated in full on validation and that validation alone does not rule out (a guard,
the floor or a regression there) is decided on more evidence: the validation tasks pooled with a
seeded sample of up to `fresh_tasks` evolve tasks outside this round's analyst batch (the proposer
was not shown them this round), the same sample for the incumbent and every candidate of the round.
The rules are acceptance's own (noise band, cost rule, within-band rules, objective); the floor
stays a validation rule, since its reference, the best-ever score, is a validation score. A
validation winner that is not admissible on the pooled tasks is refused, and a candidate within the
band on validation may be admitted on them. The allocator qualifies a candidate (a leader others
may be dropped against) by the same pooled decision. Fresh rollouts are charged to the budget. With the seed as the cost
rule's anchor (`acceptance.cost_anchor: seed`) the seed is evaluated on the fresh tasks too, and the
incumbent's gain over it is taken on the pooled tasks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evolve.bench.task import Task
from evolve.loop import decision_split
from evolve.loop.context import RoundContext
from evolve.selection import acceptance

VALIDATION_ONLY = ("guard", "floor", "regression")
"""Validation verdicts that stand: the pooled tasks are not asked to overturn them."""


def floor_off(selection: Any) -> Any:
    """`selection` without the floor: a pooled decision's config (the floor stays a validation rule)."""
    return selection.model_copy(update={"acceptance": selection.acceptance.model_copy(update={"floor": False})})


def fresh_tasks(ctx: RoundContext, batch: list[Task]) -> list[Task]:
    """Up to `fresh_tasks` evolve tasks outside the analyst's batch (seeded per round; none when the
    decision is not a validation-split RRSI decision)."""
    n = decision_split.fresh_count(ctx.benchmark, ctx.sel, len(batch))
    if not n:
        return []
    shown = {task.id for task in batch}
    pool = [task for task in ctx.benchmark.split("evolve") if task.id not in shown]
    return ctx.rng("fresh").sample(pool, min(n, len(pool)))


class Pool:
    """The round's pooled decisions: validation records plus rollouts on the fresh tasks."""

    def __init__(self, ctx: RoundContext, fresh: list[Task], validation: list[Task], incumbent: Any,
                 inc_records: list[Any], evaluation: Callable[[str, list[Any]], acceptance.Evaluation],
                 seed_records: list[Any] | None = None) -> None:
        self.ctx, self.fresh, self.incumbent, self.evaluation = ctx, fresh, incumbent, evaluation
        tasks = [*validation, *fresh]
        self.task_ids = [task.id for task in tasks]
        self.gold = {task.id: task.target for task in tasks} if ctx.benchmark.labels else None
        self.inc_records = inc_records
        self.seed_records = seed_records
        """The seed's validation records when it anchors the cost rule (None: the incumbent does)."""
        self._anchor: acceptance.CostAnchor | None = None
        self.cfg = floor_off(ctx.sel)
        self._inc: acceptance.Evaluation | None = None
        self._memo: dict[str, acceptance.Evaluation] = {}
        self.short: dict[str, str] = {}
        """Candidates the budget could not extend to the fresh tasks (why)."""

    @property
    def enabled(self) -> bool:
        return bool(self.fresh)

    def affordable(self, harness: Any) -> int | None:
        """Rollouts still needed to extend `harness` (and the incumbent); None when the budget cannot pay."""
        oracle, bench = self.ctx.oracle, self.ctx.benchmark
        need = oracle.missing(harness, bench, "evolve", self.fresh)
        if self._inc is None:
            need += oracle.missing(self.incumbent, bench, "evolve", self.fresh)
            if self.seed_records is not None:
                need += oracle.missing(self.ctx.parts.seed_harness, bench, "evolve", self.fresh)
        return None if oracle.budget_left is not None and need > oracle.budget_left else need

    async def incumbent_eval(self) -> acceptance.Evaluation:
        if self._inc is None:
            ctx = self.ctx
            fresh = await ctx.oracle.evaluate(self.incumbent, ctx.benchmark, "evolve", self.fresh,
                                              candidate_id=ctx.state.incumbent_id)
            self._inc = self.evaluation(ctx.state.incumbent_id, [*self.inc_records, *fresh])
            if self.seed_records is not None:
                seed = await ctx.oracle.evaluate(ctx.parts.seed_harness, ctx.benchmark, "evolve", self.fresh,
                                                 candidate_id=ctx.seed_id)
                seed_eval = self.evaluation(ctx.seed_id, [*self.seed_records, *seed])
                self._anchor = acceptance.seed_anchor(seed_eval, self._inc, self.task_ids)
        return self._inc

    async def extend(self, cid: str, harness: Any, records: list[Any]) -> acceptance.Evaluation | None:
        """`cid`'s evaluation on the pooled tasks (None when the budget cannot pay for it)."""
        if cid in self._memo:
            return self._memo[cid]
        if self.affordable(harness) is None:
            self.short[cid] = (f"its {len(self.fresh)} fresh evolve tasks need more rollouts than the "
                               f"{self.ctx.oracle.budget_left} left")
            return None
        await self.incumbent_eval()
        fresh = await self.ctx.oracle.evaluate(harness, self.ctx.benchmark, "evolve", self.fresh, candidate_id=cid)
        self._memo[cid] = self.evaluation(cid, [*records, *fresh])
        return self._memo[cid]

    async def objective(self, cid: str, harness: Any, records: list[Any]) -> float | None:
        """The pooled objective when admissible on the pooled tasks, else None."""
        cand = await self.extend(cid, harness, records)
        if cand is None:
            return None
        objective, _, _ = acceptance.assess(cand, await self.incumbent_eval(), task_ids=self.task_ids,
                                            gold=self.gold, best_ever=0.0, cfg=self.cfg,
                                            rng=self.ctx.rng("pooled"), anchor=self._anchor)
        return objective

    async def decide(self, result: acceptance.SelectionResult, harnesses: dict[str, Any],
                     records: dict[str, list[Any]]) -> acceptance.SelectionResult:
        """Take the validation decisions again on the pooled tasks (those validation alone does not rule out)."""
        cands = []
        for d in result.decisions:
            if d.stats.get("rule") in VALIDATION_ONLY:
                continue
            ev = await self.extend(d.candidate_id, harnesses[d.candidate_id], records[d.candidate_id])
            if ev is not None:
                cands.append(ev)
        pooled = acceptance.select(cands, await self.incumbent_eval(), task_ids=self.task_ids, gold=self.gold,
                                   best_ever=0.0, cfg=self.cfg, rng=self.ctx.rng("pooled"),
                                   anchor=self._anchor) if cands else None
        by_id = {d.candidate_id: d for d in pooled.decisions} if pooled else {}
        return acceptance.SelectionResult(
            decisions=[self._merge(d, by_id.get(d.candidate_id)) for d in result.decisions],
            winner_id=pooled.winner_id if pooled else None)

    def _merge(self, val: acceptance.Decision, pooled: acceptance.Decision | None) -> acceptance.Decision:
        alone = {"rule": val.stats.get("rule"), "S": val.stats.get("S"), "dS": val.stats.get("dS"),
                 "delta": val.stats.get("delta"), "n_tasks": val.stats.get("n_tasks"), "reason": val.reason}
        if pooled is None:
            short = self.short.get(val.candidate_id)
            reason = f"{val.reason}; not decided on fresh tasks: {short}" if short else val.reason
            return val.model_copy(update={"accepted": False, "admissible": False if short else val.admissible,
                                          "reason": reason})
        where = f"on validation + {len(self.fresh)} fresh evolve tasks"
        reason = pooled.reason
        for head in ("accepted: ", "admissible but not best: "):
            if reason.startswith(head):
                reason = head + f"{where}: " + reason[len(head):]
                break
        else:
            reason = f"{where}: {reason}"
        reason += f" (validation alone: {val.stats.get('rule')}, ΔS={val.stats.get('dS') or 0.0:+.3f})"
        stats = {**pooled.stats, "split": "validation+evolve", "fresh_tasks": len(self.fresh), "validation": alone}
        return pooled.model_copy(update={"reason": reason, "stats": stats})
