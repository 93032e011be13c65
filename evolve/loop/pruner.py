"""The pruner (RRSI): the recent-yield prune set, and leave-one-out ablations of accepted edits.

- Recent yield g_t(c) = max ΔS over evaluated edits of component c in rounds t − n_prune <= t' < t
  (−inf when there are none).
- Prune set B_t = components whose recent yield is non-positive, each with the accepted edits of
  that component still in the incumbent (the machinery the proposer may remove). A component with
  no evaluated edit in the window and no accepted machinery carries nothing and is left out, so
  untried components are never discouraged.
- Ablations: the incumbent rebuilt from the seed with one accepted candidate's edits left out, for
  the engine to evaluate; an ablation not worse than the incumbent beyond the noise band is pruned.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from evolve.errors import EditError
from evolve.harness import COMPONENTS, Edit, Harness, apply_edits

NOT_EVALUATED = ("critic_reject", "invalid", "duplicate", "rejected_critic", "rejected_invalid")
"""Verdicts of edits that never got oracle rollouts (they carry no yield)."""


class HistoryItem(Protocol):
    """What the pruner reads from one history entry (one edit of one candidate)."""

    round: int
    component: str
    verdict: str
    delta: float | None


def recent_yield(history: Iterable[HistoryItem], t: int, n_prune: int) -> dict[str, float]:
    """Best ΔS per component over evaluated edits of rounds t − n_prune <= t' < t (−inf if none)."""
    best = dict.fromkeys(COMPONENTS, -math.inf)
    for item in history:
        if item.delta is None or item.verdict in NOT_EVALUATED or not (t - n_prune <= item.round < t):
            continue
        best[item.component] = max(best.get(item.component, -math.inf), float(item.delta))
    return best


@dataclass(frozen=True)
class PruneEntry:
    """A component with no recent yield and its accepted edits still in the incumbent."""

    component: str
    edits: list[Edit] = field(default_factory=list)
    yield_: float = -math.inf

    def describe(self) -> str:
        gain = "no evaluated edit" if self.yield_ == -math.inf else f"best recent ΔS {self.yield_:+.3f}"
        if not self.edits:
            return f"{self.component}: {gain}; no accepted machinery to remove"
        listed = "; ".join(f"{e.summary()} ({e.hypothesis})" if e.hypothesis else e.summary() for e in self.edits)
        return f"{self.component}: {gain}; accepted edits you may remove: {listed}"


def prune_set(history: Iterable[HistoryItem], t: int, n_prune: int,
              incumbent_accepted_edits: Sequence[Edit]) -> list[PruneEntry]:
    """Components with non-positive recent yield, with their accepted edits still in the incumbent."""
    yields = recent_yield(history, t, n_prune)
    entries = []
    for component in COMPONENTS:
        value = yields[component]
        if value > 0:
            continue
        edits = [e for e in incumbent_accepted_edits if e.component == component]
        if value == -math.inf and not edits:
            continue
        entries.append(PruneEntry(component, edits, value))
    return entries


@dataclass(frozen=True)
class Ablation:
    """The incumbent without accepted candidate number `index` of the chain."""

    index: int
    edits: list[Edit]
    """The edits left out."""
    harness: Harness
    skipped: list[Edit] = field(default_factory=list)
    """Later edits that no longer applied without the left-out ones."""


def replay(seed: Harness, chain: Sequence[Sequence[Edit]], skip: int | None = None) -> tuple[Harness, list[Edit]]:
    """Apply the accepted chain to the seed, leaving out candidate `skip`; edits that no longer
    apply are skipped one by one. Returns the harness and the skipped edits."""
    harness, skipped = seed, []
    for index, edits in enumerate(chain):
        if index == skip:
            continue
        try:
            harness = apply_edits(harness, list(edits))
            continue
        except EditError:
            pass
        for edit in edits:
            try:
                harness = apply_edits(harness, [edit])
            except EditError:
                skipped.append(edit)
    return harness, skipped


def ablations(seed: Harness, accepted_chain: Sequence[Sequence[Edit]]) -> list[Ablation]:
    """Leave-one-out harnesses of the accepted chain (those identical to the incumbent are omitted)."""
    full, _ = replay(seed, accepted_chain)
    result = []
    for index, edits in enumerate(accepted_chain):
        harness, skipped = replay(seed, accepted_chain, skip=index)
        if harness.version != full.version:
            result.append(Ablation(index, list(edits), harness, skipped))
    return result


def prune_verdict(delta_s: float, band: float, dc_edit: float, guards: Sequence[str], acc: Any) -> tuple[bool, str]:
    """(prune?, why) for an ablation with score difference `delta_s` (ablation − incumbent) within noise
    band `band`, where the left-out edits cost `dc_edit` relative tokens: prune when they are too small
    (`should_prune`, and they do not save tokens: ΔC_edit ≥ −tolerance) or too expensive
    (ΔC_edit > β0 + β1·ΔS_edit under the cost rule), and the ablation passes the guards."""
    if guards:
        return False, "guard: " + "; ".join(guards)
    if should_prune(delta_s, band):
        if dc_edit >= -acc.cost_tolerance:
            return True, f"no effect beyond the noise band: ablation ΔS {delta_s:+.3f} >= −δ {-band:.3f}"
        return False, (f"needed: the edits save tokens (ΔC_edit {dc_edit:+.2f}), so leaving them out costs more "
                       f"for an ablation ΔS of {delta_s:+.3f}")
    gain = -delta_s
    if acc.cost_rule and dc_edit > acc.beta0 + acc.beta1 * gain + 1e-12:
        return True, (f"too expensive: the edits cost ΔC {dc_edit:+.2f} > {acc.beta0:g}+{acc.beta1:g}·{gain:.3f} "
                      f"for their ΔS {gain:+.3f}")
    return False, f"needed: ablation ΔS {delta_s:+.3f} < −δ {-band:.3f} and the edits pay for their tokens"


def should_prune(delta_s: float, band: float) -> bool:
    """Prune an accepted candidate when its ablation is not worse than the incumbent beyond the noise
    band (ΔS = ablation − incumbent >= −band): the left-out edits add nothing measurable.
    `prune_verdict` adds that the ablation must not be costlier (edits such as a lower `max_tokens`
    save tokens, and leaving them out is no simplification worth a loss)."""
    return delta_s >= -band
