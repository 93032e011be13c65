"""The steps of one round, as functions of the engine and the loop state (see engine.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evolve.errors import BudgetExhausted
from evolve.harness import Edit, Harness
from evolve.loop import analyst, budget, novelty, pruner
from evolve.loop.memory import Memory
from evolve.loop.oracle import rewards_by_task, summarize
from evolve.loop.proposer import ProposerContext
from evolve.loop.state import HistoryEntry, LoopState
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
                       for e in _edit_dicts(engine, cid)]
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


def _edit_dicts(engine: Engine, candidate_id: str) -> list[dict[str, Any]]:
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
        _history(st, t, c, "critic_reject", None)
    return kept


def _candidate_text(h: Harness) -> str:
    from evolve.harness import render_files

    return "\n".join(render_files(h).values())


async def screen(engine: Engine, t: int, cands: list[Cand], st: LoopState) -> list[Cand]:
    """Rank candidates by the surrogates; only the top_k get oracle rollouts."""
    sur = engine.sel.surrogate
    if not cands:
        return cands
    texts = [_candidate_text(c.harness) for c in cands]
    if sur.rubric:
        from evolve.selection import rubric

        await _ensure_rubric(engine, t, st)
        scores = await rubric.score(engine.parts.helper, rubric.Rubric.model_validate(st.rubric), texts)
        for c, s in zip(cands, scores, strict=True):
            c.surrogate = s.score
            engine.store.add_surrogate_score(c.id, "rubric", s.score, rubric_version=st.rubric_version,
                                             details={"hits": s.hits, "fallback": s.fallback})
    if sur.learned and len(st.surrogate_history) >= 2:
        from evolve.selection import learned

        model = learned.LearnedSurrogate()
        model.observe([h["text"] for h in st.surrogate_history], [h["score"] for h in st.surrogate_history])
        for c, value in zip(cands, model.rank(texts), strict=True):
            engine.store.add_surrogate_score(c.id, "learned", float(value))
            c.surrogate = float(value) if c.surrogate is None else (c.surrogate + float(value)) / 2
    if sur.top_k is None or len(cands) <= sur.top_k or all(c.surrogate is None for c in cands):
        return cands
    ranked = sorted(cands, key=lambda c: (-(c.surrogate or 0.0), c.slot))
    for rank, c in enumerate(ranked[sur.top_k:], start=sur.top_k + 1):
        engine.store.update_candidate(c.id, status="rejected_acceptance",
                                      reason=f"surrogate screen: rank {rank} of {len(ranked)} (top {sur.top_k} "
                                             f"get oracle rollouts)")
        _history(st, t, c, "screened_out", None)
    return ranked[: sur.top_k]


async def _ensure_rubric(engine: Engine, t: int, st: LoopState) -> None:
    if st.rubric is not None:
        return
    from evolve.selection import rubric

    bench, sur = engine.parts.benchmark, engine.sel.surrogate
    if sur.rubric_file:
        generated = rubric.load_rubric(sur.rubric_file, _forbidden(engine))
    else:
        generated = await rubric.generate_rubric(engine.parts.helper, bench.description, "", _forbidden(engine),
                                                 repair_attempts=sur.repair_attempts)
    st.rubric, st.rubric_version = generated.model_dump(mode="json"), generated.version
    engine.store.add_rubric(engine.run_id, generated.version, t, st.rubric, None)


def _forbidden(engine: Engine) -> list[str]:
    """Answers of evolve-split tasks that are not plain labels (a rubric must not contain them)."""
    bench = engine.parts.benchmark
    return sorted({task.target for task in bench.split("evolve") if task.target not in (bench.labels or ())})


# -- oracle allocation and acceptance ----------------------------------------------------------


def _evaluation(engine: Engine, cid: str, records: list[Any], novelty_value: int) -> acceptance.Evaluation:
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
    inc_eval = _evaluation(engine, st.incumbent_id, inc_records, 0)
    inc_score = summarize(inc_records)["score"]
    if st.best_ever is None:
        st.best_ever = inc_score
    st.incumbent_score = inc_score
    outcome: dict[str, Any] = {"accepted": None, "scores": {st.incumbent_id: inc_score}}
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
            continue
        records = await engine.oracle.evaluate(c.harness, bench, split, tasks, candidate_id=c.id)
        nu = novelty.structural_novelty([e.component for e in c.edits], st.accepted_counts)
        evaluations.append(_evaluation(engine, c.id, records, nu))
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
            _history(st, t, c, "stopped_early", None)
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
        _history(st, t, c, "accepted" if accepted else "rejected", delta)
        st.surrogate_history.append({"text": _candidate_text(c.harness), "score": outcome["scores"].get(c.id)})
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


def _history(st: LoopState, t: int, c: Cand, verdict: str, delta: float | None) -> None:
    for e in c.edits:
        st.history.append(HistoryEntry(round=t, candidate_id=c.id, component=e.component, op=e.op,
                                       target=None if e.target is None else str(e.target),
                                       hypothesis=e.hypothesis, verdict=verdict, delta=delta))
        if verdict not in ("critic_reject", "invalid") and e.component not in st.tried:
            st.tried.append(e.component)


# -- rubric re-alignment, pruning, memory ------------------------------------------------------


async def realign(engine: Engine, t: int, cands: list[Cand], outcome: dict[str, Any], st: LoopState) -> None:
    """Re-align the rubric to this round's oracle results (no extra oracle calls)."""
    if not engine.sel.surrogate.rubric or st.rubric is None:
        return
    scored = [c for c in cands if c.id in outcome["scores"] and c.surrogate is not None]
    if len(scored) < 2:
        return
    texts = [_candidate_text(c.harness) for c in scored]
    oracle_scores = [outcome["scores"][c.id] for c in scored]
    from evolve.selection import rubric

    current = rubric.Rubric.model_validate(st.rubric)
    sur = engine.sel.surrogate
    result = await rubric.realign(engine.parts.helper, current, texts, oracle_scores,
                                  description=engine.parts.benchmark.description, forbidden=_forbidden(engine),
                                  threshold=sur.alignment_threshold, attempts=sur.realign_attempts,
                                  rng=engine.rng(t, "realign"))
    for version in result.versions:
        engine.store.add_rubric(engine.run_id, version.rubric.version, t, version.rubric.model_dump(mode="json"),
                                version.agreement)
    st.rubric, st.rubric_version = result.rubric.model_dump(mode="json"), result.rubric.version


