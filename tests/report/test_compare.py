"""`evolve compare`: presets grouped per benchmark, medians and ranges over seeds, marks against a reference."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from evolve.errors import ConfigError
from evolve.report.compare import compare, warnings
from evolve.store import LineageStore

SETTINGS = {"model": "embedded", "harness": "minimal", "rounds": 5, "budget": None, "report_limit": 200,
            "evolve_batch": 24}


def _stats(score: float, tokens: float = 100.0) -> dict[str, Any]:
    return {"score": score, "n": 100, "policy_tokens": tokens}


def summary(test: float, *, seed_test: float = 0.3, ood: float | None = None, tokens: float = 100.0,
            accepted: bool = True, flags: list[str] | None = None, spent: int = 1500) -> dict[str, Any]:
    seed = {"validation": _stats(0.3, 70.0), "test": _stats(seed_test, 70.0)}
    best = {"evolve": _stats(0.99, tokens), "validation": _stats(test + 0.05, tokens), "test": _stats(test, tokens)}
    best["validation"]["balanced"] = best["test"]["balanced"] = test - 0.1
    if ood is not None:
        seed["ood:other"], best["ood:other"] = _stats(0.2, 70.0), _stats(ood, tokens)
    return {"seed": seed, "best": best, "baselines": {"test": {"majority": 0.5}}, "flags": flags or [],
            "seed_id": "s", "best_id": "b" if accepted else "s", "rollouts_spent": spent, "budget": 1500}


def run(run_id: str, preset: str, seed: int, summ: dict[str, Any], *, benchmark: str = "bench",
        status: str = "finished", **config: Any) -> dict[str, Any]:
    return {"id": run_id, "kind": "run", "status": status, "preset": preset, "seed": seed, "benchmark": benchmark,
            "model": "embedded", "config": {**SETTINGS, **config}, "summary": summ}


def three_seeds() -> list[dict[str, Any]]:
    return [
        run("r1", "rrsi", 1, summary(0.80, ood=0.60, tokens=200)),
        run("r2", "rrsi", 2, summary(0.70, ood=0.50, tokens=100, accepted=False)),
        run("r3", "rrsi", 3, summary(0.90, ood=0.40, tokens=300)),
        run("u1", "unregularized", 1, summary(0.75, ood=0.55, tokens=400, flags=["below seed on ood:other"])),
        run("u2", "unregularized", 2, summary(0.85, ood=0.45, tokens=500)),
        run("u3", "unregularized", 3, summary(0.70, ood=0.65, tokens=250)),
    ]


def test_medians_ranges_and_marks_against_the_reference() -> None:
    result = compare(three_seeds())
    rrsi, unreg = result.groups
    assert (rrsi.preset, unreg.preset) == ("rrsi", "unregularized")
    assert rrsi.seeds == [1, 2, 3] and list(rrsi.splits) == ["validation", "test", "ood:other"]
    test = rrsi.splits["test"]
    assert (test.best.median, test.best.low, test.best.high) == (0.80, 0.70, 0.90)
    assert test.seed.median == 0.3 and test.majority == 0.5
    assert test.balanced.median == pytest.approx(0.70) and test.balanced.low == pytest.approx(0.60)
    assert rrsi.splits["validation"].balanced is None  # no majority baseline there: not a label split
    assert unreg.splits["test"].best.median == 0.75
    assert test.at_least_reference is True                      # 0.80 >= 0.75
    assert rrsi.splits["ood:other"].at_least_reference is False  # 0.50 < 0.55
    assert rrsi.tokens_split == "test" and rrsi.tokens.median == 200 and unreg.tokens.median == 400
    assert rrsi.tokens_at_most_reference is True
    assert unreg.splits["test"].at_least_reference is None and unreg.tokens_at_most_reference is None
    assert (rrsi.accepted_nothing, rrsi.flagged, unreg.accepted_nothing, unreg.flagged) == (1, 0, 0, 1)
    assert "evolve" not in rrsi.splits


def test_seed_by_seed_counts_against_the_reference() -> None:
    """The medians can favour a preset while single seeds do not: the pairs count both."""
    rrsi, unreg = compare(three_seeds()).groups
    assert rrsi.splits["test"].by_seed == {1: 0.80, 2: 0.70, 3: 0.90}
    # test 0.80/0.70/0.90 vs 0.75/0.85/0.70; ood 0.60/0.50/0.40 vs 0.55/0.45/0.65
    assert rrsi.splits["test"].paired.model_dump() == {"ahead": 2, "tied": 0, "behind": 1}
    assert rrsi.splits["ood:other"].paired.model_dump() == {"ahead": 2, "tied": 0, "behind": 1}
    # tokens 200/100/300 vs 400/500/250: fewer is ahead
    assert rrsi.tokens_paired.model_dump() == {"ahead": 2, "tied": 0, "behind": 1}
    assert unreg.splits["test"].paired is None and unreg.tokens_paired is None


def test_seed_pairs_count_ties_only_common_seeds_and_a_rerun_seeds_median() -> None:
    runs = [run("r1", "rrsi", 1, summary(0.80, tokens=300)), run("r1b", "rrsi", 1, summary(0.60, tokens=300)),
            run("r2", "rrsi", 2, summary(0.75, tokens=100.3)), run("r9", "rrsi", 9, summary(0.10)),
            run("u1", "unregularized", 1, summary(0.70, tokens=200)),
            run("u2", "unregularized", 2, summary(0.75, tokens=100)),
            run("u3", "unregularized", 3, summary(0.99))]
    rrsi = compare(runs).groups[0]
    assert rrsi.splits["test"].by_seed[1] == pytest.approx(0.70)   # the median of 0.80 and 0.60
    assert rrsi.splits["test"].paired.model_dump() == {"ahead": 0, "tied": 2, "behind": 0}  # seeds 9 and 3 unpaired
    assert rrsi.tokens_paired.model_dump() == {"ahead": 0, "tied": 1, "behind": 1}  # 0.3 tokens apart is a tie


def test_without_the_reference_preset_nothing_is_marked_and_benchmarks_stay_apart() -> None:
    runs = three_seeds() + [run("o1", "rrsi", 1, summary(0.5), benchmark="other")]
    result = compare(runs, reference="cobra")
    assert [(g.benchmark, g.preset) for g in result.groups] == [
        ("bench", "rrsi"), ("bench", "unregularized"), ("other", "rrsi")]
    assert all(s.at_least_reference is None and s.paired is None for g in result.groups for s in g.splits.values())
    only = compare(runs, benchmark="other")
    assert [(g.benchmark, g.preset, g.run_ids) for g in only.groups] == [("other", "rrsi", ["o1"])]


def test_only_finished_runs_count_each_once() -> None:
    runs = three_seeds()
    runs += [runs[0], run("r4", "rrsi", 4, summary(0.1), status="running"), run("r5", "rrsi", 5, None),
             {**run("e1", "rrsi", 6, summary(0.1)), "kind": "eval"}]
    rrsi = compare(runs).groups[0]
    assert rrsi.run_ids == ["r1", "r2", "r3"]


def test_differing_settings_and_repeated_seeds_are_named() -> None:
    runs = three_seeds()
    runs[0]["config"]["budget"] = 800
    runs[0]["summary"]["budget"] = 800
    runs.append(run("r1b", "rrsi", 1, summary(0.6), report_limit=None))
    result = compare(runs)
    assert result.differing_settings == {"bench": {"budget": ["1500", "800"], "report_limit": ["200", "None"]}}
    lines = warnings(result)
    assert lines[0].startswith("bench: runs differ in budget (1500, 800); report_limit (200, None)")
    assert "rrsi has several runs of seed 1" in lines[1]


def test_no_finished_runs_and_an_unknown_benchmark_are_errors() -> None:
    with pytest.raises(ConfigError, match="no finished runs to compare"):
        compare([run("r", "rrsi", 1, summary(0.5), status="failed")])
    with pytest.raises(ConfigError, match="no finished run of 'nope'; the runs are of: bench"):
        compare(three_seeds(), benchmark="nope")


def _store_runs(path: Path, runs: list[dict[str, Any]]) -> str:
    store = LineageStore(f"sqlite:///{path}")
    for r in runs:
        store.create_run(r["id"], r["config"], seed=r["seed"], benchmark=r["benchmark"], model=r["model"],
                         preset=r["preset"])
        store.update_run(r["id"], status=r["status"], summary=r["summary"])
    store.close()
    return str(path)


def _cli(*args: str):
    from evolve.cli.app import app

    return CliRunner().invoke(app, list(args))


def test_cli_reads_several_databases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evolve.report.text import console

    monkeypatch.setattr(console, "_width", 160)
    runs = three_seeds()
    a = _store_runs(tmp_path / "a.db", runs[:3])
    b = _store_runs(tmp_path / "b.db", runs[3:])
    out = _cli("compare", a, b, "--json")
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert [g["preset"] for g in data["groups"]] == ["rrsi", "unregularized"]
    assert data["groups"][0]["splits"]["test"]["best"] == {"median": 0.8, "low": 0.7, "high": 0.9}
    text = _cli("compare", a, b)
    assert text.exit_code == 0
    assert "0.800 (0.700–0.900)" in text.output and "bal 0.700" in text.output
    assert "unregularized (ref)" in text.output and "+2 =0 −1" in text.output
    assert "by seed: + ahead, = tied, − behind" in text.output
    alone = _cli("compare", a)  # no reference runs: nothing to pair, no caption
    assert alone.exit_code == 0 and "0.800 (0.700–0.900)" in alone.output and "by seed" not in alone.output


@pytest.mark.parametrize(("args", "message"), [
    (["--reference", "cobra"], "--reference: no finished run of preset 'cobra'; the runs are of: rrsi"),
    (["--benchmark", "nope"], "--benchmark: no finished run of 'nope'"),
])
def test_cli_bad_options_are_one_line_errors(tmp_path: Path, args: list[str], message: str) -> None:
    db = _store_runs(tmp_path / "a.db", three_seeds()[:3])
    out = _cli("compare", db, *args)
    assert out.exit_code == 2
    assert out.output.startswith("error: ") and message in out.output and "Traceback" not in out.output


def test_cli_missing_database_is_a_one_line_error(tmp_path: Path) -> None:
    out = _cli("compare", str(tmp_path / "missing.db"))
    assert out.exit_code == 2 and out.output.startswith(f"error: no lineage database at {tmp_path / 'missing.db'}")


def test_two_mock_runs_compare_end_to_end(tmp_path: Path) -> None:
    """Real `evolve run` summaries (mock model): both presets grouped, their stored test scores reported."""
    common = ["--model", "mock", "--proposer-model", "none", "--rounds", "1", "--budget", "300", "--seed", "1",
              "--no-cache"]
    dbs = [str(tmp_path / f"{preset}.db") for preset in ("rrsi", "unregularized")]
    for preset, db in zip(("rrsi", "unregularized"), dbs, strict=True):
        done = _cli("run", *common, "--preset", preset, "--db", db)
        assert done.exit_code == 0, done.output
    data = json.loads(_cli("compare", *dbs, "--json").output)
    assert [(g["benchmark"], g["preset"]) for g in data["groups"]] == [
        ("extract-city", "rrsi"), ("extract-city", "unregularized")]
    for group, db in zip(data["groups"], dbs, strict=True):
        store = LineageStore(f"sqlite:///{db}")
        stored = store.list_runs(kind="run")[0]["summary"]
        store.close()
        assert group["splits"]["test"]["best"]["median"] == stored["best"]["test"]["score"]
        assert group["rollouts"]["median"] == stored["rollouts_spent"]
    assert data["groups"][0]["splits"]["test"]["at_least_reference"] is not None
    assert data["differing_settings"] == {}
