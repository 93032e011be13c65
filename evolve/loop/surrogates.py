"""Surrogate steps of a round: the rubric judge and the learned surrogate rank drafts before any
oracle rollout; after the round the rubric is re-aligned to the oracle's verdicts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evolve.harness import Harness, render_files

if TYPE_CHECKING:
    from evolve.loop.context import Cand, RoundContext


def candidate_text(h: Harness) -> str:
    """All files of a harness as one text (what the surrogates read)."""
    return "\n".join(render_files(h).values())


def top_k(ctx: RoundContext) -> int:
    """Drafts that get oracle rollouts this round: `surrogate.top_k`, widened like the operators'
    search after rounds that accepted nothing and after rounds that left oracle budget unspent."""
    from evolve.loop.drafting import empty_rounds, paced_extra

    loop = ctx.loop
    return (ctx.sel.surrogate.top_k + min(empty_rounds(ctx), loop.widen_rounds) * loop.widen_drafts
            + paced_extra(ctx))


async def screen(ctx: RoundContext, cands: list[Cand]) -> list[Cand]:
    """Rank candidates by the usable surrogates (evolve.selection.screen); only the top k get oracle
    rollouts. A rubric that cannot tell drafts apart or disagreed with the oracle is ignored; the
    rubric is skipped when the `surrogate_calls` budget cannot pay for judging every draft."""
    from evolve.selection.screen import screen as rank_drafts

    sur, st, k = ctx.sel.surrogate, ctx.state, top_k(ctx)
    if not cands:
        return cands
    texts = [candidate_text(c.harness) for c in cands]
    use_rubric = sur.rubric and ctx.ledger.can_afford("surrogate_calls", len(cands) + (st.rubric is None))
    rubric_scores = await _rubric_scores(ctx, cands, texts) if use_rubric else None
    learned_scores = _learned_scores(ctx, cands, texts) if sur.learned else None
    chosen = rank_drafts(len(cands), k, rubric_scores=rubric_scores, rubric_agreement=st.rubric_agreement,
                         learned_scores=learned_scores,
                         groups=["llm" if c.origin == "llm" else "operators" for c in cands])
    ranked = [cands[i] for i in chosen.order]
    for rank, c in enumerate(ranked[k:], start=k + 1):
        ctx.store.update_candidate(c.id, status="rejected_acceptance",
                                   reason=f"surrogate screen ({chosen.basis}): rank {rank} of {len(ranked)} "
                                          f"(top {k} get oracle rollouts)")
        st.record(ctx.t, c.id, c.edits, "screened_out", None)
    return ranked[:k]


async def _rubric_scores(ctx: RoundContext, cands: list[Cand], texts: list[str]) -> list[float]:
    from evolve.selection import rubric

    st = ctx.state
    await _ensure_rubric(ctx)
    scores = await rubric.score(ctx.parts.judge, rubric.Rubric.model_validate(st.rubric), texts)
    for c, s in zip(cands, scores, strict=True):
        c.surrogate = s.score
        ctx.store.add_surrogate_score(c.id, "rubric", s.score, rubric_version=st.rubric_version,
                                      details={"hits": s.hits, "fallback": s.fallback})
    return [s.score for s in scores]


def _learned_scores(ctx: RoundContext, cands: list[Cand], texts: list[str]) -> list[float] | None:
    """COBRA-style prediction + LinUCB bonus, trained on this run's oracle results (None before 2 results)."""
    from evolve.selection import features, learned

    history = [h for h in ctx.state.surrogate_history if h["score"] is not None]
    if len(history) < 2:
        return None
    sur = ctx.sel.surrogate
    featurizer = features.MiniLMFeaturizer() if sur.features == "minilm" else features.HashingFeaturizer()
    model = learned.LearnedSurrogate(featurizer, ridge=sur.ridge, nu=sur.nu, lam=sur.lam)
    model.observe([h["text"] for h in history], [h["score"] for h in history])
    values = [float(v) for v in model.rank(texts)]
    for c, value in zip(cands, values, strict=True):
        ctx.store.add_surrogate_score(c.id, "learned", value)
    return values


async def _ensure_rubric(ctx: RoundContext) -> None:
    st = ctx.state
    if st.rubric is not None:
        return
    from evolve.selection import rubric

    bench, sur = ctx.benchmark, ctx.sel.surrogate
    if sur.rubric_file:
        generated = rubric.load_rubric(sur.rubric_file, _forbidden(ctx))
    else:
        generated = await rubric.generate_rubric(ctx.parts.judge, bench.description, "", _forbidden(ctx),
                                                 repair_attempts=sur.repair_attempts)
    st.rubric, st.rubric_version = generated.model_dump(mode="json"), generated.version
    ctx.store.add_rubric(ctx.run_id, generated.version, ctx.t, st.rubric, None)


def _forbidden(ctx: RoundContext) -> list[str]:
    """Answers of evolve-split tasks that are not plain labels (a rubric must not contain them)."""
    bench = ctx.benchmark
    return sorted({task.target for task in bench.split("evolve") if task.target not in (bench.labels or ())})


async def realign(ctx: RoundContext, incumbent: Harness, cands: list[Cand], outcome: dict[str, Any]) -> None:
    """Re-align the rubric to this round's oracle results, with no extra oracle calls: the incumbent
    and every candidate that got rollouts (fully evaluated, or its mean over the tasks it saw before
    the allocator stopped it)."""
    st = ctx.state
    if not ctx.sel.surrogate.rubric or st.rubric is None:
        return
    measured = {**outcome.get("partial", {}), **outcome["scores"]}
    pairs = [(candidate_text(c.harness), measured[c.id]) for c in cands if measured.get(c.id) is not None]
    if not outcome["scores"]:
        return
    inc_id = next(iter(outcome["scores"]))  # the incumbent of this round comes first
    if outcome["scores"][inc_id] is not None:
        pairs.append((candidate_text(incumbent), outcome["scores"][inc_id]))
    if len(pairs) < 2:
        return
    texts, oracle_scores = [p[0] for p in pairs], [p[1] for p in pairs]
    from evolve.selection import rubric

    current = rubric.Rubric.model_validate(st.rubric)
    sur = ctx.sel.surrogate
    attempts = sur.realign_attempts if ctx.ledger.can_afford("surrogate_calls", sur.realign_attempts) else 0
    result = await rubric.realign(ctx.parts.judge, current, texts, oracle_scores,
                                  description=ctx.benchmark.description, forbidden=_forbidden(ctx),
                                  threshold=sur.alignment_threshold, attempts=attempts,
                                  rng=ctx.rng("realign"))
    for version in result.versions:
        ctx.store.add_rubric(ctx.run_id, version.rubric.version, ctx.t, version.rubric.model_dump(mode="json"),
                             version.agreement)
    st.rubric, st.rubric_version = result.rubric.model_dump(mode="json"), result.rubric.version
    st.rubric_agreement = next((v.agreement for v in result.versions if v.rubric == result.rubric),
                               result.agreement)
