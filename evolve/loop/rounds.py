"""Per-round accounting for the run summary and the report: how many drafts each source made, how
many were valid, admissible and accepted, and why the others were rejected."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from evolve.loop.context import RoundContext

_POOLED = re.compile(r"^on validation \+ \d+ fresh evolve tasks: ")


def rejection_kind(status: str, reason: str) -> str:
    """A short category of why a candidate was not accepted (from its status and reason line)."""
    reason = reason or ""
    if status == "rejected_invalid":
        return "invalid"
    if status == "rejected_budget":
        return "budget"
    if status == "rejected_critic":
        return "duplicate or banned" if reason.startswith("duplicate") else "critic"
    if reason.startswith("surrogate screen"):
        return "screened out"
    reason = _POOLED.sub("", reason)
    if reason.startswith("admissible but not best"):
        return "admissible, not best"
    text = reason.removeprefix("stopped early: ")
    for key in ("guard: collapse", "guard: parse", "guard: crash", "guard", "regression", "floor", "cost rule",
                "cannot gain", "no gain", "within noise band", "worse than", "halved out", "unlikely to be best",
                "cannot beat the incumbent"):
        if text.startswith(key) or key in text[:40]:
            return key.removeprefix("guard: ") if key.startswith("guard: ") else key
    return "rejected"


def draft_table(ctx: RoundContext, outcome: dict[str, Any]) -> dict[str, dict[str, int]]:
    """Per draft source: produced, valid (applied, new, not banned), evaluated, admissible, accepted."""
    table: dict[str, Counter[str]] = {}
    admissible = set(outcome.get("admissible", []))
    for c in ctx.store.candidates(ctx.run_id):
        if c.round != ctx.t or c.origin == "pruner":
            continue
        row = table.setdefault(c.origin, Counter())
        row["produced"] += 1
        row["valid"] += c.status != "rejected_invalid"
        row["evaluated"] += c.status in ("accepted", "rejected_acceptance", "rejected_budget") and \
            not (c.reason or "").startswith("surrogate screen")
        row["admissible"] += c.id in admissible
        row["accepted"] += c.status == "accepted"
    return {origin: dict(counts) for origin, counts in sorted(table.items())}


def rejections(ctx: RoundContext) -> dict[str, int]:
    """Rejected candidates of this round by rejection kind."""
    kinds = Counter(rejection_kind(c.status, c.reason) for c in ctx.store.candidates(ctx.run_id)
                    if c.round == ctx.t and c.status not in ("accepted", "seed") and c.origin != "pruner")
    return dict(sorted(kinds.items()))


def round_record(ctx: RoundContext, b_t: int, drafts: list[Any], outcome: dict[str, Any], evolve_score: float | None,
                 tokens: int) -> dict[str, Any]:
    """The row stored in the loop state's `round_scores` for round `ctx.t`."""
    st = ctx.state
    return {
        "round": ctx.t, "incumbent": st.incumbent_id, "val_score": st.incumbent_score,
        "evolve_score": evolve_score, "budget": b_t, "candidates": len(drafts),
        "accepted": outcome.get("accepted"), "drafts": draft_table(ctx, outcome), "rejections": rejections(ctx),
        "proposer_disabled": st.proposer_disabled, "rollouts_spent": int(ctx.ledger.used("oracle_rollouts")),
        "tokens": tokens, "elapsed_s": round(ctx.ledger.used("wall_clock_s"), 1),
    }
