"""The train commands through typer's runner: JSONL output, one-line user errors."""

from __future__ import annotations

import importlib.util
import json

from train_lineage import build
from typer.testing import CliRunner

from evolve.cli import app

runner = CliRunner()


def _db(tmp_path) -> str:
    db = str(tmp_path / "l.db")
    build(db, runs=("ra",), rounds=2).close()
    return db


def test_train_dataset_writes_jsonl(tmp_path):
    db = _db(tmp_path)
    result = runner.invoke(app, ["train-dataset", "--runs", "ra", "--db", db, "--out", str(tmp_path / "d"),
                                 "--heldout", "0.5"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.output)
    assert info["samples_train"] == 5 and info["samples_heldout"] == 5 and len(info["heldout_groups"]) == 1
    lines = (tmp_path / "d" / "pairs.jsonl").read_text().splitlines()
    assert len(lines) == info["pairs_train"] + info["pairs_heldout"] == 20


def test_user_errors_are_one_line(tmp_path, monkeypatch):
    db = _db(tmp_path)
    base = ["train-proposer", "--runs", "ra", "--db", db, "--out", str(tmp_path / "o")]
    bad = runner.invoke(app, [*base, "--method", "ppo"])
    assert bad.exit_code == 2 and "--method 'ppo' is unknown; valid: dpo, rwsft" in bad.output
    unknown = runner.invoke(app, ["train-dataset", "--runs", "zz", "--db", db, "--out", str(tmp_path / "d")])
    assert unknown.exit_code == 2 and "unknown run 'zz'" in unknown.output
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    missing = runner.invoke(app, base)
    assert missing.exit_code == 2
    assert missing.output.strip().splitlines()[-1] == (
        "error: evolve train-proposer needs the 'torch' package: pip install 'evolve-harness[train]'")


def test_too_little_data_stops_before_loading_a_model(tmp_path):
    db = str(tmp_path / "bad.db")
    store = build(db, runs=("ra",), rounds=1)
    for c in store.candidates("ra"):
        if c.origin != "seed":
            store.update_candidate(c.id, status="rejected_invalid")
    store.close()
    result = runner.invoke(app, ["train-proposer", "--runs", "ra", "--db", db, "--out", str(tmp_path / "o"),
                                 "--method", "rwsft", "--base", str(tmp_path / "no-model"), "--heldout", "0"])
    assert result.exit_code == 2, result.output
    assert result.output.strip().splitlines()[-1] == (
        "error: too little data for rwsft: 0 training sample(s) with reward > 0 in runs ra (minimum 2); "
        "add runs to --runs")


def test_too_little_data_is_reported_before_a_missing_train_extra(tmp_path, monkeypatch):
    db = str(tmp_path / "bad.db")
    store = build(db, runs=("ra",), rounds=1)
    for c in store.candidates("ra"):
        if c.origin != "seed":
            store.update_candidate(c.id, status="rejected_invalid")
    store.close()
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    result = runner.invoke(app, ["train-proposer", "--runs", "ra", "--db", db, "--out", str(tmp_path / "o"),
                                 "--method", "dpo", "--heldout", "0"])
    assert result.exit_code == 2, result.output
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("error: too little data for dpo") and "torch" not in last
