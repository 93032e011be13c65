"""Predictions count as the label the verifier read in them (guards and distributions)."""

from __future__ import annotations

from evolve.bench.stats import answer_label, prediction_distribution
from evolve.loop.allocation import evaluation
from evolve.selection.config import GuardsConfig
from evolve.selection.guards import run_guards
from evolve.store.records import RolloutRecord

LABELS = ("objective", "subjective")
IDS = [f"t{i}" for i in range(40)]
GOLD = {t: ("subjective" if i % 2 else "objective") for i, t in enumerate(IDS)}


def _records(answers: dict[str, str]) -> list[RolloutRecord]:
    return [RolloutRecord(run_id="r", harness_hash="h", benchmark="b", split="validation", task_id=t,
                          reward=float(answers[t].endswith(GOLD[t])), prediction=answers[t]) for t in IDS]


def test_answer_label_reads_the_label_in_a_sentence() -> None:
    assert answer_label("This sentence is subjective because it ...", LABELS) == "subjective"
    assert answer_label("Objective.", LABELS) == "objective"
    assert answer_label("no idea", LABELS) == "no idea"
    assert answer_label("This sentence is subjective", None) == "This sentence is subjective"
    sentences = [f"This sentence is subjective because of {i}" for i in range(4)]
    assert prediction_distribution([answer_label(p, LABELS) for p in sentences]) == {"subjective": 1.0}


def test_a_seed_answering_one_label_in_sentences_counts_as_collapsed() -> None:
    seed = evaluation("seed", _records({t: f"This sentence is subjective, reason {i}." for i, t in enumerate(IDS)}),
                      0, LABELS)
    assert set(seed.predictions.values()) == {"subjective"}
    # a candidate saying "subjective" on 80% of tasks: still far above the gold share, but less than the seed
    cand = evaluation("c", _records({t: ("objective" if i % 5 == 0 else "subjective") for i, t in enumerate(IDS)}),
                      0, LABELS)

    def guards(incumbent):
        return run_guards(GuardsConfig(), predictions=cand.predictions, gold=GOLD, task_ids=IDS, parse_rate=1.0,
                          incumbent_parse_rate=1.0, crash_rate=0.0, incumbent_crash_rate=0.0,
                          incumbent_predictions=incumbent.predictions)

    assert guards(seed) == [], "it moves away from the seed's collapse"
    raw_seed = evaluation("seed", _records({t: f"This sentence is subjective, reason {i}." for i, t in enumerate(IDS)}),
                          0)
    assert any("collapse" in g for g in guards(raw_seed)), "read as raw text the seed looks uncollapsed"
