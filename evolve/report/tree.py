"""Lineage tree rendering: rich tree, JSON, Graphviz dot and Mermaid."""

from __future__ import annotations

from typing import Any

from rich.tree import Tree

from evolve.store.records import CandidateRecord

STATUS_STYLE = {
    "seed": "bold",
    "accepted": "bold green",
    "rejected_critic": "magenta",
    "rejected_acceptance": "red",
    "rejected_invalid": "red",
    "pruned": "yellow",
    "pending": "dim",
    "evaluated": "cyan",
    "ablation": "dim",
}


def _label(c: CandidateRecord, hypotheses: list[str]) -> str:
    parts = [f"[{STATUS_STYLE.get(c.status, '')}]{c.id}[/] {c.status}"]
    if c.val_score is not None:
        ci = f" [{c.val_ci_low:.2f},{c.val_ci_high:.2f}]" if c.val_ci_low is not None else ""
        parts.append(f"val {c.val_score:.3f}{ci}")
    if c.delta is not None:
        parts.append(f"Δ {c.delta:+.3f}")
    if c.policy_tokens is not None:
        parts.append(f"{c.policy_tokens:.0f} tok/task")
    text = "  ".join(parts)
    for h in hypotheses[:3]:
        text += f"\n  [dim]· {h[:100]}[/dim]"
    return text


def children_map(candidates: list[CandidateRecord]) -> dict[str | None, list[CandidateRecord]]:
    ids = {c.id for c in candidates}
    kids: dict[str | None, list[CandidateRecord]] = {}
    for c in candidates:
        parent = c.parent_id if c.parent_id in ids else None
        kids.setdefault(parent, []).append(c)
    return kids


def rich_tree(run_id: str, candidates: list[CandidateRecord], hypotheses: dict[str, list[str]]) -> Tree:
    """A rich Tree of the run; every candidate appears, rejected and pruned ones included."""
    root = Tree(f"[bold]run {run_id}[/bold]")
    kids = children_map(candidates)
    stack: list[tuple[Tree, CandidateRecord]] = [(root, c) for c in reversed(kids.get(None, []))]
    while stack:
        parent_node, c = stack.pop()
        node = parent_node.add(_label(c, hypotheses.get(c.id, [])))
        stack.extend((node, ch) for ch in reversed(kids.get(c.id, [])))
    return root


def as_json(run_id: str, candidates: list[CandidateRecord], hypotheses: dict[str, list[str]]) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "candidates": [
            {
                "id": c.id, "parent_id": c.parent_id, "round": c.round, "status": c.status, "origin": c.origin,
                "reason": c.reason, "val_score": c.val_score, "val_ci": [c.val_ci_low, c.val_ci_high],
                "delta": c.delta, "policy_tokens": c.policy_tokens, "hypotheses": hypotheses.get(c.id, []),
            }
            for c in candidates
        ],
    }


def _short(text: str) -> str:
    return text.replace('"', "'").replace("\n", " ")[:60]


def as_dot(run_id: str, candidates: list[CandidateRecord]) -> str:
    colors = {"accepted": "green", "seed": "black", "rejected_critic": "purple", "pruned": "orange"}
    lines = [f'digraph "{run_id}" {{', "  rankdir=LR;", "  node [shape=box, fontsize=10];"]
    for c in candidates:
        score = f"\\nval {c.val_score:.3f}" if c.val_score is not None else ""
        color = colors.get(c.status, "red" if c.status.startswith("rejected") else "gray")
        lines.append(f'  "{c.id}" [label="{c.id}\\n{c.status}{score}", color={color}];')
    lines += [f'  "{c.parent_id}" -> "{c.id}";' for c in candidates if c.parent_id]
    lines.append("}")
    return "\n".join(lines) + "\n"


def as_mermaid(candidates: list[CandidateRecord]) -> str:
    def node_id(cid: str) -> str:
        return "n_" + "".join(ch if ch.isalnum() else "_" for ch in cid)

    lines = ["graph LR"]
    for c in candidates:
        score = f" val {c.val_score:.3f}" if c.val_score is not None else ""
        lines.append(f'  {node_id(c.id)}["{_short(c.id)} {c.status}{score}"]')
    lines += [f"  {node_id(c.parent_id)} --> {node_id(c.id)}" for c in candidates if c.parent_id]
    return "\n".join(lines) + "\n"
