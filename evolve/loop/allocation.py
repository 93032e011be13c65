"""The selection step of a round: paired, acceptance-aware allocation of oracle rollouts, then
acceptance (RRSI Algorithm 2) over every fully evaluated candidate, and the decisions stored.

The allocator stops a candidate for good only on its own evidence (a guard already certain, or no
way left to be admissible: `evolve.selection.early`), and relative to other candidates only when
they are fully evaluated and admissible; so acceptance chooses among all admissible candidates.
When the budget runs out mid-round, the candidates evaluated so far stay in the lineage with a
`budget` verdict and their partial statistics, and the run stops after the round.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evolve.bench.stats import answer_label
from evolve.bench.task import Task
from evolve.harness import Harness
from evolve.loop import bans, budget, decision_split, novelty
from evolve.loop.context import Cand, RoundContext
from evolve.loop.oracle import rewards_by_task, summarize
from evolve.loop.pooled import VALIDATION_ONLY, Pool, fresh_tasks
from evolve.loop.surrogates import candidate_text
from evolve.selection import acceptance, bandit
from evolve.selection.early import Partial, early_verdict


def evaluation(cid: str, records: list[Any], novelty_value: int,
               labels: Sequence[str] | None = None) -> acceptance.Evaluation:
    """An acceptance Evaluation from stored rollouts (rewards, tokens, predictions, parse and crash rates).

    With the benchmark's `labels`, a prediction is the label the verifier reads in it.
    """
    first = {}
    parsed: dict[str, list[float]] = {}
    crashed: dict[str, list[float]] = {}
    for r in records:
        first.setdefault(r.task_id, r)
        parsed.setdefault(r.task_id, []).append(1.0 if r.parsed else 0.0)
        crashed.setdefault(r.task_id, []).append(1.0 if r.error else 0.0)
    s = summarize(records)
    return acceptance.Evaluation(
        candidate_id=cid, rewards=rewards_by_task(records), tokens_per_task=s["policy_tokens"] or 0.0,
        novelty=novelty_value, predictions={k: (answer_label(r.prediction, labels) if r.parsed else None)
                                              for k, r in first.items()},
        parse_rate=s.get("parse_rate", 1.0), crash_rate=s.get("crash_rate", 0.0),
        parsed_tasks={k: sum(v) / len(v) for k, v in parsed.items()},
        crashed_tasks={k: sum(v) / len(v) for k, v in crashed.items()})


def acceptance_tasks(ctx: RoundContext, evolve_batch: list[Task]) -> tuple[str, list[Task]]:
    """The split acceptance decides on, and its tasks: the analyst's batch for the evolve split, the
    run's decision tasks of the validation split (`decision_split.tasks`)."""
    split = ctx.sel.acceptance.split
    if split == "evolve":
        return split, evolve_batch
    return split, decision_split.tasks(ctx.benchmark, ctx.sel, ctx.cfg)


class _Judge:
    """Callbacks of one allocation: evaluate, screen partial results, qualify full ones."""

    def __init__(self, ctx: RoundContext, incumbent: Harness, cands: list[Cand], split: str,
                 tasks: list[Task], inc_records: list[Any], fresh: list[Task],
                 seed_records: list[Any] | None = None) -> None:
        self.ctx, self.split = ctx, split
        self.inc_eval = evaluation(ctx.state.incumbent_id, inc_records, 0, ctx.benchmark.labels)
        self.by_id = {task.id: task for task in tasks}
        self.task_ids = [task.id for task in tasks]
        self.harnesses = {c.id: c.harness for c in cands} | {ctx.state.incumbent_id: incumbent}
        self.nu = {c.id: novelty.structural_novelty(c.edits, ctx.state.accepted_counts) for c in cands}
        self.gold = {task.id: task.target for task in tasks} if ctx.benchmark.labels else None
        self.z = bandit._z(ctx.sel.allocator.confidence)
        self.pool = Pool(ctx, fresh, tasks, incumbent, inc_records, lambda cid, records: evaluation(
            cid, records, self.nu.get(cid, 0), ctx.benchmark.labels), seed_records)
        self.anchor = None if seed_records is None else acceptance.seed_anchor(
            evaluation(ctx.seed_id, seed_records, 0, ctx.benchmark.labels), self.inc_eval, self.task_ids)

    async def records(self, cid: str, task_ids: list[str]) -> list[Any]:
        return await self.ctx.oracle.evaluate(self.harnesses[cid], self.ctx.benchmark, self.split,
                                              [self.by_id[i] for i in task_ids], candidate_id=cid)

    async def evaluate(self, cid: str, task_ids: list[str]) -> dict[str, float]:
        return {k: sum(v) / len(v) for k, v in rewards_by_task(await self.records(cid, task_ids)).items()}

    async def full(self, cid: str) -> acceptance.Evaluation:
        return evaluation(cid, await self.records(cid, self.task_ids), self.nu.get(cid, 0), self.ctx.benchmark.labels)

    async def screen(self, cid: str, seen: list[str]) -> str | None:
        partial = evaluation(cid, await self.records(cid, seen), self.nu.get(cid, 0), self.ctx.benchmark.labels)
        pooled = len(self.pool.fresh) if self.ctx.sel.acceptance.pooled_rules else 0
        return early_verdict(Partial(partial, self.inc_eval, seen, self.task_ids, pooled, self.anchor), gold=self.gold,
                             best_ever=self.ctx.state.best_ever or 0.0, cfg=self.ctx.sel, z=self.z)

    async def qualify(self, cid: str) -> float | None:
        """The objective of an admissible candidate (decided on the pooled tasks when there are fresh
        ones, see pooled.py), None when it is not admissible."""
        objective, _, rule = acceptance.assess(await self.full(cid), self.inc_eval, task_ids=self.task_ids,
                                               gold=self.gold, best_ever=self.ctx.state.best_ever or 0.0,
                                               cfg=self.ctx.sel, rng=self.ctx.rng("acceptance"), anchor=self.anchor)
        if not self.pool.enabled:
            return objective
        if rule in VALIDATION_ONLY:
            return None
        return await self.pool.objective(cid, self.harnesses[cid], await self.records(cid, self.task_ids))


