"""Surrogate steps of a round: the rubric judge and the learned surrogate rank drafts before any
oracle rollout; after the round the rubric is re-aligned to the oracle's verdicts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evolve.harness import Harness, render_files
from evolve.loop.state import LoopState

if TYPE_CHECKING:
    from evolve.loop.engine import Cand, Engine


def candidate_text(h: Harness) -> str:
    """All files of a harness as one text (what the surrogates read)."""
    return "\n".join(render_files(h).values())


async def screen(engine: Engine, t: int, cands: list[Cand], st: LoopState) -> list[Cand]:
    """Rank candidates by the usable surrogates (evolve.selection.screen); only the top_k get oracle
    rollouts. A rubric that cannot tell drafts apart or disagreed with the oracle is ignored."""
    from evolve.selection.screen import screen as rank_drafts

    sur = engine.sel.surrogate
    if not cands:
        return cands
    texts = [candidate_text(c.harness) for c in cands]
    rubric_scores = await _rubric_scores(engine, t, cands, texts, st) if sur.rubric else None
    learned_scores = _learned_scores(engine, cands, texts, st) if sur.learned else None
    chosen = rank_drafts(len(cands), sur.top_k, rubric_scores=rubric_scores, rubric_agreement=st.rubric_agreement,
                         learned_scores=learned_scores)
    ranked = [cands[i] for i in chosen.order]
    for rank, c in enumerate(ranked[sur.top_k:], start=sur.top_k + 1):
        engine.store.update_candidate(c.id, status="rejected_acceptance",
                                      reason=f"surrogate screen ({chosen.basis}): rank {rank} of {len(ranked)} "
                                             f"(top {sur.top_k} get oracle rollouts)")
        st.record(t, c.id, c.edits, "screened_out", None)
    return ranked[: sur.top_k]


async def _rubric_scores(engine: Engine, t: int, cands: list[Cand], texts: list[str], st: LoopState) -> list[float]:
    from evolve.selection import rubric

    await _ensure_rubric(engine, t, st)
    scores = await rubric.score(engine.parts.helper, rubric.Rubric.model_validate(st.rubric), texts)
    for c, s in zip(cands, scores, strict=True):
        c.surrogate = s.score
        engine.store.add_surrogate_score(c.id, "rubric", s.score, rubric_version=st.rubric_version,
                                         details={"hits": s.hits, "fallback": s.fallback})
    return [s.score for s in scores]


def _learned_scores(engine: Engine, cands: list[Cand], texts: list[str], st: LoopState) -> list[float] | None:
    """COBRA-style prediction + LinUCB bonus, trained on this run's oracle results (None before 2 results)."""
    from evolve.selection import learned

    history = [h for h in st.surrogate_history if h["score"] is not None]
    if len(history) < 2:
        return None
    model = learned.LearnedSurrogate()
    model.observe([h["text"] for h in history], [h["score"] for h in history])
    values = [float(v) for v in model.rank(texts)]
    for c, value in zip(cands, values, strict=True):
        engine.store.add_surrogate_score(c.id, "learned", value)
    return values


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


async def realign(engine: Engine, t: int, incumbent: Harness, cands: list[Cand], outcome: dict[str, Any],
                  st: LoopState) -> None:
    """Re-align the rubric to this round's oracle results, with no extra oracle calls: the incumbent
    and every candidate that got rollouts (fully evaluated, or its mean over the tasks it saw before
    the allocator stopped it)."""
    if not engine.sel.surrogate.rubric or st.rubric is None:
        return
    measured = {**outcome.get("partial", {}), **outcome["scores"]}
    pairs = [(candidate_text(c.harness), measured[c.id]) for c in cands if measured.get(c.id) is not None]
    inc_id = next(iter(outcome["scores"]))  # the incumbent of this round comes first
    if outcome["scores"][inc_id] is not None:
        pairs.append((candidate_text(incumbent), outcome["scores"][inc_id]))
    if len(pairs) < 2:
        return
    texts, oracle_scores = [p[0] for p in pairs], [p[1] for p in pairs]
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
    st.rubric_agreement = next((v.agreement for v in result.versions if v.rubric == result.rubric),
                               result.agreement)
