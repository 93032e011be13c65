"""Critic repair: a model-written draft the critic rejects goes back to the proposer once, with the
critic's reason, and the revision is reviewed again.

The revision is a candidate of its own (`<id>.repair`, same round and slot, `repair_of` in its meta)
so the lineage keeps both: the rejected draft with its critique, and the revision with its own
edits, critiques and, if it passes, rollouts. The rejected candidate's meta records the repair and
its outcome. There is no second repair: a revision the critic rejects stays rejected. Rejections
because the critic model gave no verdict (`llm-unavailable`) are not repaired, and neither are
operator drafts (they have no proposer exchange to continue), nor drafts once the proposer's token
budget is spent; the repair's tokens are charged to it.
"""

from __future__ import annotations

from typing import Any

from evolve.errors import EditError
from evolve.harness import Harness, apply_edits
from evolve.loop.context import Cand, RoundContext
from evolve.loop.drafting import draft_meta
from evolve.loop.proposer import Draft

NOT_REPAIRED = ("llm-unavailable",)
"""Critic verdict kinds whose rejection a revision cannot address."""


def repairable(ctx: RoundContext, cand: Cand, kind: str) -> bool:
    return (ctx.loop.critic_repair and ctx.parts.proposer is not None and cand.origin == "llm"
            and kind not in NOT_REPAIRED and not cand.meta.get("repair_of")
            and ctx.ledger.can_afford("proposer_tokens", 1))


async def revise(ctx: RoundContext, incumbent: Harness, cand: Cand, reason: str,
                 seen: set[str]) -> Cand | None:
    """Ask for the revision of `cand` and register it (None when it is unusable or a duplicate)."""
    record = ctx.store.get_candidate(cand.id)
    proposal = record.meta.get("proposal") or {}
    budget = int(record.meta.get("budget") or len(cand.edits) or 1)
    original = Draft(origin="llm", messages=proposal.get("messages") or [], reply=proposal.get("reply") or "")
    draft, tokens = await ctx.parts.proposer.repair(original, reason, incumbent, budget,
                                                    ctx.rng(f"repair:{cand.id}").randrange(2**31))
    ctx.ledger.charge_usage("proposer_tokens", tokens)
    harness, error = _apply(incumbent, draft, seen)
    rid = f"{cand.id}.repair"
    status = "pending" if error is None else "rejected_invalid"
    ctx.store.add_candidate(rid, ctx.run_id, harness or incumbent, parent_id=ctx.state.incumbent_id, round=ctx.t,
                            slot=cand.slot, status=status, origin="llm", edits=draft.edits,
                            meta=draft_meta(draft, budget, repair_of=cand.id, critic_reason=reason))
    note(ctx, cand.id, {"candidate": rid, "critic_reason": reason,
                        "outcome": "pending review" if error is None else error})
    if error is not None:
        ctx.store.update_candidate(rid, reason=error)
        return None
    seen.add(harness.version)
    return Cand(rid, cand.slot, harness, list(draft.edits), "llm", meta={"repair_of": cand.id})


def _apply(incumbent: Harness, draft: Draft, seen: set[str]) -> tuple[Harness | None, str | None]:
    if draft.error or not draft.edits:
        return None, draft.error or "invalid repair: no edits"
    try:
        harness = apply_edits(incumbent, list(draft.edits))
    except EditError as exc:
        return None, f"invalid repair: {exc}"
    if harness.version in seen:
        return None, "invalid repair: duplicate of the incumbent or of another candidate of this round"
    return harness, None


def note(ctx: RoundContext, candidate_id: str, repair: dict[str, Any]) -> None:
    """Merge `repair` into the stored `repair` entry of a rejected candidate's meta."""
    meta = dict(ctx.store.get_candidate(candidate_id).meta or {})
    meta["repair"] = {**(meta.get("repair") or {}), **repair}
    ctx.store.update_candidate(candidate_id, meta=meta)
