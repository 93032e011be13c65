"""A realistic lineage written through the store API: several rounds, every kind of verdict,
planted `<script>` text in a model output and in a hypothesis, scores, rubrics, usage and summary."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from evolve.harness import Control, Edit, Harness, Section, apply_edits
from evolve.store import CallRecord, LineageStore, RolloutRecord

RUN = "run-fx"
BENCH = "fixture-bench"
SCRIPT = '<script>alert("pwned")</script>'
LEAKED_ANSWER = "the capital of zanzibar is stone town"

EVOLVE_TASKS = [
    {"id": "ev-1", "input": "What is the capital of Zanzibar island region?", "target": LEAKED_ANSWER},
    {"id": "ev-2", "input": "Is the sky green on a clear day?", "target": "no"},
    {"id": "ev-3", "input": "Sort the letters c a b alphabetically.", "target": "a b c"},
]

SEED = Harness(
    name="seed",
    system=(Section(name="role", text="You answer short questions."),),
    control=Control(max_tokens=32),
)


@dataclass(frozen=True)
class Node:
    id: str
    parent: str | None
    round: int
    status: str
    edits: tuple[Edit, ...]
    val: float | None
    delta: float | None
    tokens: float | None
    reason: str = ""


def _edit(op: str, component: str, target: str | None, value: object, hypothesis: str) -> Edit:
    return Edit(op=op, component=component, target=target, value=value, hypothesis=hypothesis)


NODES = [
    Node("c0", None, 0, "seed", (), 0.50, None, 120.0),
    Node("c1a", "c0", 1, "accepted",
         (_edit("add", "system", "format", "Reply with the answer only, on one line.",
                "State the answer format explicitly so answers parse"),), 0.62, 0.12, 131.0,
         "ΔS=+0.12 beyond δ=0.05; ΔC=+0.09 within cost rule"),
    Node("c1b", "c0", 1, "rejected_critic",
         (_edit("add", "example", None, {"input": "capital of Zanzibar?", "output": LEAKED_ANSWER},
                f"Show the model the right answer {SCRIPT}"),), None, None, None,
         "leakage: literal evolve-split answer"),
    Node("c1c", "c0", 1, "rejected_acceptance",
         (_edit("set", "control", "temperature", 0.7, "Sampling diversity may help"),), 0.51, 0.01, 122.0,
         "within noise band δ=0.05 and not cheaper"),
    Node("c2a", "c1a", 2, "accepted",
         (_edit("set", "control", "samples", 3, "Self-consistency voting reduces random errors"),), 0.70, 0.08,
         380.0, "ΔS=+0.08 beyond δ=0.05; cost rule ΔC ≤ β0+β1·ΔS holds"),
    Node("c2b", "c1a", 2, "pruned",
         (_edit("add", "system", "verify", "Check the answer once before replying.",
                "A self-check catches slips"),), 0.69, 0.07, 150.0, "ablation: no effect beyond δ"),
    Node("c2c", "c1a", 2, "rejected_acceptance",
         (_edit("set", "control", "max_tokens", 512, "Longer answers allow reasoning"),), 0.63, 0.01, 900.0,
         "cost rule violated: ΔC=+5.9 > β0+β1·ΔS"),
    Node("c3a", "c2a", 3, "rejected_critic",
         (_edit("replace", "system", "role", "You answer trivia about islands.",
                "Benchmark-specific framing"),), None, None, None, "critic: benchmark-specific, not reusable"),
    Node("c3b", "c2a", 3, "accepted",
         (_edit("replace", "system", "role", "You answer short questions precisely.",
                "Precision wording reduces hedging"),
          _edit("add", "skill", "yes-no-questions",
                {"description": "Use for yes/no questions.", "body": "Answer with exactly one word: yes or no."},
                "A reusable rule for binary questions")), 0.71, 0.01, 378.0,
         "within band but cheaper (ΔC=-0.01) and novel"),
]


def _stats(n: Node) -> dict[str, object]:
    """Acceptance statistics in the shape `evolve.selection.acceptance` stores them."""
    d = n.delta or 0.0
    return {"rule": "gain", "S": n.val, "dS": d, "dC": 0.05, "delta": 0.05, "se": 0.02,
            "ci_dS": [round(d - 0.04, 3), round(d + 0.04, 3)], "ci_S": [n.val - 0.08, n.val + 0.08],
            "tokens_per_task": n.tokens}


def _score(value: float, n: int = 40, tokens: float = 120.0) -> dict[str, float]:
    return {"score": value, "ci_low": value - 0.1, "ci_high": value + 0.1, "n": n, "policy_tokens": tokens}


def write_benchmark(path: Path) -> Path:
    """A JSONL task file whose evolve split is EVOLVE_TASKS (the run's benchmark reference)."""
    rows = [{**t, "split": "evolve"} for t in EVOLVE_TASKS]
    words = ["river", "candle", "orbit", "meadow", "lantern", "pebble", "harbor", "violet"]
    rows += [{"id": f"{split[:2]}-{i}", "input": f"Spell {w} backwards.", "target": w[::-1], "split": split}
             for i, (split, w) in enumerate(zip(["validation"] * 4 + ["test"] * 4, words, strict=True))]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def build_fixture(store: LineageStore, run_id: str = RUN, *, status: str = "finished",
                  benchmark: str = BENCH) -> dict[str, Harness]:
    """Write the fixture lineage into `store`; return the harness of every candidate."""
    config = {"benchmark": benchmark, "seed": 3, "preset": "rrsi", "model": "mock", "budget": 400, "rounds": 4}
    store.create_run(run_id, config, seed=3, benchmark=benchmark, model="mock", preset="rrsi")
    harnesses: dict[str, Harness] = {}
    for n in NODES:
        parent = harnesses[n.parent] if n.parent else SEED
        h = apply_edits(parent, list(n.edits)) if n.edits else parent
        harnesses[n.id] = h
        store.add_candidate(n.id, run_id, h, parent_id=n.parent, round=n.round, status=n.status,
                            origin="llm" if n.edits else "seed", edits=n.edits)
        ci = (n.val - 0.08, n.val + 0.08) if n.val is not None else (None, None)
        store.update_candidate(n.id, reason=n.reason, val_score=n.val, val_ci_low=ci[0], val_ci_high=ci[1],
                               delta=n.delta, policy_tokens=n.tokens)
        if n.status == "rejected_critic":
            store.add_critique(n.id, "leakage" if "leak" in n.reason else "review", "reject", n.reason,
                               {"findings": ["literal answer"]})
        elif n.parent:
            store.add_critique(n.id, "review", "pass", "reusable mechanism")
            store.add_surrogate_score(n.id, "rubric", 0.4 + (n.val or 0) / 2, rubric_version=min(n.round, 2))
            store.add_decision(run_id, n.id, n.round, n.status == "accepted", n.reason, _stats(n))
    _rollouts(store, run_id, harnesses)
    store.add_rubric(run_id, 1, 1, {"criteria": [{"text": "states a format", "points": 3}]}, agreement=0.75)
    store.add_rubric(run_id, 2, 2, {"criteria": [{"text": "reusable wording", "points": 2}]}, agreement=0.92)
    store.add_calls(run_id, [CallRecord("policy", "mock", 240, 30000, 4000, 12.0),
                             CallRecord("proposer", "mock", 9, 9000, 2000, 3.0),
                             CallRecord("critic", "mock", 9, 4000, 500, 1.0)])
    store.put_state(run_id, "incumbent", "c3b")
    store.put_state(run_id, "round_scores", [
        {"round": 0, "incumbent": "c0", "val_score": 0.50, "evolve_score": 0.45, "rollouts_spent": 60,
         "tokens": 7200},
        {"round": 1, "incumbent": "c1a", "val_score": 0.62, "evolve_score": 0.58, "rollouts_spent": 140,
         "tokens": 17500},
        {"round": 2, "incumbent": "c2a", "val_score": 0.70, "evolve_score": 0.66, "rollouts_spent": 230,
         "tokens": 31000},
        {"round": 3, "incumbent": "c3b", "val_score": 0.71, "evolve_score": 0.69, "rollouts_spent": 300,
         "tokens": 34000},
    ])
    summary = {
        "seed": {"evolve": _score(0.45), "validation": _score(0.50), "test": _score(0.48, 60),
                 "ood:fixture-ood": _score(0.40, 30)},
        "best": {"evolve": _score(0.69, tokens=378), "validation": _score(0.71, tokens=378),
                 "test": _score(0.64, 60, 378), "ood:fixture-ood": _score(0.52, 30, 378)},
        "candidate": "c3b",
        "flags": ["ood:fixture-ood: best 0.520 is below the majority-class baseline 0.550 (always 'b')"],
        "decision_tasks": {"n": 43, "of": 200},
    }
    summary["seed"]["test"]["balanced"], summary["best"]["test"]["balanced"] = 0.475, 0.655
    store.update_run(run_id, status=status, summary=summary)
    return harnesses


def _rollouts(store: LineageStore, run_id: str, harnesses: dict[str, Harness]) -> None:
    records = []
    for cid in ("c0", "c3b"):
        h = harnesses[cid]
        for split in ("evolve", "validation", "test"):
            for i in range(4):
                pred = SCRIPT if (cid == "c3b" and split == "test" and i == 0) else f"answer {i}"
                records.append(RolloutRecord(run_id, h.version, BENCH, split, f"{split}-{i}", float(i % 2),
                                             candidate_id=cid, prediction=pred, tokens_in=100, tokens_out=20))
    store.add_rollouts(records)
