"""The evolution engine: it sequences the steps of one regularized round after another and stores
the loop state between them; the steps themselves live in their own modules and share only a
`RoundContext` (parts, store, oracle, budget ledger, state, seeded rng).

A round (DESIGN §4): analyst → drafts (LLM proposer + programmatic operators) → candidates
(budget b_t, duplicates and banned directions dropped) → critic → surrogate screen → paired,
acceptance-aware allocation of oracle rollouts → acceptance (RRSI Algorithm 2) → rubric
re-alignment → pruner → memory. The loop state is written when a round starts and when it ends;
a killed round is purged (with the rollouts it ran) and rerun, so a resumed run charges and
decides exactly as an uninterrupted one (model answers come back from the response cache).
"""

from __future__ import annotations

from typing import Any

from evolve.bench.evaluation import apply_splits
from evolve.errors import BudgetExhausted
from evolve.loop import ablation, allocation, drafting, steps, surrogates
from evolve.loop.context import Progress, RoundContext
from evolve.loop.final import final_report
from evolve.loop.heartbeat import Heartbeat
from evolve.loop.oracle import Oracle, summarize
from evolve.loop.rounds import round_record
from evolve.loop.setup import RunParts
from evolve.loop.state import STATE_KEY, LoopState
from evolve.selection.budget import Budget
from evolve.store import LineageStore


class Engine:
    """Runs (or resumes) one evolution run stored in `store` under `run_id`."""

    def __init__(self, store: LineageStore, run_id: str, parts: RunParts, progress: Progress | None = None) -> None:
        self.store, self.run_id, self.parts = store, run_id, parts
        self.cfg = parts.config
        self.progress = progress or (lambda event: None)

    async def run(self) -> dict[str, Any]:
        """Run the remaining rounds, then the final seed-vs-best report; return the summary."""
        with Heartbeat(lambda: self.store.heartbeat(self.run_id)):
            return await self._run()

    async def _run(self) -> dict[str, Any]:
        state = self._load_state()
        ledger = Budget(self.parts.selection.budgets, spent=state.budget_spent)
        oracle = Oracle(self.store, self.run_id, self.parts.policy, trials=self.parts.trials, seed=self.cfg.seed,
                        ledger=ledger, executor=self.parts.executor)
        ctx = RoundContext(self.store, self.run_id, self.parts, oracle, ledger, state, state.next_round,
                           self.progress)
        for t in range(state.next_round, self.cfg.rounds):
            if state.stopped or self._out_of_budget(ctx):
                break
            ctx.t = t
            self.store.purge_round(self.run_id, t, rollouts_after=state.rollout_mark)
            state.rollout_mark = self.store.last_rollout_id(self.run_id)
            self._save_state(ctx)
            self.progress({"event": "round_start", "round": t, "rounds": self.cfg.rounds})
            await self.run_round(ctx)
            state.rollout_mark = None  # the round is complete: its rollouts are kept from now on
            self._flush_usage()
            self._save_state(ctx)
            self.progress({"event": "round_end", "round": t, "score": state.incumbent_score,
                           "incumbent": state.incumbent_id, "spent": state.rollouts_spent,
                           "budget": self.parts.budget, "stopped": state.stopped, "tokens": self._tokens()})
        summary = await final_report(ctx)
        self._flush_usage()
        self.store.update_run(self.run_id, status="finished", summary=summary)
        return summary

    async def run_round(self, ctx: RoundContext) -> None:
        """One round: every step in order, each stored before the next."""
        st = ctx.state
        incumbent = ctx.harness(st.incumbent_id)
        try:
            analysis = await steps.analyse(ctx, incumbent)
        except BudgetExhausted as exc:
            st.stopped = f"oracle budget exhausted before round {ctx.t}: {exc}"
            return
        b_t = steps.edit_budget(ctx)
        drafts = await drafting.draft(ctx, incumbent, analysis.evidence, b_t)
        ctx.ledger.charge_usage("proposer_tokens", ctx.role_usage("proposer")[1])
        cands = drafting.register(ctx, incumbent, drafts, b_t)
        cands = await steps.critique(ctx, incumbent, cands)
        cands = await surrogates.screen(ctx, cands)
        outcome = await allocation.select(ctx, incumbent, cands, analysis.batch)
        await surrogates.realign(ctx, incumbent, cands, outcome)
        if ctx.loop.pruner and not st.stopped:
            await ablation.prune(ctx, analysis.batch)
        steps.remember(ctx, cands, outcome, analysis.evidence)
        ctx.ledger.charge_usage("surrogate_calls", ctx.role_usage("surrogate")[0])
        st.rollouts_spent = int(ctx.ledger.used("oracle_rollouts"))
        st.round_scores.append(round_record(ctx, b_t, drafts, outcome, summarize(analysis.records)["score"],
                                            self._tokens()))
        st.next_round = ctx.t + 1

    def _out_of_budget(self, ctx: RoundContext) -> bool:
        """Stop before a round the wall clock no longer affords."""
        if not ctx.ledger.can_afford("wall_clock_s"):
            ctx.state.stopped = f"wall-clock budget of {self.parts.selection.budgets.wall_clock_s:g} s exhausted"
        return bool(ctx.state.stopped)

    def _tokens(self) -> int:
        return sum(int(v["tokens_in"] or 0) + int(v["tokens_out"] or 0)
                   for v in self.store.usage_by_role(self.run_id).values())

    def _flush_usage(self) -> None:
        for backend in self.parts.metered():
            self.store.add_calls(self.run_id, backend.drain())
        self.store.heartbeat(self.run_id)

    def _load_state(self) -> LoopState:
        raw = self.store.get_state(self.run_id, STATE_KEY)
        if raw:
            stored = self.store.get_state(self.run_id, "splits")
            if stored:  # resume on the splits the run started with
                apply_splits(self.parts.benchmark, stored, f"run {self.run_id}")
            return LoopState.model_validate(raw)
        seed_id = f"{self.run_id}.seed"
        self.store.add_candidate(seed_id, self.run_id, self.parts.seed_harness, parent_id=None, round=-1,
                                 status="seed", origin="seed")
        self.store.put_state(self.run_id, "splits", self.parts.benchmark.split_ids())
        state = LoopState(incumbent_id=seed_id)
        self.store.put_state(self.run_id, STATE_KEY, state.model_dump(mode="json"))
        return state

    def _save_state(self, ctx: RoundContext) -> None:
        st = ctx.state
        st.budget_spent = ctx.ledger.snapshot()
        st.rollouts_spent = int(ctx.ledger.used("oracle_rollouts"))
        self.store.put_state(self.run_id, STATE_KEY, st.model_dump(mode="json"))
        self.store.put_state(self.run_id, "round_scores", st.round_scores)
        self.store.put_state(self.run_id, "incumbent", st.incumbent_id)
