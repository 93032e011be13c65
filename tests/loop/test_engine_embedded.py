"""A short real `evolve run` on the embedded model (policy, proposer, critic and judge alike) that must
accept an edit on its merits."""

from __future__ import annotations

import json

import pytest

from evolve import api
from evolve.bench.benchmark import load_benchmark
from evolve.store import LineageStore

SIZES = {"demo": 8, "evolve": 8, "validation": 20, "test": 10}


@pytest.mark.embedded
def test_short_real_run_on_the_embedded_model(tmp_path):
    source = load_benchmark("extract-city")
    rows = [{"input": t.input, "target": t.target, "split": split}
            for split, n in SIZES.items() for t in source.split(split)[:n]]
    (tmp_path / "city.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "benchmark.yaml").write_text("name: city\ntasks: city.jsonl\nverifier: exact\n", encoding="utf-8")
    tasks = tmp_path
    db = str(tmp_path / "real.db")
    summary = api.run(
        db=db, run_id="real", benchmark=str(tasks), model="embedded", rounds=1, budget=200, evolve_batch=6,
        report_limit=10, ood=[], seed=0,
        proposer={"llm_drafts": 1, "operator_drafts": 2, "proposer_max_tokens": 96, "max_repairs": 0},
        selection={"surrogate.top_k": 2, "surrogate.repair_attempts": 0, "surrogate.realign_attempts": 0,
                   "guards.min_validation_tasks": 10},
    )
    store = LineageStore(db)
    assert store.get_run("real")["status"] == "finished"
    cands = store.candidates("real")
    assert len(cands) >= 2 and {c.status for c in cands} - {"seed", "pending"}
    llm = [c for c in cands if c.origin == "llm"]
    assert llm and llm[0].meta["proposal"]["messages"], "the proposer's context is stored"
    rollouts = store.rollouts("real")
    assert rollouts and all(r.tokens_in > 0 for r in rollouts if r.error is None)
    assert store.usage_by_role("real")["policy"]["tokens_out"] > 0
    for split in ("validation", "test"):  # the report covers at most report_limit tasks per split
        assert summary["seed"][split]["n"] == summary["best"][split]["n"] == min(SIZES[split], 10)
    # the seed answers in full sentences; a demonstration set teaches the bare city name: an edit must be
    # accepted on its merits, and the gain must hold on the held-out test tasks
    assert summary["accepted_edits"], "no edit was accepted"
    assert summary["best"]["validation"]["score"] > summary["seed"]["validation"]["score"]
    assert summary["best"]["test"]["score"] > summary["seed"]["test"]["score"]
