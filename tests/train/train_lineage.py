"""A small lineage written through LineageStore: two runs, proposals with every outcome."""

from __future__ import annotations

from evolve.harness import Edit, apply_edits
from evolve.harness.io import load_harness
from evolve.paths import data_dir
from evolve.store import LineageStore


def messages(run: str, rnd: int) -> list[dict[str, str]]:
    return [{"role": "system", "content": "You propose harness edits as JSON."},
            {"role": "user", "content": f"Context of {run} round {rnd}: the incumbent answers 'positive' too often."}]


def edit(target: str, text: str) -> Edit:
    return Edit(op="add", component="system", target=target, value=text, hypothesis=f"{target} helps",
                origin="llm")


# (slot, origin, status, delta, critic verdict, edits or None for an invalid reply)
ROUND = [
    (0, "llm", "accepted", 0.12, "pass", [edit("balance", "Say negative when the buyer complains.")]),
    (1, "llm", "rejected_acceptance", -0.05, "pass", [edit("style", "Be brief.")]),
    (2, "llm", "rejected_critic", None, "reject", [edit("leak", "Task 7 is negative.")]),
    (3, "llm", "rejected_invalid", None, None, None),
    (4, "fewshot", "rejected_acceptance", 0.04, "pass", [edit("examples", "Example: broke -> negative.")]),
]


def build(db: str, runs: tuple[str, ...] = ("ra", "rb"), rounds: int = 3) -> LineageStore:
    store = LineageStore(db)
    seed = load_harness(data_dir("harnesses") / "minimal")
    for run in runs:
        store.create_run(run, {}, benchmark="sentiment-products")
        parent = f"{run}.seed"
        store.add_candidate(parent, run, seed, parent_id=None, round=-1, status="seed", origin="seed")
        incumbent = seed
        for rnd in range(rounds):
            accepted = None
            for slot, origin, status, delta, verdict, edits in ROUND:
                cid = f"{run}.{rnd}.{slot}"
                edits = [e.model_copy(update={"target": f"{e.target}{rnd}", "origin": origin})
                         for e in edits] if edits else []
                proposal = ({"messages": messages(run, rnd), "reply": "{\"edits\": [" if not edits else ""}
                            if origin == "llm" else {"messages": [], "reply": ""})
                harness = apply_edits(incumbent, edits) if edits else incumbent
                store.add_candidate(cid, run, harness, parent_id=parent, round=rnd, slot=slot, status=status,
                                    origin=origin, edits=edits, meta={"proposal": proposal, "budget": 2})
                store.update_candidate(cid, delta=delta)
                if verdict:
                    store.add_critique(cid, "llm", verdict, "ok" if verdict == "pass" else "leaks an answer")
                if status == "accepted":
                    accepted = (cid, harness)
            store.add_candidate(f"{run}.{rnd}.p0", run, incumbent, parent_id=parent, round=rnd, slot=100,
                                status="rejected_acceptance", origin="pruner", meta={"ablates": "x"})
            parent, incumbent = accepted
    return store
