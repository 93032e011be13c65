"""The evolution engine: one regularized round after another, every step stored before the next.

A round (DESIGN §4): analyst → proposer drafts (LLM + programmatic operators) → candidates
(budget b_t, duplicates and banned directions dropped) → critic → surrogate screen → bandit
allocation of paired oracle rollouts → acceptance (RRSI Algorithm 2) → rubric re-alignment →
pruner → memory. The loop state is written after each round; a killed round is purged and rerun,
and since rollouts and model answers are stored, it reproduces the same lineage.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evolve.errors import BudgetExhausted, EditError
from evolve.harness import Edit, Harness, apply_edits
from evolve.loop import ablation, steps, surrogates
from evolve.loop.final import final_report
from evolve.loop.oracle import Oracle, summarize
from evolve.loop.setup import RunParts
from evolve.loop.state import STATE_KEY, LoopState
from evolve.store import LineageStore

Progress = Callable[[dict[str, Any]], None]


@dataclass
class Cand:
    """A candidate inside one round."""

    id: str
    slot: int
    harness: Harness
    edits: list[Edit]
    origin: str
    surrogate: float | None = None
    meta: dict[str, Any] = field(default_factory=dict)


class Engine:
    """Runs (or resumes) one evolution run stored in `store` under `run_id`."""

    def __init__(self, store: LineageStore, run_id: str, parts: RunParts, progress: Progress | None = None) -> None:
        self.store, self.run_id, self.parts = store, run_id, parts
        self.cfg, self.loop, self.sel = parts.config, parts.loop, parts.selection
        self.progress = progress or (lambda event: None)
        self.oracle = Oracle(store, run_id, parts.policy, trials=self.cfg.trials, seed=self.cfg.seed)
        self.started = time.monotonic()

    # -- driver ----------------------------------------------------------------------------------

    async def run(self) -> dict[str, Any]:
        """Run the remaining rounds, then the final seed-vs-best report; return the summary."""
        state = self._load_state()
        self.oracle.budget_left = max(0, self.cfg.budget - state.rollouts_spent)
        for t in range(state.next_round, self.cfg.rounds):
            if state.stopped:
                break
            self.store.purge_round(self.run_id, t)
            self.progress({"event": "round_start", "round": t, "rounds": self.cfg.rounds})
            try:
                await self._round(t, state)
            except BudgetExhausted as exc:
                state.stopped = f"oracle budget exhausted in round {t}: {exc}"
                self.store.purge_round(self.run_id, t)
            state.rollouts_spent = self.cfg.budget - (self.oracle.budget_left or 0)
            self._flush_usage()
            self._save_state(state)
            self.progress({"event": "round_end", "round": t, "score": state.incumbent_score,
                           "incumbent": state.incumbent_id, "spent": state.rollouts_spent,
                           "budget": self.cfg.budget, "stopped": state.stopped,
                           "tokens": self._tokens()})
        summary = await final_report(self, state)
        self._flush_usage()
        self.store.update_run(self.run_id, status="finished", summary=summary)
        return summary

    def _tokens(self) -> int:
        return sum(int(v["tokens_in"] or 0) + int(v["tokens_out"] or 0)
                   for v in self.store.usage_by_role(self.run_id).values())

    def _flush_usage(self) -> None:
        for backend in self.parts.metered():
            self.store.add_calls(self.run_id, backend.drain())
        self.store.heartbeat(self.run_id)

    def rng(self, t: int, step: str) -> random.Random:
        """Seeded per (run seed, round, step): steps stay reproducible when others change."""
        return random.Random(f"{self.cfg.seed}:{t}:{step}")

    # -- state -----------------------------------------------------------------------------------

    def _load_state(self) -> LoopState:
        raw = self.store.get_state(self.run_id, STATE_KEY)
        if raw:
            return LoopState.model_validate(raw)
        seed_id = f"{self.run_id}.seed"
        self.store.add_candidate(seed_id, self.run_id, self.parts.seed_harness, parent_id=None, round=-1,
                                 status="seed", origin="seed")
        state = LoopState(incumbent_id=seed_id)
        self._save_state(state)
        return state

    def _save_state(self, state: LoopState) -> None:
        self.store.put_state(self.run_id, STATE_KEY, state.model_dump(mode="json"))
        self.store.put_state(self.run_id, "round_scores", state.round_scores)
        self.store.put_state(self.run_id, "incumbent", state.incumbent_id)

    def harness(self, candidate_id: str) -> Harness:
        return self.store.get_harness(self.store.get_candidate(candidate_id).harness_hash)

    # -- one round -------------------------------------------------------------------------------

    async def _round(self, t: int, st: LoopState) -> None:
        incumbent = self.harness(st.incumbent_id)
        evidence, evolve_tasks, inc_evolve = await steps.analyse(self, t, incumbent, st)
        b_t = steps.edit_budget_for(self, t, st)
        drafts = await steps.draft(self, t, incumbent, evidence, b_t, st)
        cands = self._register(t, incumbent, drafts, b_t, st)
        cands = await steps.critique(self, t, incumbent, cands, st)
        cands = await surrogates.screen(self, t, cands, st)
        outcome = await steps.select(self, t, incumbent, cands, st, evolve_tasks)
        await surrogates.realign(self, t, incumbent, cands, outcome, st)
        if self.loop.pruner and outcome.get("accepted") is None:
            await ablation.prune(self, t, st)
        steps.remember(self, t, cands, outcome, evidence, st)
        evolve_summary = summarize(inc_evolve)
        st.round_scores.append({
            "round": t, "incumbent": st.incumbent_id, "val_score": st.incumbent_score,
            "evolve_score": evolve_summary["score"], "budget": b_t, "candidates": len(drafts),
            "rollouts_spent": self.cfg.budget - (self.oracle.budget_left or 0), "tokens": self._tokens(),
            "elapsed_s": round(time.monotonic() - self.started, 1),
        })
        st.next_round = t + 1

    def _register(self, t: int, incumbent: Harness, drafts: list[Any], b_t: int, st: LoopState) -> list[Cand]:
        """Store every draft as a candidate; return the ones that are valid, new and not banned."""
        pending: list[Cand] = []
        seen_versions = {incumbent.version}
        previous = [Edit.model_validate({k: e[k] for k in ("op", "component", "target", "value")})
                    for e in self.store.run_edits(self.run_id) if e["round"] < t]
        for slot, draft in enumerate(drafts):
            cid = f"{self.run_id}.{t}.{slot}"
            meta = {"proposal": {"messages": draft.messages, "reply": draft.reply}, "budget": b_t}
            edits = list(draft.edits)[:b_t]
            reason, harness = self._validate_draft(draft, incumbent, edits, seen_versions, st, previous)
            status = "pending" if reason is None else ("rejected_invalid" if reason.startswith("invalid")
                                                        else "rejected_critic")
            self.store.add_candidate(cid, self.run_id, harness or incumbent, parent_id=st.incumbent_id, round=t,
                                     slot=slot, status=status, origin=draft.origin, edits=edits, meta=meta)
            if reason is not None:
                self.store.update_candidate(cid, reason=reason)
                if status == "rejected_critic":
                    self.store.add_critique(cid, "novelty", "reject", reason)
                st.record(t, cid, edits, reason.split(":")[0], None)
                continue
            seen_versions.add(harness.version)
            pending.append(Cand(cid, slot, harness, edits, draft.origin))
            self.progress({"event": "candidate", "round": t, "id": cid, "origin": draft.origin})
        return pending

    def _validate_draft(self, draft: Any, incumbent: Harness, edits: list[Edit], seen: set[str],
                        st: LoopState, previous: list[Edit]) -> tuple[str | None, Harness | None]:
        if draft.error or not edits:
            return f"invalid: {draft.error or 'no edits proposed'}", None
        try:
            harness = apply_edits(incumbent, edits)
        except EditError as exc:
            return f"invalid: {exc}", None
        if harness.version in seen:
            return "invalid: duplicate of the incumbent or of another draft of this round", None
        if self.loop.novelty:
            banned = steps.banned_reason(self, edits, st, previous)
            if banned:
                return f"duplicate: {banned}", harness
        return None, harness
