"""The steps of one round, as functions of the engine and the loop state (see engine.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evolve.harness import Edit, Harness
from evolve.loop import analyst, budget, novelty, pruner
from evolve.loop.memory import Memory
from evolve.loop.oracle import rewards_by_task, summarize
from evolve.loop.proposer import ProposerContext
from evolve.loop.state import LoopState
from evolve.loop.surrogates import candidate_text
from evolve.selection import acceptance, bandit
from evolve.selection.budget import Budget
from evolve.selection.config import BudgetLimits

if TYPE_CHECKING:
    from evolve.loop.engine import Cand, Engine

ALL_COMPONENTS = ("system", "skill", "example", "control", "tool")


def _task_map(engine: Engine) -> dict[str, Any]:
    return {t.id: t for split in engine.parts.benchmark.splits.values() for t in split}


# -- analyst and proposer ----------------------------------------------------------------------


async def analyse(engine: Engine, t: int, incumbent: Harness, st: LoopState) -> tuple[Any, list[Any], list[Any]]:
    """Roll the incumbent out on a seeded evolve batch and digest the results into evidence."""
    tasks = engine.parts.benchmark.split("evolve")
    rng = engine.rng(t, "analyst")
    batch = rng.sample(tasks, min(engine.cfg.evolve_batch, len(tasks)))
    records = await engine.oracle.evaluate(incumbent, engine.parts.benchmark, "evolve", batch,
                                           candidate_id=st.incumbent_id)
    loop = engine.loop
    evidence = analyst.digest(records, {task.id: task for task in batch}, n_fail=loop.n_fail,
                              n_success=loop.n_success, max_chars=loop.evidence_chars, rng=rng)
    return evidence, batch, records


def edit_budget_for(engine: Engine, t: int, st: LoopState) -> int:
    loop = engine.loop
    b_t = budget.edit_budget(t, engine.cfg.rounds, loop.b_min, loop.b_max)
    if loop.volatility and st.damper:
        b_t = budget.VolatilityDamper.from_json(st.damper).damp(b_t, loop.b_min)
    return b_t


def _context(engine: Engine, t: int, incumbent: Harness, evidence: Any, b_t: int, st: LoopState) -> ProposerContext:
    loop = engine.loop
    directive = None
    if loop.novelty:
        is_stalled = novelty.stalled(st.scores, loop.stall_window, loop.stall_eps)
        directive = novelty.exploration_directive(is_stalled, set(st.tried), ALL_COMPONENTS)
    prune = []
    if loop.pruner:
        chain_edits = [Edit.model_validate(e) for cid in st.accepted_chain
                       for e in edit_dicts(engine, cid)]
        prune = pruner.prune_set(st.history, t, loop.n_prune, chain_edits)
    return ProposerContext(
        incumbent=incumbent,
        evidence=evidence.render(),
        history=st.history,
        memory=Memory.model_validate(st.memory).render() if st.memory and loop.memory else "",
        directive=directive,
        prune=prune,
        budget=b_t,
        description=engine.parts.benchmark.description,
        labels=tuple(engine.parts.benchmark.labels or ()),
        banned=list(st.banned),
    )


def edit_dicts(engine: Engine, candidate_id: str) -> list[dict[str, Any]]:
    return [{"op": e["op"], "component": e["component"], "target": e["target"], "value": e["value"],
             "hypothesis": e["hypothesis"], "origin": e["origin"]} for e in engine.store.edits(candidate_id)]


async def draft(engine: Engine, t: int, incumbent: Harness, evidence: Any, b_t: int, st: LoopState) -> list[Any]:
    """LLM drafts first, then programmatic operator drafts."""
    ctx = _context(engine, t, incumbent, evidence, b_t, st)
    drafts: list[Any] = []
    if engine.parts.proposer is not None:
        drafts += await engine.parts.proposer.propose(ctx, engine.loop.llm_drafts, engine.rng(t, "proposer"))
    if engine.parts.operators is not None:
        drafts += await engine.parts.operators.propose(ctx, engine.loop.operator_drafts, engine.rng(t, "operators"))
    return drafts


def banned_reason(engine: Engine, edits: list[Edit], st: LoopState, previous: list[Edit]) -> str | None:
    """Why a draft repeats a banned direction or an earlier edit (None when it is new)."""
    banned = set(st.banned)
    for e in edits:
        key = novelty.novelty_key(e)
        if key in banned:
            return f"direction {key} was rejected before"
    for e in edits:
        dup = novelty.near_duplicate(e, previous, engine.loop.duplicate_threshold)
        if dup:
            return f"near-duplicate of an earlier edit ({dup})"
    return None


# -- critic and surrogate screen ---------------------------------------------------------------


async def critique(engine: Engine, t: int, incumbent: Harness, cands: list[Cand], st: LoopState) -> list[Cand]:
    """Critic rejections cost no oracle rollouts and do not count as tried."""
    if engine.parts.critic is None:
        return cands
    kept = []
    for c in cands:
        verdict = await engine.parts.critic.review(incumbent, c.harness, c.edits, None)
        engine.store.add_critique(c.id, verdict.kind, "pass" if verdict.passed else "reject", verdict.reason,
                                  verdict.details)
        if verdict.passed:
            kept.append(c)
            continue
        engine.store.update_candidate(c.id, status="rejected_critic", reason=f"critic ({verdict.kind}): "
                                      f"{verdict.reason}")
        st.record(t, c.id, c.edits, "critic_reject", None)
    return kept


# -- oracle allocation and acceptance ----------------------------------------------------------


def evaluation(engine: Engine, cid: str, records: list[Any], novelty_value: int) -> acceptance.Evaluation:
    first = {}
    for r in records:
        first.setdefault(r.task_id, r)
    s = summarize(records)
    return acceptance.Evaluation(
        candidate_id=cid, rewards=rewards_by_task(records), tokens_per_task=s["policy_tokens"] or 0.0,
        novelty=novelty_value, predictions={k: (r.prediction if r.parsed else None) for k, r in first.items()},
        parse_rate=s.get("parse_rate", 1.0), crash_rate=s.get("crash_rate", 0.0))


async def select(engine: Engine, t: int, incumbent: Harness, cands: list[Cand], st: LoopState,
                 evolve_tasks: list[Any]) -> dict[str, Any]:
    """Paired bandit allocation against the incumbent, full evaluation of survivors, then acceptance."""
    split = engine.sel.acceptance.split
    bench = engine.parts.benchmark
    tasks = evolve_tasks if split == "evolve" else bench.split(split)
    by_id = {task.id: task for task in tasks}
    harnesses = {c.id: c.harness for c in cands} | {st.incumbent_id: incumbent}

    async def evaluate(cid: str, task_ids: list[str]) -> dict[str, float]:
        records = await engine.oracle.evaluate(harnesses[cid], bench, split, [by_id[i] for i in task_ids],
                                               candidate_id=cid)
        return {k: sum(v) / len(v) for k, v in rewards_by_task(records).items()}

    inc_records = await engine.oracle.evaluate(incumbent, bench, split, tasks, candidate_id=st.incumbent_id)
    inc_eval = evaluation(engine, st.incumbent_id, inc_records, 0)
    inc_score = summarize(inc_records)["score"]
    if st.best_ever is None:
        st.best_ever = inc_score
    st.incumbent_score = inc_score
    outcome: dict[str, Any] = {"accepted": None, "scores": {st.incumbent_id: inc_score}, "partial": {}}
    if not cands:
        st.scores.append(inc_score)
        return outcome
    ledger = Budget(BudgetLimits(oracle_rollouts=max(engine.oracle.budget_left or 0, 0), surrogate_calls=None,
                                 proposer_tokens=None))
    known = {st.incumbent_id: {k: sum(v) / len(v) for k, v in rewards_by_task(inc_records).items()}}
    alloc = await bandit.allocate(engine.sel, [c.id for c in cands], st.incumbent_id, [task.id for task in tasks],
                                  evaluate, ledger, engine.rng(t, "allocate"), known=known)
    evaluations, stopped = [], {}
    for c in cands:
        if c.id not in alloc.survivors:
            stopped[c.id] = alloc.dropped.get(c.id, "not among the allocator's survivors")
            seen = alloc.rewards.get(c.id, {})
            outcome["partial"][c.id] = sum(seen.values()) / len(seen) if seen else None
            continue
        records = await engine.oracle.evaluate(c.harness, bench, split, tasks, candidate_id=c.id)
        nu = novelty.structural_novelty([e.component for e in c.edits], st.accepted_counts)
        evaluations.append(evaluation(engine, c.id, records, nu))
        outcome["scores"][c.id] = summarize(records)["score"]
    gold = {task.id: task.target for task in tasks} if bench.labels else None
    result = acceptance.select(evaluations, inc_eval, task_ids=[task.id for task in tasks], gold=gold,
                               best_ever=st.best_ever, cfg=engine.sel, rng=engine.rng(t, "acceptance"))
    outcome["evaluations"] = {e.candidate_id: e for e in [*evaluations, inc_eval]}
    _record_decisions(engine, t, cands, result, stopped, alloc, st, outcome)
    return outcome


def _record_decisions(engine: Engine, t: int, cands: list[Cand], result: Any, stopped: dict[str, str],
                      alloc: Any, st: LoopState, outcome: dict[str, Any]) -> None:
    decisions = {d.candidate_id: d for d in result.decisions}
    for c in cands:
        if c.id in stopped:
            engine.store.add_decision(engine.run_id, c.id, t, False, f"stopped early: {stopped[c.id]}",
                                      {"allocation": alloc.to_dict(), **alloc.estimates.get(c.id, {})})
            engine.store.update_candidate(c.id, status="rejected_acceptance", reason=f"stopped early: {stopped[c.id]}")
            st.record(t, c.id, c.edits, "stopped_early", None)
            _ban(engine, st, c)
            continue
        d = decisions[c.id]
        accepted = result.winner_id == c.id
        stats = dict(d.stats)
        engine.store.add_decision(engine.run_id, c.id, t, accepted, d.reason, stats)
        delta = stats.get("dS")
        ci = stats.get("ci_S") or [None, None]
        engine.store.update_candidate(
            c.id, status="accepted" if accepted else "rejected_acceptance", reason=d.reason,
            val_score=outcome["scores"].get(c.id), val_ci_low=ci[0], val_ci_high=ci[1],
            delta=delta, policy_tokens=stats.get("tokens_per_task"))
        st.record(t, c.id, c.edits, "accepted" if accepted else "rejected", delta)
        st.surrogate_history.append({"text": candidate_text(c.harness), "score": outcome["scores"].get(c.id)})
        if accepted:
            evals = outcome["evaluations"]
            _accept(engine, st, c, outcome["scores"][c.id], _per_task_deltas(evals[c.id], evals[st.incumbent_id]))
            outcome["accepted"] = c.id
        else:
            _ban(engine, st, c)
    st.scores.append(st.incumbent_score if st.incumbent_score is not None else 0.0)


def _per_task_deltas(cand: acceptance.Evaluation, inc: acceptance.Evaluation) -> list[float]:
    """Per-task score differences candidate − incumbent (SkillAdam's volatility input)."""

    def mean(values: list[float]) -> float:
        return sum(values) / len(values) if values else 0.0

    return [mean(cand.rewards.get(k, [])) - mean(v) for k, v in inc.rewards.items()]


def _accept(engine: Engine, st: LoopState, c: Cand, score: float, deltas: list[float]) -> None:
    st.incumbent_id, st.incumbent_score = c.id, score
    st.best_ever = max(st.best_ever or score, score)
    st.accepted_chain.append(c.id)
    for e in c.edits:
        st.accepted_counts[e.component] = st.accepted_counts.get(e.component, 0) + 1
    if engine.loop.volatility:
        loop = engine.loop
        damper = budget.VolatilityDamper.from_json(st.damper) if st.damper else budget.VolatilityDamper(
            beta=loop.volatility_beta, v_max=loop.v_max)
        damper.update(deltas)
        st.damper = damper.model_dump(mode="json")


def _ban(engine: Engine, st: LoopState, c: Cand) -> None:
    if engine.loop.novelty:
        st.banned = sorted(set(st.banned) | {novelty.novelty_key(e) for e in c.edits})


# -- rubric re-alignment, pruning, memory ------------------------------------------------------


def remember(engine: Engine, t: int, cands: list[Cand], outcome: dict[str, Any], evidence: Any,
             st: LoopState) -> None:
    """Update the optimization memory (open/resolved problems with attempts and verdicts)."""
    if not engine.loop.memory:
        return
    memory = Memory.model_validate(st.memory) if st.memory else Memory()
    attempts = [{"candidate_id": c.id, "approach": "; ".join(e.hypothesis or e.summary() for e in c.edits),
                 "accepted": outcome["accepted"] == c.id,
                 "delta": (outcome["scores"].get(c.id, 0.0) or 0.0) - (outcome["scores"].get(st.incumbent_id)
                                                                         or 0.0)}
                for c in cands]
    memory.update(t, evidence, attempts)
    st.memory = memory.model_dump(mode="json")

