"""Lineage store: schema, migrations, LineageStore (all SQL), graph views."""

from evolve.store.lineage import LineageStore, normalize_url
from evolve.store.records import CANDIDATE_STATUSES, CallRecord, CandidateRecord, RolloutRecord

__all__ = ["CANDIDATE_STATUSES", "CallRecord", "CandidateRecord", "LineageStore", "RolloutRecord", "normalize_url"]
