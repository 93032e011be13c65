"""networkx views of a run's lineage: ancestors, descendants, best path, frontier."""

from __future__ import annotations

import networkx as nx

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


def ancestors(graph: nx.DiGraph, node: str) -> list[str]:
    """Ancestors of `node`, root first."""
    path = [node]
    while True:
        parents = list(graph.predecessors(path[-1]))
        if not parents:
            break
        path.append(parents[0])
    return list(reversed(path[1:]))


def descendants(graph: nx.DiGraph, node: str) -> set[str]:
    return set(nx.descendants(graph, node))


def best_path(graph: nx.DiGraph, best: str) -> list[str]:
    """Root-to-best chain of accepted candidates."""
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
