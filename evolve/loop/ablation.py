"""Leave-one-out ablation of accepted edits (the pruner's second half)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evolve.errors import BudgetExhausted
from evolve.harness import Edit, Harness
from evolve.loop import pruner
from evolve.loop.oracle import summarize
from evolve.loop.state import LoopState
from evolve.loop.steps import edit_dicts, evaluation
from evolve.selection import acceptance

if TYPE_CHECKING:
    from evolve.loop.engine import Engine


async def prune(engine: Engine, t: int, st: LoopState) -> None:
    """Leave-one-out ablation of accepted edits every n_prune rounds."""
    n = engine.loop.n_prune
    if not st.accepted_chain or (t + 1) % n != 0:
        return
    chain = [[Edit.model_validate(e) for e in edit_dicts(engine, cid)] for cid in st.accepted_chain]
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
    result = acceptance.select([evaluation(engine, cid, abl, 0)], evaluation(engine, st.incumbent_id, inc, 0),
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