async def select(ctx: RoundContext, incumbent: Harness, cands: list[Cand], evolve_batch: list[Task]
                 ) -> dict[str, Any]:
    """Allocate oracle rollouts to `cands`, judge the fully evaluated ones, store every decision."""
    st = ctx.state
    split, tasks = acceptance_tasks(ctx, evolve_batch)
    outcome: dict[str, Any] = {"accepted": None, "scores": {}, "partial": {}, "deltas": {}}
    anchored = ctx.sel.acceptance.cost_anchor == "seed" and st.incumbent_id != ctx.seed_id
    missing = ctx.oracle.missing(incumbent, ctx.benchmark, split, tasks)
    if anchored:
        missing += ctx.oracle.missing(ctx.parts.seed_harness, ctx.benchmark, split, tasks)
    if ctx.oracle.budget_left is not None and missing > ctx.oracle.budget_left:
        st.stopped = (f"oracle budget exhausted in round {ctx.t}: the incumbent's {split} evaluation needs "
                      f"{missing} rollouts{' (with the seed, the cost anchor)' if anchored else ''}, "
                      f"{ctx.oracle.budget_left} left")
        _record_unevaluated(ctx, cands, "budget: " + st.stopped)
        st.scores.append(st.incumbent_score or 0.0)
        return outcome
    inc_records = await ctx.oracle.evaluate(incumbent, ctx.benchmark, split, tasks, candidate_id=st.incumbent_id)
    inc_score = summarize(inc_records)["score"]
    st.best_ever = inc_score if st.best_ever is None else st.best_ever
    st.incumbent_score = inc_score
    outcome["scores"][st.incumbent_id] = inc_score
    if not cands:
        st.scores.append(inc_score)
        return outcome
    seed_records = await ctx.oracle.evaluate(ctx.parts.seed_harness, ctx.benchmark, split, tasks,
                                             candidate_id=ctx.seed_id) if anchored else None
    judge = _Judge(ctx, incumbent, cands, split, tasks, inc_records, fresh_tasks(ctx, evolve_batch), seed_records)
    inc_eval = judge.inc_eval
    known = {st.incumbent_id: {k: sum(v) / len(v) for k, v in rewards_by_task(inc_records).items()}}
    alloc = await bandit.allocate(ctx.sel, [c.id for c in cands], st.incumbent_id, judge.task_ids,
                                  judge.evaluate, ctx.ledger, ctx.rng("allocate"), known=known,
                                  screen=None if ctx.sel.allocator.name == "uniform" else judge.screen,
                                  qualify=judge.qualify, charge=False, strata=judge.gold)
    evaluations = [await judge.full(cid) for cid in alloc.survivors]
    for ev in evaluations:
        outcome["scores"][ev.candidate_id] = acceptance.score(ev, judge.task_ids)
    result = acceptance.select(evaluations, inc_eval, task_ids=judge.task_ids, gold=judge.gold,
                               best_ever=st.best_ever, cfg=ctx.sel, rng=ctx.rng("acceptance"), anchor=judge.anchor)
    if judge.pool.enabled:
        result = await judge.pool.decide(result, judge.harnesses,
                                         {cid: await judge.records(cid, judge.task_ids) for cid in alloc.survivors})
    outcome["evaluations"] = {e.candidate_id: e for e in [*evaluations, inc_eval]}
    outcome["allocation"] = alloc.to_dict()
    _record(ctx, cands, result, alloc, outcome)
    if alloc.budget_cut or (ctx.oracle.budget_left is not None and ctx.oracle.budget_left <= 0):
        st.stopped = f"oracle budget exhausted in round {ctx.t}: {alloc.reason}"
    return outcome