async def prune(engine: Engine, t: int, st: LoopState) -> None:
    """Leave-one-out ablation of accepted edits every n_prune rounds."""
    n = engine.loop.n_prune
    if not st.accepted_chain or (t + 1) % n != 0:
        return
    chain = [[Edit.model_validate(e) for e in _edit_dicts(engine, cid)] for cid in st.accepted_chain]
    incumbent = engine.harness(st.incumbent_id)
    for slot, ablation in enumerate(pruner.ablations(engine.parts.seed_harness, chain)):
        if ablation.harness.version == incumbent.version:
            continue
        removed = st.accepted_chain[ablation.index]
        cid = f"{engine.run_id}.{t}.p{slot}"
        undo = [Edit(op="remove", component=e.component, target=e.target, origin="pruner",
                     hypothesis=f"ablation: drop the edits of {removed}") for e in chain[ablation.index]]
        engine.store.add_candidate(cid, engine.run_id, ablation.harness, parent_id=st.incumbent_id, round=t,
                                   slot=100 + slot, status="pending", origin="pruner", edits=undo,
                                   meta={"ablates": removed})
        if await _try_ablation(engine, t, cid, ablation.harness, incumbent, removed, st):
            return


async def _try_ablation(engine: Engine, t: int, cid: str, harness: Harness, incumbent: Harness, removed: str,
                        st: LoopState) -> bool:
    split = engine.sel.acceptance.split
    bench = engine.parts.benchmark
    tasks = bench.split(split) if split != "evolve" else bench.split("evolve")[: engine.cfg.evolve_batch]
    try:
        inc = await engine.oracle.evaluate(incumbent, bench, split, tasks, candidate_id=st.incumbent_id)
        abl = await engine.oracle.evaluate(harness, bench, split, tasks, candidate_id=cid)
    except BudgetExhausted:
        engine.store.update_candidate(cid, status="rejected_acceptance", reason="ablation skipped: budget")
        return False
    gold = {task.id: task.target for task in tasks} if bench.labels else None
    result = acceptance.select([_evaluation(engine, cid, abl, 0)], _evaluation(engine, st.incumbent_id, inc, 0),
                               task_ids=[task.id for task in tasks], gold=gold, best_ever=st.best_ever or 0.0,
                               cfg=engine.sel, rng=engine.rng(t, "prune"))
    d = result.decisions[0]
    score = summarize(abl)["score"]
    keep = result.winner_id == cid
    reason = (f"pruned {removed}: " if keep else f"kept {removed}: ") + d.reason
    engine.store.add_decision(engine.run_id, cid, t, keep, reason, dict(d.stats), kind="prune")
    engine.store.update_candidate(cid, status="accepted" if keep else "rejected_acceptance", reason=reason,
                                  val_score=score, delta=d.stats.get("dS"))
    if keep:
        engine.store.update_candidate(removed, status="pruned", reason=f"removed by ablation {cid}")
        st.accepted_chain = [c for c in st.accepted_chain if c != removed] + [cid]
        st.incumbent_id, st.incumbent_score = cid, score
        for h in st.history:
            if h.candidate_id == removed:
                h.verdict = "pruned"
    return keep


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

