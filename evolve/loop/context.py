"""What the steps of a round share: the run's parts, the store, the oracle, the budget ledger, the
loop state and seeded randomness. The engine builds one `RoundContext` per round and hands it to
each step in turn; the steps never see the engine."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evolve.harness import Edit, Harness
from evolve.loop.oracle import Oracle
from evolve.loop.setup import RunParts
from evolve.loop.state import LoopState
from evolve.selection.budget import Budget
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


@dataclass
class RoundContext:
    """One round's view of the run (see module docstring)."""

    store: LineageStore
    run_id: str
    parts: RunParts
    oracle: Oracle
    ledger: Budget
    state: LoopState
    t: int
    progress: Progress

    @property
    def cfg(self) -> Any:
        return self.parts.config

    @property
    def loop(self) -> Any:
        return self.parts.loop

    @property
    def sel(self) -> Any:
        return self.parts.selection

    @property
    def benchmark(self) -> Any:
        return self.parts.benchmark

    @property
    def seed_id(self) -> str:
        return f"{self.run_id}.seed"

    def rng(self, step: str) -> random.Random:
        """Seeded per (run seed, round, step): steps stay reproducible when others change."""
        return random.Random(f"{self.cfg.seed}:{self.t}:{step}")

    def harness(self, candidate_id: str) -> Harness:
        return self.store.get_harness(self.store.get_candidate(candidate_id).harness_hash)

    def role_usage(self, role: str) -> tuple[int, int]:
        """(calls, tokens) of `role` across the run's metered backends since their last flush."""
        calls = tokens = 0
        for backend in self.parts.metered():
            for record in backend.totals():
                if record.role == role:
                    calls += record.calls - record.cached
                    tokens += record.tokens_in + record.tokens_out
        return calls, tokens
