"""Fine-tuning the proposer from the lineage (the `train` extra): dataset building, DPO and
reward-weighted SFT, and the `trained:DIR` backend (evolve.backends.trained)."""

from evolve.train.dataset import (
    PreferencePair,
    ProposalSample,
    ProposerDataset,
    build_dataset,
    canonical_reply,
    read_jsonl,
    reward_of,
    write_jsonl,
)

__all__ = [
    "PreferencePair",
    "ProposalSample",
    "ProposerDataset",
    "build_dataset",
    "canonical_reply",
    "read_jsonl",
    "reward_of",
    "write_jsonl",
]
