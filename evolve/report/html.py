"""The self-contained HTML report of a run: inline CSS and SVG, no script, no network.

Every value from the store (model output, task text, hypotheses, reasons) is escaped by jinja2's
autoescape; only the SVG produced by `evolve.report.svg` / `tree_svg` (which escape their own
text) is inserted as markup.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from evolve.report.data import ReportData, collect
from evolve.report.tree import STATUS_COLOR
from evolve.store import LineageStore

TEMPLATES = Path(__file__).resolve().parent / "templates"


@cache
def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                             autoescape=True)
    env.globals.update(fmt_score=fmt_score, fmt_delta=fmt_delta, fmt_num=fmt_num, colors=STATUS_COLOR)
    return env


def fmt_num(value: Any, digits: int = 0) -> str:
    if not isinstance(value, int | float):
        return "–"
    return f"{value:,.{digits}f}"


def fmt_delta(value: Any) -> str:
    return f"{value:+.3f}" if isinstance(value, int | float) else "–"


def fmt_score(part: dict[str, Any]) -> str:
    score = part.get("score")
    if not isinstance(score, int | float):
        return "–"
    lo, hi = part.get("ci_low"), part.get("ci_high")
    ci = f" [{lo:.3f}, {hi:.3f}]" if isinstance(lo, int | float) and isinstance(hi, int | float) else ""
    return f"{score:.3f}{ci}"


def render_report(data: ReportData, *, db: str = "") -> str:
    """The report page for `data`."""
    from evolve import __version__

    return _env().get_template("report.html.j2").render(
        run=data.run, overview=data.overview, counts=data.counts, tree=data.tree, hidden=data.hidden,
        charts=data.charts, splits=data.splits, accepted=data.accepted, rejected=data.rejected,
        rubrics=data.rubrics, usage=data.usage, examples=data.examples, best=data.best, notes=data.notes,
        round_rows=data.round_rows, proposer_note=data.proposer_note, version=__version__, db=db)


def write_report(store: LineageStore, run_id: str, out: str | Path) -> Path:
    """Collect run `run_id` from `store` and write the HTML report to `out`; return the path."""
    out = Path(out)
    if out.is_dir():
        out = out / f"report-{run_id}.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    db = store.url.rsplit("/", 1)[-1] if store.url.startswith("sqlite") else store.engine.url.render_as_string()
    out.write_text(render_report(collect(store, run_id), db=db), encoding="utf-8")
    return out
