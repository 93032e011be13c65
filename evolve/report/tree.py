"""Lineage views of a run: rich tree, JSON, Graphviz dot and Mermaid.

Every candidate appears, rejected and pruned ones included (no ghost nodes). The views work on
`Lineage`, a light read of the store (plain dicts, no harness snapshots), so that a run with
100,000 candidates renders in about a second.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from rich.markup import escape
from rich.tree import Tree

from evolve.store import LineageStore

STATUS_STYLE = {
    "seed": "bold",
    "accepted": "bold green",
    "rejected_critic": "magenta",
    "rejected_acceptance": "red",
    "rejected_invalid": "red",
    "rejected_budget": "yellow",
    "pruned": "yellow",
    "pending": "dim",
    "evaluated": "cyan",
    "ablation": "dim",
}
STATUS_LABEL = {
    "seed": "seed",
    "accepted": "accepted",
    "rejected_critic": "rejected by critic",
    "rejected_acceptance": "rejected by acceptance",
    "rejected_invalid": "invalid",
    "rejected_budget": "cut by the budget",
    "pruned": "pruned",
    "pending": "pending",
    "evaluated": "evaluated",
    "ablation": "ablation",
}
STATUS_COLOR = {
    "seed": "#334155", "accepted": "#15803d", "rejected_critic": "#9333ea", "rejected_acceptance": "#dc2626",
    "rejected_invalid": "#b91c1c", "rejected_budget": "#ca8a04", "pruned": "#d97706", "pending": "#94a3b8",
    "evaluated": "#0891b2", "ablation": "#64748b",
}
MAX_HYPOTHESES = 3
COMPACT_AFTER = 2000
"""Runs with more candidates get one JSON line per candidate instead of indented JSON."""


@dataclass
class Lineage:
    """One run's candidates: plain dicts in round/slot order (see `LineageStore.lineage_nodes`)."""

    run_id: str
    nodes: list[dict[str, Any]]
    best: str | None = None

    def children(self) -> dict[str | None, list[dict[str, Any]]]:
        """Children per parent id; candidates whose parent is unknown hang under None (the roots)."""
        ids = {n["id"] for n in self.nodes}
        kids: dict[str | None, list[dict[str, Any]]] = {}
        for n in self.nodes:
            parent = n["parent_id"] if n["parent_id"] in ids else None
            kids.setdefault(parent, []).append(n)
        return kids

    def best_path(self) -> list[str]:
        """Ids from the root to the best candidate (empty when there is no best)."""
        parent = {n["id"]: n["parent_id"] for n in self.nodes}
        path, node = [], self.best
        while node is not None and node in parent and node not in path:
            path.append(node)
            node = parent[node]
        return list(reversed(path))


def hypotheses(node: dict[str, Any]) -> list[str]:
    """`op component target: hypothesis` of each edit of a lineage node."""
    return [edit_line(e) for e in node.get("edits", [])]


def edit_line(e: dict[str, Any]) -> str:
    """`op component target: hypothesis` of one edit summary."""
    target = f" {e['target']}" if e.get("target") else ""
    hyp = f": {e['hypothesis']}" if e.get("hypothesis") else ""
    return f"{e['op']} {e['component']}{target}{hyp}"


def load_lineage(store: LineageStore, run_id: str) -> Lineage:
    """Read a run's lineage (candidates with their edits, and the incumbent) from the store."""
    return Lineage(run_id, store.lineage_nodes(run_id), best_id(store, run_id))


def best_id(store: LineageStore, run_id: str) -> str | None:
    """The run's incumbent (run state), else its latest accepted candidate."""
    return store.get_state(run_id, "incumbent") or store.last_accepted(run_id)


def score_text(n: dict[str, Any]) -> str:
    """`val 0.620 [0.54, 0.70]  Δ +0.120 [+0.04, +0.20]  131 tok/task` (the parts that are known)."""
    parts = []
    if n.get("val_score") is not None:
        lo, hi = n.get("val_ci") or (n.get("val_ci_low"), n.get("val_ci_high"))
        ci = f" [{lo:.2f}, {hi:.2f}]" if lo is not None and hi is not None else ""
        parts.append(f"val {n['val_score']:.3f}{ci}")
    if n.get("delta") is not None:
        dci = n.get("delta_ci")
        ci = f" [{dci[0]:+.2f}, {dci[1]:+.2f}]" if isinstance(dci, list | tuple) and len(dci) == 2 \
            and None not in dci else ""
        parts.append(f"Δ {n['delta']:+.3f}{ci}")
    if n.get("policy_tokens") is not None:
        parts.append(f"{n['policy_tokens']:.0f} tok/task")
    return "  ".join(parts)


