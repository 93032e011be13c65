"""The run summary flags a best harness below the seed, below the majority-class baseline, or collapsed onto a label."""

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


def collapsed(top: str, share: float) -> dict:
    out = summary(0.60, 0.62, 0.55)
    out["baselines"]["test"]["gold_shares"] = {"positive": 0.55, "negative": 0.45}
    out["predictions"] = {"test": {"best": {"(unparsed)": 0.02, top: share, "(other)": 0.01}}}
    return out


def test_a_best_answering_one_label_far_beyond_its_gold_share_is_flagged_as_collapsed():
    assert flags(collapsed("Negative", 0.75), collapse=(0.25, 0.6)) == [
        "test: best answers 'negative' on 75% of tasks vs 45% in the gold answers: it has collapsed onto one label"]
    assert flags(collapsed("positive", 0.79), collapse=(0.25, 0.6)) == []  # 0.79 <= 0.55 + 0.25
    assert flags(collapsed("positive", 0.81), collapse=(0.25, 0.6)) != []
    assert flags(collapsed("maybe", 0.59), collapse=(0.25, 0.6)) == []  # below min_share, though not a gold label
    assert flags(collapsed("Negative", 0.75)) == []  # no limit given: not checked


def test_spellings_of_one_label_count_together():
    out = collapsed("Negative", 0.45)  # alone below the limit (0.45 + 0.25)
    out["predictions"]["test"]["best"].update({"negative.": 0.30, "positive": 0.22})
    assert flags(out, collapse=(0.25, 0.6)) == [
        "test: best answers 'negative' on 75% of tasks vs 45% in the gold answers: it has collapsed onto one label"]


def test_unparsed_answers_are_not_a_collapse():
    out = collapsed("positive", 0.30)
    out["predictions"]["test"]["best"]["(unparsed)"] = 0.69
    assert flags(out, collapse=(0.25, 0.6)) == []


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


def test_a_run_whose_best_answers_one_label_is_flagged_as_collapsed(tmp_path):
    from engine_mocks import RUN_OPTIONS, backends

    from evolve import api
    from evolve.backends.mock import MockBackend

    _, helper = backends()
    summary = api.run(db=str(tmp_path / "c.db"), run_id="c", policy=MockBackend(lambda r: "positive"), helper=helper,
                      **{**RUN_OPTIONS, "rounds": 1})
    gold = summary["baselines"]["test"]["gold_shares"]
    assert abs(sum(gold.values()) - 1.0) < 1e-9 and set(gold) == {"positive", "negative"}
    assert (f"test: best answers 'positive' on 100% of tasks vs {gold['positive']:.0%} in the gold answers: "
            "it has collapsed onto one label") in summary["flags"]
