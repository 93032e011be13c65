"""Confirmation of a validation decision on fresh tasks (`acceptance.confirm`).

The candidate that wins on the validation split was picked as the best of several on those very
tasks, and the split is reused round after round: its measured gain is biased upward (a one-line
edit can pass the noise band on 60 tasks by luck). Before such a decision is taken, it is taken
again on the validation tasks pooled with fresh ones: a seeded sample of up to `confirm_tasks`
evolve tasks outside this round's analyst batch (the proposer was not shown them this round), the
same sample for the incumbent and every candidate of the round. The rules are acceptance's own
(guards, noise band, cost rule, objective); the floor stays a validation rule (its reference,
the best-ever score, is a validation score). A candidate that is not admissible on the pooled
tasks is vetoed: acceptance refuses it with the pooled reason and the next admissible candidate
takes its place (the allocator asks for the confirmation as part of qualifying a candidate, so it
never stops a candidate for being worse than one that fails it).
"""

from __future__ import annotations

from typing import Any

from evolve.bench.task import Task
from evolve.loop.context import RoundContext
from evolve.selection import acceptance


def fresh_tasks(ctx: RoundContext, batch: list[Task]) -> list[Task]:
    """Up to `confirm_tasks` evolve tasks outside the analyst's batch (seeded per round; none when
    acceptance does not decide on the validation split or confirmation is off)."""
    acc = ctx.sel.acceptance
    if not acc.confirm or acc.greedy or acc.split != "validation" or "evolve" not in ctx.benchmark.splits:
        return []
    shown = {task.id for task in batch}
    pool = [task for task in ctx.benchmark.split("evolve") if task.id not in shown]
    return ctx.rng("confirm").sample(pool, min(acc.confirm_tasks, len(pool)))


class Confirmer:
    """Confirms candidates of one round against the incumbent on validation ∪ fresh tasks (memoized)."""

    def __init__(self, ctx: RoundContext, fresh: list[Task], incumbent: Any, evaluation: Any) -> None:
        self.ctx, self.fresh, self.incumbent = ctx, fresh, incumbent
        self.evaluation = evaluation
        """`evaluation(candidate_id, records)`: an acceptance Evaluation of stored rollouts."""
        self.vetoes: dict[str, str] = {}
        self.stats: dict[str, dict[str, Any]] = {}

    @property
    def enabled(self) -> bool:
        return bool(self.fresh)

    async def confirm(self, cid: str, harness: Any, validation_records: list[Any],
                      incumbent_records: list[Any], validation_tasks: list[Task]) -> bool:
        """True when `cid` stays admissible on the pooled tasks; else a veto is recorded."""
        if not self.fresh or cid in self.stats or cid in self.vetoes:
            return cid not in self.vetoes
        ctx, oracle, bench = self.ctx, self.ctx.oracle, self.ctx.benchmark
        need = oracle.missing(self.incumbent, bench, "evolve", self.fresh) + oracle.missing(harness, bench, "evolve",
                                                                                          self.fresh)
        if oracle.budget_left is not None and need > oracle.budget_left:
            self.vetoes[cid] = (f"not confirmed: {need} rollouts on {len(self.fresh)} fresh evolve tasks needed, "
                                f"{oracle.budget_left} left")
            return False
        inc_fresh = await oracle.evaluate(self.incumbent, bench, "evolve", self.fresh,
                                          candidate_id=ctx.state.incumbent_id)
        cand_fresh = await oracle.evaluate(harness, bench, "evolve", self.fresh, candidate_id=cid)
        tasks = [*validation_tasks, *self.fresh]
        ids = [task.id for task in tasks]
        gold = {task.id: task.target for task in tasks} if bench.labels else None
        no_floor = ctx.sel.model_copy(update={"acceptance": ctx.sel.acceptance.model_copy(update={"floor": False})})
        cand = self.evaluation(cid, [*validation_records, *cand_fresh])
        inc = self.evaluation(ctx.state.incumbent_id, [*incumbent_records, *inc_fresh])
        objective, reason = acceptance.assess(cand, inc, task_ids=ids, gold=gold, best_ever=0.0, cfg=no_floor,
                                              rng=ctx.rng(f"confirm:{cid}"))
        fresh_ids = [task.id for task in self.fresh]
        fresh_ds = acceptance.score(cand, fresh_ids) - acceptance.score(inc, fresh_ids)
        self.stats[cid] = {"fresh_tasks": len(self.fresh), "pooled_tasks": len(ids), "dS_fresh": fresh_ds,
                           "dS_pooled": acceptance.score(cand, ids) - acceptance.score(inc, ids),
                           "objective_pooled": objective, "confirmed": objective is not None}
        if objective is None:
            self.vetoes[cid] = (f"not confirmed on validation + {len(self.fresh)} fresh evolve tasks "
                                f"(ΔS there {fresh_ds:+.3f}): {reason}")
            return False
        return True
