"""Drafting: the proposer's context, drafts from the LLM proposer and the programmatic operators,
and their registration as candidates (invalid, duplicate and banned drafts stay in the lineage).

No wasted slots: an LLM proposer that produced no valid draft in its last `proposer_patience`
drafts gets no more slots; they go to the operators, and the lineage records when and why.
"""

from __future__ import annotations

import math
from typing import Any

from evolve.errors import EditError
from evolve.harness import COMPONENTS, Edit, Harness, apply_edits
from evolve.loop import bans, novelty, pruner
from evolve.loop.context import Cand, RoundContext
from evolve.loop.memory import Memory
from evolve.loop.proposer import ProposerContext

ALL_COMPONENTS = COMPONENTS


def edit_dicts(ctx: RoundContext, candidate_id: str) -> list[dict[str, Any]]:
    return [{"op": e["op"], "component": e["component"], "target": e["target"], "value": e["value"],
             "hypothesis": e["hypothesis"], "origin": e["origin"]} for e in ctx.store.edits(candidate_id)]


def empty_rounds(ctx: RoundContext) -> int:
    """Consecutive completed rounds, up to this one, in which nothing was accepted."""
    n = 0
    for row in reversed(ctx.state.round_scores):
        if row.get("accepted"):
            break
        n += 1
    return n


