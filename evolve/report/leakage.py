"""The export-time leakage screen: nothing of the run's evolve split may leave in an exported harness.

The screen is the critic's deterministic one (`evolve.loop.critic.leakage_findings`: n-gram overlap
with evolve-split inputs and long answers such as HumanEval tests, literal short answers, task ids,
the benchmark's denylist), run on every text the harness carries. The evolve split is rebuilt from
the run's stored configuration.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from evolve.errors import ConfigError, EvolveError
from evolve.harness import Harness


class LeakageError(EvolveError):
    """An export would carry evolve-split content (refused unless `--allow-leaks`)."""


@dataclass(frozen=True)
class SplitInfo:
    """What the screen compares against: the evolve-split tasks, denylist regexes and the label set."""

    tasks: Sequence[Any]
    denylist: Sequence[str] = ()
    labels: Sequence[str] = ()
    source: str = ""
    demo_inputs: frozenset[str] = frozenset()
    """Inputs of the benchmark's demo pool: few-shot examples taken from it are allowed (as in the critic)."""


def harness_texts(harness: Harness, demo_inputs: frozenset[str] = frozenset()) -> list[str]:
    """Every piece of text an exported harness carries (sections, skills, examples not from the demo
    pool, tools)."""
    texts = [s.text for s in harness.system]
    for skill in harness.skills:
        texts += [skill.description, skill.body]
    for ex in harness.examples:
        if ex.input not in demo_inputs:
            texts += [ex.input, ex.output, ex.rationale or ""]
    for tool in harness.tools:
        texts.append(tool.description)
    return [t for t in texts if t]


def evolve_split(run: dict[str, Any], stored: dict[str, list[str]] | None = None) -> SplitInfo:
    """Rebuild the evolve split of a stored run: from its stored split task ids when given (runs store
    them), else from its configuration (benchmark reference and, for older runs, the run's seed)."""
    config = run.get("config") or {}
    ref = config.get("benchmark") or run.get("benchmark")
    if not ref:
        raise ConfigError(f"run {run['id']!r} stores no benchmark reference; cannot screen the export "
                          "(use --allow-leaks to export without the screen)")
    from evolve.bench.benchmark import load_benchmark

    if stored:
        from evolve.bench.evaluation import apply_splits

        bench = apply_splits(load_benchmark(ref), stored, f"run {run['id']}")
        seed = "stored splits"
    else:
        seed = config.get("seed", run.get("seed", 0))
        bench = load_benchmark(ref, seed=seed)
    demo = bench.split("demo") if "demo" in bench.splits else []
    return SplitInfo(tasks=bench.split("evolve"), denylist=tuple(bench.denylist or ()),
                     labels=tuple(bench.labels or ()),
                     source=f"{ref} ({seed})" if stored else f"{ref} (seed {seed})",
                     demo_inputs=frozenset(str(t.input) for t in demo))


def findings(harness: Harness, split: SplitInfo) -> list[str]:
    """Leakage findings of `harness` against `split`, one readable line each (empty: clean)."""
    from evolve.loop.critic import leakage_findings

    found = leakage_findings(harness_texts(harness, split.demo_inputs), list(split.tasks),
                             denylist=list(split.denylist), labels=list(split.labels))
    return list(dict.fromkeys(" ".join(str(f).split()) for f in found))


def check_export(harness: Harness, split: SplitInfo, *, allow_leaks: bool = False) -> list[str]:
    """Raise LeakageError listing the findings unless `allow_leaks`; return the findings."""
    found = findings(harness, split)
    if found and not allow_leaks:
        shown = "; ".join(found[:5]) + (f"; and {len(found) - 5} more" if len(found) > 5 else "")
        raise LeakageError(f"export refused: harness {harness.version} leaks evolve-split content of "
                           f"{split.source or 'the run'}: {shown} (inspect with `evolve show`, or pass --allow-leaks)")
    return found