def _label(n: dict[str, Any], lines: list[str], best: str | None) -> str:
    style = STATUS_STYLE.get(n["status"], "")
    star = " [bold yellow]★ best[/]" if n["id"] == best else ""
    text = f"[{style}]{escape(n['id'])}[/] [{style}]{STATUS_LABEL.get(n['status'], n['status'])}[/]{star}"
    scores = score_text(n)
    if scores:
        text += f"  {scores}"
    if n.get("reason"):
        text += f"\n[dim]  why: {escape(_clip(n['reason'], 120))}[/]"
    for h in lines[:MAX_HYPOTHESES]:
        text += f"\n[dim]  · {escape(_clip(h, 120))}[/]"
    if len(lines) > MAX_HYPOTHESES:
        text += f"\n[dim]  · … {len(lines) - MAX_HYPOTHESES} more edit(s)[/]"
    return text


def _clip(text: str, width: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def rich_tree(lineage: Lineage, max_nodes: int = COMPACT_AFTER) -> Tree:
    """A rich Tree of the run; every candidate appears, rejected and pruned ones included.

    Runs with more than `max_nodes` candidates show the path to the best candidate, each step with
    its other children counted by verdict (the JSON format lists every node).
    """
    if len(lineage.nodes) > max_nodes:
        return _path_tree(lineage)
    root = Tree(f"[bold]run {escape(lineage.run_id)}[/bold]  ({len(lineage.nodes)} candidates)")
    kids = lineage.children()
    stack: list[tuple[Tree, dict[str, Any]]] = [(root, c) for c in reversed(kids.get(None, []))]
    while stack:
        parent_node, n = stack.pop()
        node = parent_node.add(_label(n, hypotheses(n), lineage.best))
        stack.extend((node, ch) for ch in reversed(kids.get(n["id"], [])))
    return root


def _path_tree(lineage: Lineage) -> Tree:
    path = lineage.best_path()
    root = Tree(f"[bold]run {escape(lineage.run_id)}[/bold]  ({len(lineage.nodes)} candidates; the path to the "
                f"best, {len(path)} steps, with the other candidates counted; --format json lists them all)")
    nodes = {n["id"]: n for n in lineage.nodes}
    kids = lineage.children()
    on_path = set(path)
    for cid in path:
        node = root.add(_label(nodes[cid], hypotheses(nodes[cid]), lineage.best))
        others: dict[str, int] = {}
        for ch in kids.get(cid, []):
            if ch["id"] not in on_path:
                others[ch["status"]] = others.get(ch["status"], 0) + 1
        if others:
            node.add("[dim]" + ", ".join(f"{v} {STATUS_LABEL.get(k, k)}" for k, v in sorted(others.items())) + "[/]")
    return root


MAX_PATH_SHOWN = 100
"""Steps of the best path drawn in the compact tree (the first 10 and the last ones)."""


def path_tree(store: LineageStore, run_id: str) -> Tree:
    """The compact tree of a large run, read with a few queries (no full load of the run): the path
    to the best candidate, each step with its other children counted by verdict."""
    best = best_id(store, run_id)
    path = store.parent_chain(best) if best else []
    nodes = {n["id"]: n for n in store.lineage_nodes(run_id, ids=path)}
    counts = store.child_status_counts(run_id, path)
    root = Tree(f"[bold]run {escape(run_id)}[/bold]  ({store.count_candidates(run_id)} candidates; the path to "
                f"the best, {len(path)} steps, with the other candidates counted; --format json lists them all)")
    hidden = range(10, len(path) - (MAX_PATH_SHOWN - 10)) if len(path) > MAX_PATH_SHOWN else range(0)
    for index, cid in enumerate(path):
        if index in hidden:
            if index == hidden.start:
                root.add(f"[dim]… {len(hidden)} more steps of the path (see --format json)[/]")
            continue
        node = root.add(_label(nodes[cid], hypotheses(nodes[cid]), best))
        others = dict(counts.get(cid, {}))
        if index + 1 < len(path):  # the next step of the path is drawn on its own
            others[nodes[path[index + 1]]["status"]] -= 1
        summary = ", ".join(f"{v} {STATUS_LABEL.get(k, k)}" for k, v in sorted(others.items()) if v > 0)
        if summary:
            node.add(f"[dim]{summary}[/]")
    return root


def as_json(lineage: Lineage) -> dict[str, Any]:
    """The lineage as one JSON-ready object (`candidates` in round order, `best`, `best_path`)."""
    return {"run_id": lineage.run_id, "best": lineage.best, "best_path": lineage.best_path(),
            "candidates": lineage.nodes}


def json_bytes(lineage: Lineage) -> bytes:
    """`as_json` as UTF-8 JSON: indented for small runs, one line per candidate for large ones."""
    data = as_json(lineage)
    if len(lineage.nodes) <= COMPACT_AFTER:
        return orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n"
    return _compact(data, [orjson.dumps(c) for c in lineage.nodes])


def _compact(data: dict[str, Any], rows: list[bytes]) -> bytes:
    head = orjson.dumps({k: v for k, v in data.items() if k != "candidates"})[:-1]
    return head + b', "candidates": [\n' + b",\n".join(rows) + b"\n]}\n"


def lineage_json(store: LineageStore, run_id: str) -> bytes:
    """The JSON lineage of a stored run; large runs on SQLite are serialized by the database itself."""
    rows = store.lineage_json_rows(run_id)
    if rows is None or len(rows) <= COMPACT_AFTER:
        return json_bytes(load_lineage(store, run_id))
    best = best_id(store, run_id)
    head = orjson.dumps({"run_id": run_id, "best": best, "best_path": store.parent_chain(best) if best else []})
    return head[:-1] + b', "candidates": [\n' + ",\n".join(rows).encode() + b"\n]}\n"


def _dot_text(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def as_dot(lineage: Lineage) -> str:
    """Graphviz dot: one box per candidate colored by status, the hypotheses as tooltips."""
    lines = [f'digraph "{_dot_text(lineage.run_id)}" {{', "  rankdir=LR;", '  node [shape=box, fontsize=10];']
    for n in lineage.nodes:
        parts = [n["id"], STATUS_LABEL.get(n["status"], n["status"]), score_text(n)]
        label = "\\n".join(_dot_text(p) for p in parts if p)
        tooltip = _dot_text(_clip(" | ".join(hypotheses(n)), 300))
        color = STATUS_COLOR.get(n["status"], "#64748b")
        width = ", penwidth=3" if n["id"] == lineage.best else ""
        lines.append(f'  "{_dot_text(n["id"])}" [label="{label}", '
                     f'color="{color}", tooltip="{tooltip}"{width}];')
    ids = {n["id"] for n in lineage.nodes}
    lines += [f'  "{_dot_text(n["parent_id"])}" -> "{_dot_text(n["id"])}";'
              for n in lineage.nodes if n["parent_id"] in ids]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _mermaid_id(cid: str) -> str:
    return "n_" + "".join(ch if ch.isalnum() else "_" for ch in cid)


def _mermaid_text(text: str) -> str:
    return "".join("#quot;" if ch == '"' else f"#{ord(ch)};" if ch in "<>[]{}|" else ch for ch in text)


def as_mermaid(lineage: Lineage) -> str:
    """Mermaid flowchart with a class (color) per status."""
    lines = ["graph LR"]
    for n in lineage.nodes:
        scores = score_text(n)
        label = _mermaid_text(f"{n['id']} {STATUS_LABEL.get(n['status'], n['status'])}"
                              + (f"<br/>{scores}" if scores else "")).replace("#60;br/#62;", "<br/>")
        lines.append(f'  {_mermaid_id(n["id"])}["{label}"]:::{n["status"]}')
    ids = {n["id"] for n in lineage.nodes}
    lines += [f"  {_mermaid_id(n['parent_id'])} --> {_mermaid_id(n['id'])}"
              for n in lineage.nodes if n["parent_id"] in ids]
    for status in sorted({n["status"] for n in lineage.nodes}):
        lines.append(f"  classDef {status} stroke:{STATUS_COLOR.get(status, '#64748b')},stroke-width:2px;")
    return "\n".join(lines) + "\n"