def paced_extra(ctx: RoundContext) -> int:
    """Extra drafts this round because earlier rounds left oracle budget unspent (`loop.pace_drafts`).

    The budget left, spread over the rounds left, is compared with what a round has cost so far;
    the surplus buys candidates at the measured rollouts per evaluated candidate (everything a
    round spent, analyst and incumbent included, over the candidates it evaluated: an overestimate).
    """
    rows, cap = ctx.state.round_scores, ctx.loop.pace_drafts
    remaining = ctx.ledger.remaining("oracle_rollouts")
    if not cap or not rows or math.isinf(remaining):
        return 0
    spent = ctx.ledger.used("oracle_rollouts")
    per_round = spent / len(rows)
    share = remaining / max(ctx.cfg.rounds - ctx.t, 1)
    evaluated = sum(d.get("evaluated", 0) for row in rows for d in (row.get("drafts") or {}).values())
    cost = spent / max(evaluated, 1)
    if cost <= 0 or share <= per_round:
        return 0
    return min(cap, int((share - per_round) // cost))


def active_bans(ctx: RoundContext) -> list[bans.Ban]:
    """The banned directions in force this round."""
    return bans.active([bans.Ban.model_validate(b) for b in ctx.state.bans], ctx.t, ctx.loop.ban_rounds)


def proposer_context(ctx: RoundContext, incumbent: Harness, evidence: Any, b_t: int) -> ProposerContext:
    loop, st = ctx.loop, ctx.state
    banned = _keys(bans.groups(active_bans(ctx)))
    st.banned = [" + ".join(keys) for keys in banned]
    directive = None
    if loop.novelty:
        is_stalled = novelty.stalled(st.scores, loop.stall_window, loop.stall_eps) or empty_rounds(ctx) > 0
        directive = novelty.exploration_directive(is_stalled, set(st.tried), ALL_COMPONENTS,
                                                  slots=loop.reserved_slots)
    prune = []
    if loop.pruner:
        chain_edits = [Edit.model_validate(e) for cid in st.accepted_chain for e in edit_dicts(ctx, cid)]
        prune = pruner.prune_set(st.history, ctx.t, loop.n_prune, chain_edits)
    return ProposerContext(
        incumbent=incumbent, evidence=evidence.render(), history=st.history,
        memory=Memory.model_validate(st.memory).render() if st.memory and loop.memory else "",
        directive=directive, prune=prune, budget=b_t, description=ctx.benchmark.description,
        labels=tuple(ctx.benchmark.labels or ()), banned=banned, widen=empty_rounds(ctx),
        tried_since=ctx.t - loop.ban_rounds if loop.ban_rounds else 0,
    )


def _keys(groups: list[list[bans.Ban]]) -> list[list[str]]:
    """Each banned combination's novelty keys, without repeats."""
    out: list[list[str]] = []
    for g in groups:
        keys = sorted({b.key for b in g})
        if keys not in out:
            out.append(keys)
    return out


def slots(ctx: RoundContext) -> tuple[int, int]:
    """(LLM drafts, operator drafts) of this round: the slots of a proposer that is absent, disabled or
    out of `proposer_tokens` go to the operators; every round in a row without an acceptance widens
    the operators' search, and so does oracle budget that earlier rounds left unspent."""
    loop = ctx.loop
    llm = loop.llm_drafts if ctx.parts.proposer is not None and not ctx.state.proposer_disabled else 0
    if not ctx.ledger.can_afford("proposer_tokens", 1):  # the proposer's token budget is spent
        llm = 0
    operators = loop.operator_drafts + (loop.llm_drafts - llm) if ctx.parts.operators is not None else 0
    if operators:
        operators += min(empty_rounds(ctx), loop.widen_rounds) * loop.widen_drafts + paced_extra(ctx)
    return llm, operators


async def draft(ctx: RoundContext, incumbent: Harness, evidence: Any, b_t: int) -> list[Any]:
    """LLM drafts first, then programmatic operator drafts."""
    pctx = proposer_context(ctx, incumbent, evidence, b_t)
    n_llm, n_ops = slots(ctx)
    drafts: list[Any] = []
    if n_llm:
        drafts += await ctx.parts.proposer.propose(pctx, n_llm, ctx.rng("proposer"))
    if n_ops:
        drafts += await ctx.parts.operators.propose(pctx, n_ops, ctx.rng("operators"))
    return drafts


def register(ctx: RoundContext, incumbent: Harness, drafts: list[Any], b_t: int) -> list[Cand]:
    """Store every draft as a candidate; return the ones that are valid, new and not banned."""
    st, pending = ctx.state, []
    seen_versions = {incumbent.version}
    window = ctx.loop.ban_rounds
    previous: dict[str, list[Edit]] = {}
    for e in ctx.store.run_edits(ctx.run_id):
        if e["round"] < ctx.t and (window <= 0 or ctx.t - e["round"] <= window):
            previous.setdefault(e["candidate_id"], []).append(
                Edit.model_validate({k: e[k] for k in ("op", "component", "target", "value")}))
    for slot, d in enumerate(drafts):
        cid = f"{ctx.run_id}.{ctx.t}.{slot}"
        edits = list(d.edits)[:b_t]
        reason, harness = _validate(ctx, d, incumbent, edits, seen_versions, previous)
        status = "pending" if reason is None else ("rejected_invalid" if reason.startswith("invalid")
                                                    else "rejected_critic")
        ctx.store.add_candidate(cid, ctx.run_id, harness or incumbent, parent_id=st.incumbent_id, round=ctx.t,
                                slot=slot, status=status, origin=d.origin, edits=edits,
                                meta=draft_meta(d, b_t))
        if d.origin == "llm":
            st.llm_valid.append(reason is None or not reason.startswith("invalid"))
        if reason is not None:
            ctx.store.update_candidate(cid, reason=reason)
            if status == "rejected_critic":
                ctx.store.add_critique(cid, "novelty", "reject", reason)
            st.record(ctx.t, cid, edits, reason.split(":")[0], None)
            continue
        seen_versions.add(harness.version)
        pending.append(Cand(cid, slot, harness, edits, d.origin))
        ctx.progress({"event": "candidate", "round": ctx.t, "id": cid, "origin": d.origin})
    _check_proposer(ctx)
    return pending


def draft_meta(d: Any, b_t: int, **extra: Any) -> dict[str, Any]:
    """A draft's candidate meta: the proposer exchange, the edit budget and, when the model gave
    them, the per-edit reasoning fields (failure cluster, expected effect, specificity risk)."""
    meta = {"proposal": {"messages": d.messages, "reply": d.reply}, "budget": b_t, **extra}
    reasoning = [r.model_dump() for r in getattr(d, "reasoning", [])]
    if reasoning:
        meta["reasoning"] = reasoning
    return meta


def _check_proposer(ctx: RoundContext) -> None:
    st, patience = ctx.state, ctx.loop.proposer_patience
    recent = st.llm_valid[-patience:]
    if patience and not st.proposer_disabled and len(recent) >= patience and not any(recent):
        st.proposer_disabled = (f"round {ctx.t}: the LLM proposer wrote no valid draft in its last {patience} "
                                f"tries; its slots go to the operators")
        ctx.progress({"event": "warning", "message": st.proposer_disabled})


def _validate(ctx: RoundContext, d: Any, incumbent: Harness, edits: list[Edit], seen: set[str],
              previous: dict[str, list[Edit]]) -> tuple[str | None, Harness | None]:
    if d.error or not edits:
        return f"invalid: {d.error or 'no edits proposed'}", None
    try:
        harness = apply_edits(incumbent, edits)
    except EditError as exc:
        return f"invalid: {exc}", None
    if harness.version in seen:
        return "invalid: duplicate of the incumbent or of another draft of this round", None
    if ctx.loop.novelty:
        banned = banned_reason(ctx, edits, previous)
        if banned:
            return f"duplicate: {banned}", harness
    return None, harness


def banned_reason(ctx: RoundContext, edits: list[Edit], previous: dict[str, list[Edit]]) -> str | None:
    """Why a draft repeats a banned combination or a recent earlier candidate (None when it is new).

    Both are judged per candidate: the draft repeats one when each of that candidate's edits is
    matched by one of the draft's (so a rejected pair bans neither of its edits on its own)."""
    hit = bans.match_draft(edits, active_bans(ctx), ctx.loop.ban_similarity)
    if hit:
        what = f"direction {hit[0].key} was" if len(hit) == 1 else f"directions {bans.describe(hit)} were"
        return f"{what} rejected in round {hit[0].round} ({hit[0].candidate_id})"
    for group in previous.values():
        dups = [next((d for e in edits if (d := novelty.near_duplicate(e, [p], ctx.loop.duplicate_threshold))),
                     None) for p in group]
        if all(dups):
            return f"near-duplicate of an earlier candidate ({'; '.join(dups)})"
    return None
