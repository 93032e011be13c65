"""The lineage tree as an inline SVG (left to right by depth, one row per leaf, colored by status)."""

from __future__ import annotations

from html import escape
from typing import Any

from evolve.report.tree import STATUS_COLOR, STATUS_LABEL, Lineage, hypotheses

MAX_NODES = 400
DX, DY, BOX_W, BOX_H = 190, 34, 170, 28


def _visible(lineage: Lineage) -> set[str]:
    """All ids for small runs; for large ones the last steps of the best path and their children."""
    if len(lineage.nodes) <= MAX_NODES:
        return {n["id"] for n in lineage.nodes}
    path = lineage.best_path()[-(MAX_NODES // 4):]
    keep, on_path = set(path), set(path)
    for n in lineage.nodes:
        if len(keep) >= MAX_NODES:
            break
        if n["parent_id"] in on_path:
            keep.add(n["id"])
    return keep


def _layout(lineage: Lineage, keep: set[str]) -> dict[str, tuple[float, float]]:
    """Positions (x by depth, y by leaf row; a parent sits midway between its first and last child).

    Iterative, so that deep lineages (thousands of rounds) do not hit the recursion limit.
    """
    kids: dict[str | None, list[str]] = {}
    for n in lineage.nodes:
        if n["id"] in keep:
            parent = n["parent_id"] if n["parent_id"] in keep else None
            kids.setdefault(parent, []).append(n["id"])
    pos: dict[str, tuple[float, float]] = {}
    row = 0
    stack: list[tuple[str, int, bool]] = [(r, 0, False) for r in reversed(kids.get(None, []))]
    while stack:
        cid, depth, expanded = stack.pop()
        children = kids.get(cid, [])
        if not children:
            pos[cid] = (depth * DX, row * DY)
            row += 1
        elif expanded:
            pos[cid] = (depth * DX, (pos[children[0]][1] + pos[children[-1]][1]) / 2)
        else:
            stack.append((cid, depth, True))
            stack.extend((ch, depth + 1, False) for ch in reversed(children))
    return pos


def tree_svg(lineage: Lineage) -> tuple[str, int]:
    """(`<svg id="lineage-tree">`, number of candidates not drawn)."""
    keep = _visible(lineage)
    pos = _layout(lineage, keep)
    if not pos:
        return '<svg id="lineage-tree" class="tree" width="300" height="40"><text x="8" y="24">no candidates' \
               '</text></svg>', 0
    width = int(max(x for x, _ in pos.values()) + BOX_W + 20)
    height = int(max(y for _, y in pos.values()) + BOX_H + 20)
    nodes = {n["id"]: n for n in lineage.nodes}
    best = lineage.best
    best_path = set(lineage.best_path())
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" id="lineage-tree" class="tree" viewBox="0 0 {width} {height}"'
             f' width="{width}" height="{height}" font-family="system-ui, sans-serif" font-size="11">'
             '<title>lineage tree</title>']
    for cid, (x, y) in pos.items():
        parent = nodes[cid]["parent_id"]
        if parent in pos:
            px, py = pos[parent]
            on_path = cid in best_path and parent in best_path
            stroke = 'stroke="#15803d" stroke-width="2.5"' if on_path else 'stroke="#94a3b8" stroke-width="1"'
            parts.append(f'<path d="M{px + BOX_W + 10:.0f},{py + 10 + BOX_H / 2:.0f} C{px + BOX_W + 20:.0f},'
                         f'{py + 10 + BOX_H / 2:.0f} {x:.0f},{y + 10 + BOX_H / 2:.0f} {x + 10:.0f},'
                         f'{y + 10 + BOX_H / 2:.0f}" fill="none" {stroke}/>')
    for cid, (x, y) in pos.items():
        parts.append(_node_svg(nodes[cid], x + 10, y + 10, cid == best, hypotheses(nodes[cid])))
    parts.append("</svg>")
    return "".join(parts), len(lineage.nodes) - len(pos)


def _node_svg(n: dict[str, Any], x: float, y: float, is_best: bool, hypotheses: list[str]) -> str:
    color = STATUS_COLOR.get(n["status"], "#64748b")
    dashed = ' stroke-dasharray="4 2"' if n["status"].startswith("rejected") or n["status"] == "pruned" else ""
    width = 3 if is_best else 1.5
    score = f"val {n['val_score']:.3f}" if n.get("val_score") is not None else ""
    if n.get("delta") is not None:
        score += f" Δ{n['delta']:+.3f}"
    tip = [f"{n['id']}: {STATUS_LABEL.get(n['status'], n['status'])}", score, n.get("reason") or "", *hypotheses]
    title = escape("\n".join(t for t in tip if t))
    label = escape(n["id"] if len(n["id"]) <= 22 else n["id"][:21] + "…")
    star = " ★" if is_best else ""
    return (f'<g class="node status-{escape(n["status"])}" data-id="{escape(n["id"])}"><title>{title}</title>'
            f'<rect x="{x:.0f}" y="{y:.0f}" width="{BOX_W}" height="{BOX_H}" rx="5" fill="white" stroke="{color}" '
            f'stroke-width="{width}"{dashed}/>'
            f'<text x="{x + 6:.0f}" y="{y + 12:.0f}" fill="{color}" font-weight="600">{label}{star}</text>'
            f'<text x="{x + 6:.0f}" y="{y + 24:.0f}" fill="#334155">{escape(score)}</text></g>')
