"""`evolve compare`: finished runs grouped by benchmark and preset, as medians and ranges over seeds.

The method's claim is comparative: a regularized preset's best harness should hold its gain on
held-out and OOD splits at least as well as an unregularized one's, at no more policy tokens. One
run proves little (a harness's score moves by several points between seeds), so the comparison is
over runs: one row per benchmark and preset, with the number of runs and their seeds, and for each
reported split (validation, test, every `ood:*`) the best harness's score as the median and range
over the runs, beside the seed harness's median and the majority-class baseline (on label suites
also the median of the best harness's label-balanced score, `bal`: a gain from label bias shows as
a best above the majority class with a balanced score near chance). Tokens are the best
harness's policy tokens per task on the token split (test when reported). `seed kept` counts
the runs whose best is their seed; `flagged` those whose summary carries a flag (below the seed or the
majority class, collapsed onto a label).

With a reference preset, every other preset's row says, per split, whether its median is at or above
the reference's, and whether its median tokens are at or below; and, paired by seed over the seeds
both presets ran, on how many it is ahead, tied and behind (on tokens: fewer, the same, more). Medians
can agree while single seeds do not: "at least the reference" per seed is a stronger claim than per
median, and the pairs show which one holds. Runs compare only at the same
settings: where a benchmark's runs differ in model, rounds, budget, seed harness, report limit or
evolve batch, the comparison names the difference instead of hiding it.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict
from rich import box
from rich.markup import escape
from rich.table import Table

from evolve.errors import ConfigError

DEFAULT_REFERENCE = "unregularized"
"""The preset the others are compared with unless another is named: the ablation without regularization."""

SETTINGS = ("model", "harness", "rounds", "budget", "report_limit", "evolve_batch")
"""The run settings that must agree for a comparison of presets on one benchmark to be fair."""


class Spread(BaseModel):
    """A median over runs, with the smallest and largest value."""

    model_config = ConfigDict(extra="forbid")

    median: float
    low: float
    high: float

    @classmethod
    def of(cls, values: Iterable[float]) -> Spread | None:
        values = [float(v) for v in values]
        if not values:
            return None
        return cls(median=statistics.median(values), low=min(values), high=max(values))


class Paired(BaseModel):
    """Seeds both presets ran, counted by whether this preset is ahead of, tied with or behind the
    reference on that seed (for tokens, ahead = fewer). A seed run more than once counts its median."""

    model_config = ConfigDict(extra="forbid")

    ahead: int
    tied: int
    behind: int

    @classmethod
    def of(cls, mine: dict[int, float], ref: dict[int, float], *, lower_is_better: bool = False,
           tolerance: float = 1e-9) -> Paired | None:
        seeds = sorted(set(mine) & set(ref))
        if not seeds:
            return None
        sign = -1.0 if lower_is_better else 1.0
        diffs = [sign * (mine[s] - ref[s]) for s in seeds]
        return cls(ahead=sum(d > tolerance for d in diffs), tied=sum(abs(d) <= tolerance for d in diffs),
                   behind=sum(d < -tolerance for d in diffs))

    def text(self) -> str:
        return f"+{self.ahead} ={self.tied} −{self.behind}"


class SplitStats(BaseModel):
    """One split of one group: the best and seed harnesses' scores over the group's runs."""

    model_config = ConfigDict(extra="forbid")

    runs: int
    best: Spread
    seed: Spread
    balanced: Spread | None = None
    majority: float | None = None
    by_seed: dict[int, float] = {}
    """The best harness's score per seed (the median where a seed was run more than once)."""
    at_least_reference: bool | None = None
    paired: Paired | None = None
    """Against the reference preset, seed by seed."""


class Group(BaseModel):
    """The runs of one preset on one benchmark."""

    model_config = ConfigDict(extra="forbid")

    benchmark: str
    preset: str
    run_ids: list[str]
    seeds: list[int]
    splits: dict[str, SplitStats]
    tokens_split: str | None = None
    tokens: Spread | None = None
    tokens_by_seed: dict[int, float] = {}
    tokens_at_most_reference: bool | None = None
    tokens_paired: Paired | None = None
    rollouts: Spread | None = None
    accepted_nothing: int = 0
    flagged: int = 0


class Comparison(BaseModel):
    """Every group, the reference preset and the settings that differ within a benchmark."""

    model_config = ConfigDict(extra="forbid")

    reference: str | None
    groups: list[Group]
    differing_settings: dict[str, dict[str, list[str]]]


