"""Proposer training data from the lineage: one sample per proposal, preference pairs per parent.

A *group* is one proposer call site: the same run, parent (incumbent) and round. Every draft of
the round in that group saw the same context, so drafts of one group can be compared.

Which candidates become samples:
- origin `llm`: the rendered context `meta["proposal"]["messages"]`; the target is the canonical
  reply `{"edits": [...]}` of its stored edits, or, for a draft without edits (invalid reply), the
  model's raw reply (a rejected example).
- programmatic operators (`fewshot`, `section_removal`, `control`, ...): their edits are rendered as
  the canonical reply the proposer should have written, with the context of an `llm` draft of the
  same group (skipped when the group has none).
- skipped: the seed, pruner ablations, and candidates still `pending` (an unfinished round).

Reward (`reward_of`): accepted 1.0; rejected by acceptance with a measured ΔS:
`0.5 * clip(ΔS / delta_scale, -1, 1)`; rejected without ΔS (screened out, stopped early) 0.0;
later pruned 0.25; rejected by the critic (or as a repeated direction) -0.5; invalid -1.0.

JSONL formats (written by `write_jsonl`), one object per line:
- `samples.jsonl`: `ProposalSample` — `group`, `split` (train/heldout), `run_id`, `candidate_id`,
  `parent_id`, `parent_hash`, `round`, `budget`, `origin`, `status`, `critic` (pass/reject/null),
  `delta` (ΔS on validation or null), `accepted`, `reward`, `messages` (chat list), `reply`.
- `pairs.jsonl`: `PreferencePair` — `group`, `split`, `messages`, `chosen`, `rejected` (replies),
  `chosen_id`, `rejected_id`, `chosen_reward`, `rejected_reward`.

Pairs: within a group, every two samples with different replies whose rewards differ by at least
`margin`; the higher reward is chosen (so accepted beats rejected and, among rejected drafts,
the larger ΔS wins). The prompt is the chosen sample's context.

The split is by group: the sorted group keys are shuffled with `random.Random(seed)` and the first
`ceil(heldout * n)` are held out: at least one when there are two or more groups, and at least
one group always stays for training.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evolve.errors import ConfigError
from evolve.store import LineageStore

Split = Literal["train", "heldout"]
_EDIT_KEYS = ("op", "component", "target", "value", "hypothesis")
_SKIPPED_STATUSES = {"seed", "pending", "evaluated", "ablation"}


class ProposalSample(BaseModel):
    """One proposal with its context, reply and measured outcome."""

    model_config = ConfigDict(extra="forbid")

    group: str
    split: Split = "train"
    run_id: str
    candidate_id: str
    parent_id: str
    parent_hash: str
    round: int
    budget: int = 1
    origin: str
    status: str
    critic: Literal["pass", "reject"] | None = None
    delta: float | None = None
    accepted: bool = False
    reward: float
    messages: list[dict[str, str]]
    reply: str


class PreferencePair(BaseModel):
    """A chosen and a rejected reply to the same context."""

    model_config = ConfigDict(extra="forbid")

    group: str
    split: Split = "train"
    messages: list[dict[str, str]]
    chosen: str
    rejected: str
    chosen_id: str
    rejected_id: str
    chosen_reward: float
    rejected_reward: float


class ProposerDataset(BaseModel):
    """Samples and pairs of some runs, split by group."""

    model_config = ConfigDict(extra="forbid")

    runs: list[str]
    seed: int = 0
    samples: list[ProposalSample] = Field(default_factory=list)
    pairs: list[PreferencePair] = Field(default_factory=list)
    heldout_groups: list[str] = Field(default_factory=list)

    def part(self, split: Split) -> ProposerDataset:
        """The samples and pairs of one split."""
        return self.model_copy(update={"samples": [s for s in self.samples if s.split == split],
                                       "pairs": [p for p in self.pairs if p.split == split]})

    def sizes(self) -> dict[str, int]:
        return {f"{kind}_{split}": sum(1 for x in items if x.split == split)
                for kind, items in (("samples", self.samples), ("pairs", self.pairs))
                for split in ("train", "heldout")}


def canonical_reply(edits: Sequence[dict[str, Any]]) -> str:
    """The JSON reply a proposer writes for `edits` (the proposer's reply schema, keys in order)."""
    return json.dumps({"edits": [{k: e.get(k) for k in _EDIT_KEYS} | {"hypothesis": e.get("hypothesis") or ""}
                                 for e in edits]}, ensure_ascii=False)


def reward_of(status: str, delta: float | None, delta_scale: float = 0.1) -> float:
    """The scalar reward of an outcome (see the module docstring)."""
    if status == "accepted":
        return 1.0
    if status == "pruned":
        return 0.25
    if status == "rejected_acceptance":
        if delta is None:
            return 0.0
        return 0.5 * max(-1.0, min(1.0, delta / delta_scale))
    if status == "rejected_critic":
        return -0.5
    return -1.0


def _critic_verdict(critiques: list[dict[str, Any]]) -> Literal["pass", "reject"] | None:
    if not critiques:
        return None
    return "reject" if any(c["verdict"] == "reject" for c in critiques) else "pass"


def _run_samples(store: LineageStore, run_id: str, delta_scale: float) -> list[ProposalSample]:
    samples, contexts = [], {}
    candidates = [c for c in store.candidates(run_id)
                  if c.status not in _SKIPPED_STATUSES and c.parent_id and c.origin not in ("seed", "pruner")]
    for c in candidates:
        proposal = c.meta.get("proposal") or {}
        if c.origin == "llm" and proposal.get("messages"):
            contexts.setdefault(f"{run_id}:{c.parent_id}:{c.round}", proposal["messages"])
    for c in candidates:
        group = f"{run_id}:{c.parent_id}:{c.round}"
        proposal = c.meta.get("proposal") or {}
        messages = proposal.get("messages") or contexts.get(group)
        if not messages:
            continue
        edits = store.edits(c.id)
        reply = canonical_reply(edits) if edits else str(proposal.get("reply") or "")
        if not reply.strip():
            continue
        samples.append(ProposalSample(
            group=group, run_id=run_id, candidate_id=c.id, parent_id=c.parent_id or "",
            parent_hash=store.get_candidate(c.parent_id).harness_hash, round=c.round,
            budget=int(c.meta.get("budget") or max(1, len(edits))), origin=c.origin, status=c.status,
            critic=_critic_verdict(store.critiques(c.id)), delta=c.delta, accepted=c.status == "accepted",
            reward=reward_of(c.status, c.delta, delta_scale), messages=messages, reply=reply))
    return samples


def heldout_groups(groups: Sequence[str], seed: int, fraction: float) -> list[str]:
    """The groups held out from training (deterministic for a seed)."""
    keys = sorted(set(groups))
    random.Random(seed).shuffle(keys)
    if fraction <= 0 or len(keys) < 2:
        return []
    n = max(1, min(math.ceil(fraction * len(keys)), len(keys) - 1))
    return sorted(keys[:n])


def make_pairs(samples: Sequence[ProposalSample], margin: float = 0.1) -> list[PreferencePair]:
    """Preference pairs within each group (see the module docstring)."""
    by_group: dict[str, list[ProposalSample]] = {}
    for s in samples:
        by_group.setdefault(s.group, []).append(s)
    pairs = []
    for group in sorted(by_group):
        ranked = sorted(by_group[group], key=lambda s: (-s.reward, s.candidate_id))
        for i, hi in enumerate(ranked):
            for lo in ranked[i + 1:]:
                if hi.reward - lo.reward < margin or hi.reply == lo.reply:
                    continue
                pairs.append(PreferencePair(
                    group=group, split=hi.split, messages=hi.messages, chosen=hi.reply, rejected=lo.reply,
                    chosen_id=hi.candidate_id, rejected_id=lo.candidate_id, chosen_reward=hi.reward,
                    rejected_reward=lo.reward))
    return pairs


def build_dataset(store: LineageStore, run_ids: Sequence[str], *, seed: int = 0, heldout: float = 0.25,
                  margin: float = 0.1, delta_scale: float = 0.1) -> ProposerDataset:
    """Samples and preference pairs of `run_ids`, with a seeded held-out split of the groups."""
    if not run_ids:
        raise ConfigError("--runs: name at least one run id (see `evolve status`)")
    if not 0 <= heldout < 1:
        raise ConfigError(f"--heldout must be in [0, 1), got {heldout}")
    samples: list[ProposalSample] = []
    for run_id in run_ids:
        store.get_run(run_id)  # a StoreError naming the unknown run
        samples += _run_samples(store, run_id, delta_scale)
    held = heldout_groups([s.group for s in samples], seed, heldout)
    held_set = set(held)
    samples = [s.model_copy(update={"split": "heldout" if s.group in held_set else "train"}) for s in samples]
    return ProposerDataset(runs=list(run_ids), seed=seed, samples=samples, pairs=make_pairs(samples, margin),
                           heldout_groups=held)


def write_jsonl(dataset: ProposerDataset, folder: str | Path) -> dict[str, Path]:
    """Write `samples.jsonl` and `pairs.jsonl` into `folder`; return their paths."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"samples": out / "samples.jsonl", "pairs": out / "pairs.jsonl"}
    for kind, items in (("samples", dataset.samples), ("pairs", dataset.pairs)):
        with paths[kind].open("w", encoding="utf-8") as fh:
            for item in items:
                fh.write(item.model_dump_json() + "\n")
    return paths


def read_jsonl(path: str | Path, kind: type[BaseModel]) -> list[Any]:
    """Read one JSONL file written by `write_jsonl` (`kind`: ProposalSample or PreferencePair)."""
    with Path(path).open(encoding="utf-8") as fh:
        return [kind.model_validate_json(line) for line in fh if line.strip()]
