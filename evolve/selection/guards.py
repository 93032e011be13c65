"""Non-compensatory guards (RRSI domain guards): any message blocks acceptance regardless of score.

Each guard is a pure function returning a one-line message when it fires, else None.

The collapse guard exists because a prompt that only tilts a small model toward the majority
answer raises accuracy on a skewed split without being an improvement: on BBH navigate and
sports_understanding a greedy optimizer with SmolLM2-135M accepted such prompts and ended below
the majority-class baseline on the test split.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from evolve.selection.config import GuardsConfig


def normalize_label(value: str) -> str:
    """Canonical form of a label for counting (case, surrounding space and punctuation ignored)."""
    return " ".join(value.strip().strip(".!\"'`()[]").lower().split())


def label_shares(labels: Sequence[str | None]) -> Counter[str]:
    """Counts of normalized labels (None, i.e. unparsed, is not counted as a label)."""
    return Counter(normalize_label(v) for v in labels if v is not None and normalize_label(v))


def label_share(predictions: Mapping[str, str | None], label: str, task_ids: Sequence[str]) -> float:
    """Share of `task_ids` whose prediction normalizes to `label`."""
    if not task_ids:
        return 0.0
    return sum(1 for t in task_ids if normalize_label(predictions.get(t) or "") == label) / len(task_ids)


def beyond_collapse_limit(share: float, gold_share: float, *, margin: float, min_share: float) -> bool:
    """Whether a label answered on `share` of the tasks is a collapse: above its gold share + `margin`
    and above `min_share` (the collapse guard's limit, also used by the run summary's flag)."""
    return share > gold_share + margin and share > min_share


def collapse_guard(predictions: Mapping[str, str | None], gold: Mapping[str, str] | None,
                   task_ids: Sequence[str], *, margin: float, min_share: float,
                   incumbent: Mapping[str, str | None] | None = None, relief: float | None = None) -> str | None:
    """Fire when one predicted label takes a share far beyond its share of the gold answers.

    Shares are over all `task_ids` (a missing prediction counts in the denominator but for no
    label). Fires when the top label's share > gold share + `margin` and > `min_share`, unless
    the `incumbent`'s predictions give that label a share at least `relief` larger: a candidate
    that moves away from a collapse it inherited is not the cause of it.
    """
    if not gold or not task_ids:
        return None
    preds = label_shares([predictions.get(t) for t in task_ids])
    if not preds:
        return None
    label, count = preds.most_common(1)[0]
    share = count / len(task_ids)
    golds = label_shares([gold.get(t) for t in task_ids])
    gold_share = golds.get(label, 0) / len(task_ids)
    if not beyond_collapse_limit(share, gold_share, margin=margin, min_share=min_share):
        return None
    if incumbent is not None and relief is not None and label_share(incumbent, label, task_ids) - share >= relief:
        return None
    return (f"collapse: predicts {label!r} on {share:.0%} of tasks vs {gold_share:.0%} in the gold answers "
            f"(limit: gold share + {margin:g} and {min_share:.0%})")


def parse_rate_guard(candidate: float, incumbent: float, *, max_drop: float) -> str | None:
    """Fire when the parse rate drops by more than `max_drop` below the incumbent's."""
    if incumbent - candidate > max_drop + 1e-12:
        return f"parse rate fell {incumbent:.0%} -> {candidate:.0%} (max drop {max_drop:g})"
    return None


def crash_rate_guard(candidate: float, incumbent: float, *, max_rise: float) -> str | None:
    """Fire when the crash rate rises by more than `max_rise` above the incumbent's."""
    if candidate - incumbent > max_rise + 1e-12:
        return f"crash rate rose {incumbent:.0%} -> {candidate:.0%} (max rise {max_rise:g})"
    return None


def min_tasks_guard(n_tasks: int, *, minimum: int) -> str | None:
    """Fire when the decision would rest on fewer validation tasks than `minimum`."""
    if n_tasks < minimum:
        return f"only {n_tasks} validation tasks; at least {minimum} needed (guards.min_validation_tasks)"
    return None


def run_guards(cfg: GuardsConfig, *, predictions: Mapping[str, str | None], gold: Mapping[str, str] | None,
               task_ids: Sequence[str], parse_rate: float, incumbent_parse_rate: float, crash_rate: float,
               incumbent_crash_rate: float, incumbent_predictions: Mapping[str, str | None] | None = None,
               ) -> list[str]:
    """All guard messages for one candidate (empty when it may be accepted)."""
    if not cfg.enabled:
        return []
    messages = [min_tasks_guard(len(task_ids), minimum=cfg.min_validation_tasks)]
    if cfg.collapse_margin is not None:
        messages.append(collapse_guard(predictions, gold, task_ids, margin=cfg.collapse_margin,
                                       min_share=cfg.collapse_min_share, incumbent=incumbent_predictions,
                                       relief=cfg.collapse_relief))
    if cfg.max_parse_drop is not None:
        messages.append(parse_rate_guard(parse_rate, incumbent_parse_rate, max_drop=cfg.max_parse_drop))
    if cfg.max_crash_rise is not None:
        messages.append(crash_rate_guard(crash_rate, incumbent_crash_rate, max_rise=cfg.max_crash_rise))
    return [m for m in messages if m]
