"""Lineage views on the fixture lineage: rich tree, JSON, dot, mermaid, and bad input."""

from __future__ import annotations

import json

from lineage_fixture import NODES, RUN, SCRIPT

from evolve.report.tree import as_dot, as_json, as_mermaid, load_lineage

STATUSES = {n.id: n.status for n in NODES}


def test_tree_shows_every_candidate_with_verdict_scores_and_hypotheses(cli):
    result = cli("lineage", RUN)
    assert result.exit_code == 0, result.output
    out = result.output
    for node in NODES:
        assert node.id in out
    for label in ("rejected by critic", "rejected by acceptance", "pruned", "accepted", "★ best"):
        assert label in out
    assert "val 0.620 [0.54, 0.70]" in out and "Δ +0.120 [+0.08, +0.16]" in out and "131 tok/task" in out
    assert "Self-consistency voting reduces random errors" in out
    assert SCRIPT in out  # hypotheses are printed as text, never interpreted as markup
    assert out.index("c1a") < out.index("c2a") < out.index("c3b")


def test_tree_latest_run_is_default(cli):
    result = cli("lineage")
    assert result.exit_code == 0 and "c3b" in result.output


def test_json_lists_all_nodes_with_parents_best_path_and_edits(cli):
    result = cli("lineage", RUN, "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["run_id"] == RUN and data["best"] == "c3b"
    assert data["best_path"] == ["c0", "c1a", "c2a", "c3b"]
    got = {c["id"]: c for c in data["candidates"]}
    assert {k: v["status"] for k, v in got.items()} == STATUSES
    assert {k: v["parent_id"] for k, v in got.items()} == {n.id: n.parent for n in NODES}
    assert got["c1a"]["val_ci"] == [0.54, 0.7] or abs(got["c1a"]["val_ci"][0] - 0.54) < 1e-9
    assert got["c2c"]["reason"].startswith("cost rule violated")
    assert got["c1a"]["delta_ci"] == [0.08, 0.16] and got["c1b"]["delta_ci"] is None
    assert got["c1b"]["edits"][0]["hypothesis"].endswith(SCRIPT)
    assert [e["component"] for e in got["c3b"]["edits"]] == ["system", "skill"]
    assert got["c1a"]["version"] != got["c0"]["version"]


def test_compact_json_for_large_runs_is_the_same_data(fx, monkeypatch):
    from evolve.report import tree

    lineage = load_lineage(fx.store, RUN)
    indented = tree.json_bytes(lineage)
    monkeypatch.setattr(tree, "COMPACT_AFTER", 1)
    compact = tree.json_bytes(lineage)
    assert compact != indented
    assert json.loads(compact) == json.loads(indented) == json.loads(json.dumps(as_json(lineage)))


def test_dot_escapes_and_colors(fx):
    dot = as_dot(load_lineage(fx.store, RUN))
    assert dot.startswith(f'digraph "{RUN}"') and dot.rstrip().endswith("}")
    assert dot.count(" -> ") == len(NODES) - 1
    assert '\\"pwned\\"' in dot  # the planted quote in a hypothesis is escaped inside the tooltip
    for line in dot.splitlines()[3:-1]:
        assert line.replace('\\"', "").count('"') % 2 == 0, line
    assert "penwidth=3" in dot  # the best candidate stands out


def test_mermaid_nodes_edges_and_classes(fx):
    text = as_mermaid(load_lineage(fx.store, RUN))
    lines = text.splitlines()
    assert lines[0] == "graph LR"
    assert sum("-->" in line for line in lines) == len(NODES) - 1
    assert "classDef rejected_critic" in text and "classDef pruned" in text
    assert "<script" not in text


def test_unknown_format_and_run_are_one_line_errors(cli):
    bad = cli("lineage", RUN, "--format", "svg")
    assert bad.exit_code == 2
    assert "tree, json, dot, mermaid" in bad.output
    missing = cli("lineage", "nope")
    assert missing.exit_code == 2 and "unknown run 'nope'" in missing.output


def test_database_built_json_matches_the_python_one(fx, monkeypatch):
    from evolve.report import tree

    monkeypatch.setattr(tree, "COMPACT_AFTER", 1)  # take the large-run path on the fixture
    fast = json.loads(tree.lineage_json(fx.store, RUN))
    slow = json.loads(tree.json_bytes(load_lineage(fx.store, RUN)))
    assert fast["best"] == slow["best"] == "c3b" and fast["best_path"] == slow["best_path"]
    assert len(fast["candidates"]) == len(slow["candidates"]) == len(NODES)
    for a, b in zip(fast["candidates"], slow["candidates"], strict=True):
        assert a.keys() == b.keys() and a["edits"] == b["edits"] and a["id"] == b["id"]
        for key in ("val_score", "delta", "policy_tokens"):
            assert (a[key] is None and b[key] is None) or abs(a[key] - b[key]) < 1e-12


def test_large_tree_shows_the_best_path_with_counts(fx, monkeypatch):
    from rich.console import Console

    from evolve.report import tree

    console = Console(width=200, record=True)
    console.print(tree.rich_tree(load_lineage(fx.store, RUN), max_nodes=3))
    text = console.export_text()
    assert "the path to the best, 4 steps" in text
    assert "1 rejected by acceptance, 1 rejected by critic" in text  # c0's other children
    assert "c1b" not in text and "c3b" in text