def _record_unevaluated(ctx: RoundContext, cands: list[Cand], reason: str) -> None:
    for c in cands:
        ctx.store.add_decision(ctx.run_id, c.id, ctx.t, False, reason, {"rule": "budget"})
        ctx.store.update_candidate(c.id, status="rejected_budget", reason=reason)
        ctx.state.record(ctx.t, c.id, c.edits, "budget", None)


def _partial_stats(alloc: bandit.AllocationResult, cid: str) -> dict[str, Any]:
    est = alloc.estimates.get(cid, {})
    return {"n_tasks": int(est.get("n", 0)), "dS": est.get("mean"), "ci_dS": [est.get("low"), est.get("high")],
            "rollouts": alloc.per_candidate.get(cid, 0)}


def _record(ctx: RoundContext, cands: list[Cand], result: Any, alloc: bandit.AllocationResult,
            outcome: dict[str, Any]) -> None:
    st, decisions = ctx.state, {d.candidate_id: d for d in result.decisions}
    for c in cands:
        if c.id in decisions:
            _record_evaluated(ctx, c, decisions[c.id], result.winner_id == c.id, outcome)
            continue
        budget_cut = c.id in alloc.budget_cut
        why = f"budget: {alloc.reason}" if budget_cut else f"stopped early: {alloc.dropped.get(c.id, alloc.reason)}"
        stats = {"rule": "budget" if budget_cut else "allocation", **_partial_stats(alloc, c.id)}
        ctx.store.add_decision(ctx.run_id, c.id, ctx.t, False, why, stats)
        ctx.store.update_candidate(c.id, status="rejected_budget" if budget_cut else "rejected_acceptance",
                                   reason=why, delta=stats["dS"])
        outcome["deltas"][c.id] = stats["dS"]
        seen = alloc.rewards.get(c.id, {})
        outcome["partial"][c.id] = sum(seen.values()) / len(seen) if seen else None
        st.record(ctx.t, c.id, c.edits, "budget" if budget_cut else "stopped_early", stats["dS"])
        if not budget_cut:
            _ban(ctx, c)
    st.scores.append(st.incumbent_score if st.incumbent_score is not None else 0.0)


def _record_evaluated(ctx: RoundContext, c: Cand, d: Any, accepted: bool, outcome: dict[str, Any]) -> None:
    st = ctx.state
    stats = dict(d.stats)
    delta, ci = stats.get("dS"), stats.get("ci_S") or [None, None]
    ctx.store.add_decision(ctx.run_id, c.id, ctx.t, accepted, d.reason, stats)
    ctx.store.update_candidate(
        c.id, status="accepted" if accepted else "rejected_acceptance", reason=d.reason,
        val_score=outcome["scores"].get(c.id), val_ci_low=ci[0], val_ci_high=ci[1], delta=delta,
        policy_tokens=stats.get("tokens_per_task"))
    outcome["deltas"][c.id] = delta
    outcome.setdefault("admissible", []).extend([c.id] if d.admissible else [])
    st.record(ctx.t, c.id, c.edits, "accepted" if accepted else "rejected", delta)
    st.surrogate_history.append({"text": candidate_text(c.harness), "score": outcome["scores"].get(c.id)})
    if accepted:
        evals = outcome["evaluations"]
        _accept(ctx, c, outcome["scores"][c.id], _per_task_deltas(evals[c.id], evals[st.incumbent_id]))
        outcome["accepted"] = c.id
    else:
        _ban(ctx, c)


def _per_task_deltas(cand: acceptance.Evaluation, inc: acceptance.Evaluation) -> list[float]:
    """Per-task score differences candidate − incumbent (SkillAdam's volatility input)."""

    def mean(values: list[float]) -> float:
        return sum(values) / len(values) if values else 0.0

    return [mean(cand.rewards.get(k, [])) - mean(v) for k, v in inc.rewards.items()]


def _accept(ctx: RoundContext, c: Cand, score: float, deltas: list[float]) -> None:
    st, loop = ctx.state, ctx.loop
    st.incumbent_id, st.incumbent_score = c.id, score
    st.best_ever = max(st.best_ever or score, score)
    st.accepted_chain.append(c.id)
    for e in c.edits:
        kind = novelty.edit_kind(e)
        st.accepted_counts[kind] = st.accepted_counts.get(kind, 0) + 1
    if loop.volatility:
        damper = budget.VolatilityDamper.from_json(st.damper) if st.damper else budget.VolatilityDamper(
            beta=loop.volatility_beta, v_max=loop.v_max)
        damper.update(deltas)
        st.damper = damper.model_dump(mode="json")


def _ban(ctx: RoundContext, c: Cand) -> None:
    if ctx.loop.novelty:
        ctx.state.bans += [b.model_dump() for b in bans.ban(c.edits, ctx.t, c.id)]
