"""The validation tasks a run decides on: the whole split, a fixed sample, or a sample sized to the budget."""

from __future__ import annotations

import json
from collections import Counter
from types import SimpleNamespace

import pytest
from typer.testing import CliRunner

from evolve.bench.benchmark import load_benchmark
from evolve.cli import app
from evolve.errors import ConfigError
from evolve.loop import decision_split
from evolve.selection.config import load_selection_preset
from evolve.store import LineageStore

SIZES = {"demo": 40, "evolve": 60, "validation": 200, "test": 40}


def big_validation(path, negative_share: float = 0.3):
    """A label suite with a 200-task validation split (30% negative by default)."""
    rows, i = [], 0
    for split, n in SIZES.items():
        for j in range(n):
            negative = j < n * negative_share
            text = f"Review {i}: the kettle {'broke after a week' if negative else 'works well'}."
            rows.append({"id": f"r{i}", "input": text, "target": "negative" if negative else "positive",
                         "split": split})
            i += 1
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def config(**kw):
    return SimpleNamespace(**{"seed": 1, "rounds": 5, "evolve_batch": 24, **kw})


def test_the_budget_sample_leaves_every_round_two_full_evaluations():
    # 1,500 rollouts, 5 rounds, a 24-task analyst batch and 60 fresh tasks: n + 5·(24 + 60 + 2·(n + 60)) <= 1500
    n = decision_split.budget_size(200, budget=1500, rounds=5, analyst=24, fresh=60, trials=1, floor=20)
    assert n == 43
    assert n + 5 * (24 + 60 + 2 * (n + 60)) <= 1500 < (n + 1) + 5 * (24 + 60 + 2 * (n + 61))
    assert decision_split.budget_size(60, budget=1500, rounds=5, analyst=24, fresh=36, trials=1, floor=20) == 60
    assert decision_split.budget_size(200, budget=None, rounds=5, analyst=24, fresh=60, trials=1, floor=20) == 200
    assert decision_split.budget_size(200, budget=300, rounds=5, analyst=24, fresh=60, trials=1, floor=20) == 20
    assert decision_split.budget_size(12, budget=300, rounds=5, analyst=24, fresh=60, trials=1, floor=20) == 12
    assert decision_split.budget_size(200, budget=3000, rounds=5, analyst=24, fresh=60, trials=2, floor=20) == 43


def test_the_sample_keeps_label_shares_and_is_fixed_by_the_run_seed(tmp_path):
    bench = load_benchmark(str(big_validation(tmp_path / "b.jsonl")))
    rrsi = load_selection_preset("rrsi", {"acceptance.validation_tasks": 50})
    sample = decision_split.tasks(bench, rrsi, config())
    assert len(sample) == 50 and {t.id for t in sample} <= {t.id for t in bench.split("validation")}
    assert Counter(t.target for t in sample) == {"negative": 15, "positive": 35}
    assert [t.id for t in decision_split.tasks(bench, rrsi, config())] == [t.id for t in sample]
    assert {t.id for t in decision_split.tasks(bench, rrsi, config(seed=2))} != {t.id for t in sample}
    every = load_selection_preset("rrsi", {"acceptance.validation_tasks": "all"})
    assert decision_split.tasks(bench, every, config()) == bench.split("validation")
    # 60 evolve tasks: 36 fresh beside the 24-task batch; n + 5·(24 + 36 + 2·(n + 36)) <= 1500: n = 76
    assert len(decision_split.tasks(bench, load_selection_preset("rrsi"), config())) == 76
    assert decision_split.tasks(bench, load_selection_preset("skilllift"), config()) == bench.split("validation")


def test_a_bad_setting_is_refused_naming_the_field():
    with pytest.raises(ConfigError, match="validation_tasks"):
        load_selection_preset("rrsi", {"acceptance.validation_tasks": 0})
    with pytest.raises(ConfigError, match="validation_tasks"):
        load_selection_preset("rrsi", {"acceptance.validation_tasks": "some"})
    with pytest.raises(ConfigError, match="validation_tasks"):
        load_selection_preset("rrsi", {"acceptance.validation_tasks": None})


def test_a_sample_below_the_guard_minimum_is_refused_before_the_run(tmp_path):
    path, db = big_validation(tmp_path / "b.jsonl"), tmp_path / "small.db"
    run_file = tmp_path / "run.yaml"
    run_file.write_text("selection:\n  acceptance.validation_tasks: 10\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["run", "--model", "mock", "--benchmark", str(path), "--config",
                                      str(run_file), "--db", str(db)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "acceptance.validation_tasks: decisions on 10 of the validation split's 200 tasks" in \
        " ".join(result.output.split())
    assert not db.exists() or not LineageStore(str(db)).list_runs()


def test_a_run_decides_on_its_sample_and_says_so(tmp_path):
    path, db = big_validation(tmp_path / "b.jsonl"), str(tmp_path / "s.db")
    args = ["run", "--model", "mock", "--benchmark", str(path), "--rounds", "2", "--budget", "600", "--seed", "1"]
    plan = json.loads(CliRunner().invoke(app, [*args, "--dry-run"]).stdout)
    # n + 2·(24 + 36 + 2·(n + 36)) <= 600: n = 67
    assert plan["decision_tasks"] == 67 and "decisions on 67 of 200 validation tasks" in " ".join(plan["estimate"])
    result = CliRunner().invoke(app, [*args, "--db", db])
    assert result.exit_code == 0, result.output
    assert "decisions on a sample of 67 of the 200 validation tasks" in " ".join(result.output.split())
    store = LineageStore(db)
    run_id = store.list_runs()[0]["id"]
    reported = {c.id for c in store.candidates(run_id) if c.origin == "seed" or c.status == "accepted"}
    seen: dict[str, set[str]] = {}
    for r in store.rollouts(run_id):
        if r.split == "validation" and r.candidate_id not in reported:
            seen.setdefault(r.candidate_id, set()).add(r.task_id)
    assert seen, "some candidate was evaluated on validation"
    sample = {t.id for t in decision_split.tasks(load_benchmark(str(path)), load_selection_preset(
        "rrsi", {"budgets.oracle_rollouts": 600}), config(rounds=2))}
    assert len(sample) == 67 and set().union(*seen.values()) <= sample