def finished_runs(runs: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The finished runs of kind `run` with a summary, each run id once (the same database may be named twice)."""
    seen: dict[str, dict[str, Any]] = {}
    for run in runs:
        summary = run.get("summary")
        if run.get("kind", "run") == "run" and run.get("status") == "finished" and isinstance(summary, dict) \
                and isinstance(summary.get("best"), dict):
            seen.setdefault(run["id"], run)
    return list(seen.values())


def _split_order(name: str) -> tuple[int, str]:
    return ({"validation": 0, "test": 1}.get(name, 2), name)


def _score(summary: dict[str, Any], which: str, split: str) -> float | None:
    stats = (summary.get(which) or {}).get(split)
    return stats.get("score") if isinstance(stats, dict) and stats.get("score") is not None else None


def _seed_of(run: dict[str, Any]) -> int:
    return int(run.get("seed") or 0)


def _by_seed(values: Iterable[tuple[int, float]]) -> dict[int, float]:
    """Values keyed by seed; a seed seen more than once gets the median of its values."""
    grouped: dict[int, list[float]] = defaultdict(list)
    for seed, value in values:
        grouped[seed].append(float(value))
    return {seed: statistics.median(v) for seed, v in sorted(grouped.items())}


def _split_stats(runs: list[dict[str, Any]], split: str) -> SplitStats | None:
    triples = [(_seed_of(r), _score(r["summary"], "best", split), _score(r["summary"], "seed", split))
               for r in runs]
    triples = [(k, b, s) for k, b, s in triples if b is not None and s is not None]
    if not triples:
        return None
    baselines = [((r["summary"].get("baselines") or {}).get(split) or {}) for r in runs]
    majorities = [m for b in baselines if isinstance(m := b.get("majority"), int | float)]
    balanced = [v for r in runs if isinstance(v := ((r["summary"].get("best") or {}).get(split) or {})
                                                  .get("balanced"), int | float)]
    return SplitStats(runs=len(triples), best=Spread.of(b for _, b, _ in triples),
                      seed=Spread.of(s for _, _, s in triples),
                      balanced=Spread.of(balanced) if majorities else None,
                      majority=statistics.median(majorities) if majorities else None,
                      by_seed=_by_seed((k, b) for k, b, _ in triples))


def _tokens(runs: list[dict[str, Any]], splits: list[str]) -> tuple[str | None, list[tuple[int, float]]]:
    """The token split and (seed, best harness's policy tokens per task there) per run that has them."""
    split = "test" if "test" in splits else (splits[0] if splits else None)
    if split is None:
        return None, []
    return split, [(_seed_of(r), float(t)) for r in runs
                   if isinstance(t := ((r["summary"].get("best") or {}).get(split) or {}).get("policy_tokens"),
                                 int | float)]


def _group(benchmark: str, preset: str, runs: list[dict[str, Any]]) -> Group:
    runs = sorted(runs, key=lambda r: (r.get("seed") or 0, r["id"]))
    names = sorted({split for r in runs for split in r["summary"]["best"] if split != "evolve"}, key=_split_order)
    splits = {name: stats for name in names if (stats := _split_stats(runs, name)) is not None}
    tokens_split, tokens = _tokens(runs, list(splits))
    spent = [v for r in runs if isinstance(v := r["summary"].get("rollouts_spent"), int | float)]
    return Group(
        benchmark=benchmark, preset=preset, run_ids=[r["id"] for r in runs],
        seeds=[_seed_of(r) for r in runs],
        splits=splits, tokens_split=tokens_split, tokens=Spread.of(t for _, t in tokens),
        tokens_by_seed=_by_seed(tokens), rollouts=Spread.of(spent),
        accepted_nothing=sum(1 for r in runs if r["summary"].get("best_id") == r["summary"].get("seed_id")),
        flagged=sum(1 for r in runs if r["summary"].get("flags")),
    )


def _settings(run: dict[str, Any]) -> dict[str, str]:
    config = run.get("config") or {}
    values = {key: config.get(key) for key in SETTINGS}
    values["model"] = run.get("model") or values["model"]
    values["budget"] = run["summary"].get("budget", values["budget"])
    return {key: str(value) for key, value in values.items()}


def _differing(runs: list[dict[str, Any]]) -> dict[str, list[str]]:
    seen: dict[str, set[str]] = defaultdict(set)
    for run in runs:
        for key, value in _settings(run).items():
            seen[key].add(value)
    return {key: sorted(values) for key, values in seen.items() if len(values) > 1}


def _against(group: Group, reference: Group) -> None:
    for name, stats in group.splits.items():
        ref = reference.splits.get(name)
        stats.at_least_reference = None if ref is None else stats.best.median >= ref.best.median
        stats.paired = None if ref is None else Paired.of(stats.by_seed, ref.by_seed)
    if group.tokens is not None and reference.tokens is not None and group.tokens_split == reference.tokens_split:
        group.tokens_at_most_reference = group.tokens.median <= reference.tokens.median
        group.tokens_paired = Paired.of(group.tokens_by_seed, reference.tokens_by_seed, lower_is_better=True,
                                        tolerance=0.5)


def compare(runs: Iterable[dict[str, Any]], *, reference: str | None = DEFAULT_REFERENCE,
            benchmark: str | None = None) -> Comparison:
    """Group finished runs by benchmark and preset; mark each group against the reference preset's, if any.

    Raises `ConfigError` when no finished run is left, or when `benchmark` names none of the runs'."""
    runs = finished_runs(runs)
    if not runs:
        raise ConfigError("no finished runs to compare; `evolve status --db DB` lists a database's runs")
    if benchmark is not None:
        known = sorted({r.get("benchmark") or "" for r in runs})
        runs = [r for r in runs if r.get("benchmark") == benchmark]
        if not runs:
            raise ConfigError(f"--benchmark: no finished run of {benchmark!r}; the runs are of: {', '.join(known)}")
    by_benchmark: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        by_benchmark[run.get("benchmark") or ""][run.get("preset") or ""].append(run)
    groups: list[Group] = []
    differing: dict[str, dict[str, list[str]]] = {}
    for name in sorted(by_benchmark):
        presets = by_benchmark[name]
        built = {preset: _group(name, preset, presets[preset]) for preset in sorted(presets)}
        if reference in built:
            for preset, group in built.items():
                if preset != reference:
                    _against(group, built[reference])
        groups.extend(built.values())
        if diff := _differing([run for preset_runs in presets.values() for run in preset_runs]):
            differing[name] = diff
    return Comparison(reference=reference, groups=groups, differing_settings=differing)


def _spread(spread: Spread | None, digits: int = 3) -> str:
    if spread is None:
        return "-"
    if spread.low == spread.high:
        return f"{spread.median:,.{digits}f}"
    return f"{spread.median:,.{digits}f} ({spread.low:,.{digits}f}–{spread.high:,.{digits}f})"


def _mark(verdict: bool | None, good: str, bad: str, paired: Paired | None = None) -> str:
    mark = "" if verdict is None else f"[green]{good}[/]" if verdict else f"[red]{bad}[/]"
    return mark if paired is None else f"{mark}\n{paired.text()}"


def _rows(group: Group) -> list[tuple[str, str, str, str, str]]:
    """(what, majority, seed, best, against the reference) for each split, then tokens, rollouts and counts."""
    rows = []
    for split, stats in group.splits.items():
        majority = "-" if stats.majority is None else f"{stats.majority:.3f}"
        balanced = "" if stats.balanced is None else f"\nbal {stats.balanced.median:.3f}"
        what = split if stats.runs == len(group.run_ids) else f"{split} ({stats.runs} of {len(group.run_ids)} runs)"
        rows.append((escape(what), majority, f"{stats.seed.median:.3f}", _spread(stats.best) + balanced,
                     _mark(stats.at_least_reference, "≥", "<", stats.paired)))
    if group.tokens is not None:
        rows.append((escape(f"tokens/task ({group.tokens_split})"), "", "", _spread(group.tokens, 0),
                     _mark(group.tokens_at_most_reference, "≤", ">", group.tokens_paired)))
    rows.append(("rollouts", "", "", _spread(group.rollouts, 0), ""))
    count = len(group.run_ids)
    rows.append(("seed kept", "", "", f"{group.accepted_nothing} of {count}", ""))
    rows.append(("flagged", "", "", f"{group.flagged} of {count}", ""))
    return rows


def tables(comparison: Comparison) -> list[Table]:
    """One rich table per benchmark: for each preset a row per held-out split (seed and best median with
    range), then tokens, rollouts, and how many runs kept their seed (accepted nothing) or were flagged.
    "vs ref" marks the median against the reference's, then the seeds on which the preset is ahead (+),
    tied (=) and behind (−)."""
    out: list[Table] = []
    for name in dict.fromkeys(g.benchmark for g in comparison.groups):
        paired = any(g.tokens_paired or any(st.paired for st in g.splits.values())
                     for g in comparison.groups if g.benchmark == name)
        caption = "vs ref: median vs the reference's; by seed: + ahead, = tied, − behind" if paired else None
        table = Table(title=escape(f"{name or '(unnamed)'}: median (range) over runs"), title_justify="left",
                      caption=caption, caption_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
        table.add_column("preset", overflow="fold", ratio=1)
        table.add_column("split", overflow="fold", ratio=2)
        for column in ("majority", "seed", "best"):
            table.add_column(column, justify="right", no_wrap=True)
        table.add_column("vs ref", no_wrap=True)
        for group in (g for g in comparison.groups if g.benchmark == name):
            count = len(group.run_ids)
            label = [f"{group.preset} (ref)" if group.preset == comparison.reference else group.preset,
                     f"{count} run{'s' if count != 1 else ''}", "seeds " + ", ".join(map(str, group.seeds))]
            rows = _rows(group)
            for i, row in enumerate(rows):
                table.add_row(escape(label[i]) if i < len(label) else "", *row, end_section=i == len(rows) - 1)
        out.append(table)
    return out


def warnings(comparison: Comparison) -> list[str]:
    """A line per benchmark whose runs differ in a setting that must agree for a fair comparison, and per
    preset with several runs of one seed (a rerun counts twice in the median)."""
    lines = [f"{name}: runs differ in " + "; ".join(f"{key} ({', '.join(values)})" for key, values in diff.items())
             + ": compare like with like" for name, diff in comparison.differing_settings.items()]
    for group in comparison.groups:
        repeated = sorted({seed for seed in group.seeds if group.seeds.count(seed) > 1})
        if repeated:
            lines.append(f"{group.benchmark}: {group.preset} has several runs of seed "
                         f"{', '.join(map(str, repeated))}; each counts in the median")
    return lines
