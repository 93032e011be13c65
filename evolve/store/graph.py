"""networkx views of a run's lineage: ancestors, descendants, best path, frontier."""

from __future__ import annotations

import networkx as nx

from evolve.errors import StoreError
from evolve.store.records import CandidateRecord


def lineage_graph(candidates: list[CandidateRecord]) -> nx.DiGraph:
    """Directed graph parent -> child; node attribute `record` holds the CandidateRecord."""
    graph = nx.DiGraph()
    for c in candidates:
        graph.add_node(c.id, record=c)
    for c in candidates:
        if c.parent_id is not None and c.parent_id in graph:
            graph.add_edge(c.parent_id, c.id)
    return graph


def _require(graph: nx.DiGraph, node: str) -> None:
    if node not in graph:
        raise StoreError(f"unknown candidate {node!r} in this lineage; see `evolve lineage RUN` for candidate ids")


def ancestors(graph: nx.DiGraph, node: str) -> list[str]:
    """Ancestors of `node`, root first (a parent cycle in corrupt data stops the walk)."""
    _require(graph, node)
    path = [node]
    seen = {node}
    while True:
        parents = [p for p in graph.predecessors(path[-1]) if p not in seen]
        if not parents:
            break
        path.append(parents[0])
        seen.add(parents[0])
    return list(reversed(path[1:]))


def descendants(graph: nx.DiGraph, node: str) -> set[str]:
    """Every candidate derived from `node`, directly or not."""
    _require(graph, node)
    return set(nx.descendants(graph, node))


def best_path(graph: nx.DiGraph, best: str) -> list[str]:
    """Root-to-best chain: the ancestors of `best`, root first, then `best`."""
    return [*ancestors(graph, best), best]


def frontier(graph: nx.DiGraph) -> list[str]:
    """Accepted (or seed) candidates with no accepted child: where evolution can continue."""
    live = {"accepted", "seed"}
    result = []
    for node, data in graph.nodes(data=True):
        if data["record"].status not in live:
            continue
        if not any(graph.nodes[ch]["record"].status == "accepted" for ch in graph.successors(node)):
            result.append(node)
    return result
