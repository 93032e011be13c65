"""Rendering of lineage trees, diffs, reports and exporters."""
