"""The run summary flags a best harness below the seed or below the majority-class baseline."""

from __future__ import annotations

from evolve.loop.final import flags


def summary(seed: float, best: float, majority: float | None) -> dict:
    baselines = {} if majority is None else {"test": {"majority": majority, "majority_label": "positive"}}
    return {"seed": {"test": {"score": seed}}, "best": {"test": {"score": best}}, "baselines": baselines}


def test_below_the_majority_class_is_flagged_with_the_label():
    out = flags(summary(0.40, 0.48, 0.53))
    assert out == ["test: best 0.480 is below the majority-class baseline 0.530 (always 'positive')"]


def test_below_the_seed_is_flagged():
    out = flags(summary(0.70, 0.65, 0.5))
    assert len(out) == 1 and "below the seed's 0.700" in out[0]


def test_a_gain_the_balanced_score_does_not_share_is_flagged_as_label_bias():
    out = summary(0.443, 0.507, 0.40)
    out["seed"]["test"]["balanced"], out["best"]["test"]["balanced"] = 0.500, 0.495
    assert flags(out) == ["test: best's gain over the seed (+0.064) is label bias: its balanced score "
                          "(mean per gold label) is 0.495 vs the seed's 0.500"]
    out["best"]["test"]["balanced"] = 0.56
    assert flags(out) == []


def test_a_best_above_both_or_without_a_baseline_is_not_flagged():
    assert flags(summary(0.40, 0.70, 0.53)) == []
    assert flags(summary(0.40, 0.45, None)) == []
    assert flags({"seed": {}, "best": {"test": {"score": None}}, "baselines": {}}) == []


def test_a_run_whose_best_is_below_the_majority_class_says_so(tmp_path):
    import json

    from engine_mocks import RUN_OPTIONS, backends

    from evolve import api
    from evolve.backends.mock import MockBackend
    from evolve.cli.run_cmd import _json_summary, _print_summary, console

    _, helper = backends()
    summary = api.run(db=str(tmp_path / "f.db"), run_id="f", policy=MockBackend(lambda r: "banana"), helper=helper,
                      **{**RUN_OPTIONS, "rounds": 1})
    assert any(f.startswith("test: best 0.000 is below the majority-class baseline") for f in summary["flags"])
    assert json.loads(_json_summary(summary))["flags"] == summary["flags"]
    with console.capture() as out:
        _print_summary(summary)
    printed = " ".join(out.get().split())
    assert "warning: test: best 0.000 is below the majority-class baseline" in printed
    assert summary["best"]["test"]["balanced"] == 0.0  # wrong on every label
    assert "label suites: balanced score" in printed
    assert summary["predictions"]["test"]["best"] == {"(unparsed)": 1.0} and "(unparsed)" in printed
