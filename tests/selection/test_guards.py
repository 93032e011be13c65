from __future__ import annotations

from evolve.selection.config import GuardsConfig
from evolve.selection.guards import (
    collapse_guard,
    crash_rate_guard,
    min_tasks_guard,
    parse_rate_guard,
    run_guards,
)

TASKS = [f"t{i}" for i in range(60)]
GOLD = {t: ("No" if i < 32 else "Yes") for i, t in enumerate(TASKS)}  # 53% majority "No"


def test_collapse_guard_fires_on_a_majority_label_predictor():
    msg = collapse_guard(dict.fromkeys(TASKS, "No"), GOLD, TASKS, margin=0.25, min_share=0.6)
    assert msg is not None and "'no'" in msg and "100%" in msg and "53%" in msg


def test_collapse_guard_quiet_on_balanced_predictions():
    balanced = {t: ("Yes" if i % 2 else "No") for i, t in enumerate(TASKS)}
    assert collapse_guard(balanced, GOLD, TASKS, margin=0.25, min_share=0.6) is None
    # 75% "No": above gold share + 0.25 = 78%? no -> quiet; 80% -> fires
    mostly = {t: ("No" if i < 45 else "Yes") for i, t in enumerate(TASKS)}
    assert collapse_guard(mostly, GOLD, TASKS, margin=0.25, min_share=0.6) is None
    more = {t: ("No" if i < 48 else "Yes") for i, t in enumerate(TASKS)}
    assert collapse_guard(more, GOLD, TASKS, margin=0.25, min_share=0.6) is not None


def test_collapse_guard_counts_unparsed_in_the_denominator_and_normalizes_labels():
    half_missing = {t: ("no." if i < 40 else None) for i, t in enumerate(TASKS)}  # 67% "no"
    assert collapse_guard(half_missing, GOLD, TASKS, margin=0.25, min_share=0.6) is None
    assert collapse_guard(dict.fromkeys(TASKS, " NO "), GOLD, TASKS, margin=0.25, min_share=0.6) is not None
    assert collapse_guard(dict.fromkeys(TASKS, "No"), None, TASKS, margin=0.25, min_share=0.6) is None


def test_rate_and_size_guards():
    assert parse_rate_guard(0.90, 0.97, max_drop=0.05) is not None
    assert parse_rate_guard(0.95, 0.97, max_drop=0.05) is None
    assert crash_rate_guard(0.10, 0.02, max_rise=0.05) is not None
    assert crash_rate_guard(0.05, 0.02, max_rise=0.05) is None
    assert min_tasks_guard(10, minimum=20) is not None and min_tasks_guard(20, minimum=20) is None


def test_run_guards_switches():
    kwargs = dict(predictions=dict.fromkeys(TASKS, "No"), gold=GOLD, task_ids=TASKS, parse_rate=0.5,
                  incumbent_parse_rate=1.0, crash_rate=0.3, incumbent_crash_rate=0.0)
    assert len(run_guards(GuardsConfig(), **kwargs)) == 3
    assert run_guards(GuardsConfig(enabled=False), **kwargs) == []
    only_collapse = GuardsConfig(max_parse_drop=None, max_crash_rise=None)
    assert [m.split(":")[0] for m in run_guards(only_collapse, **kwargs)] == ["collapse"]


def test_collapse_guard_lets_a_candidate_relieve_an_inherited_collapse():
    incumbent = dict.fromkeys(TASKS, "No")
    mostly_no = {t: ("Yes" if i >= 48 else "No") for i, t in enumerate(TASKS)}  # 80% "No", incumbent 100%
    assert collapse_guard(mostly_no, GOLD, TASKS, margin=0.25, min_share=0.6) is not None
    assert collapse_guard(mostly_no, GOLD, TASKS, margin=0.25, min_share=0.6, incumbent=incumbent, relief=0.1) is None
    barely = {t: ("Yes" if i >= 57 else "No") for i, t in enumerate(TASKS)}  # 95% "No": not relief enough
    assert collapse_guard(barely, GOLD, TASKS, margin=0.25, min_share=0.6, incumbent=incumbent, relief=0.1)
    flipped = dict.fromkeys(TASKS, "Yes")  # a collapse onto the other label is a new collapse
    assert collapse_guard(flipped, GOLD, TASKS, margin=0.25, min_share=0.6, incumbent=incumbent, relief=0.1)
