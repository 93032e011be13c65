"""Small inline SVG charts for the HTML report (no dependency, no network, every text escaped).

Each function returns one `<svg>` element as a string, safe to embed: all caller text goes
through `html.escape`, numbers are formatted by this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

PALETTE = ("#2563eb", "#16a34a", "#d97706", "#9333ea", "#dc2626", "#0891b2", "#64748b")
FONT = 'font-family="system-ui, sans-serif" font-size="11"'


@dataclass(frozen=True)
class Series:
    """One line of a line chart: points (x, y) and a name; `dots` draws markers only."""

    name: str
    points: Sequence[tuple[float, float]]
    color: str = ""
    dots: bool = False
    dashed: bool = False


def _nice_range(values: Sequence[float], floor_zero: bool = False) -> tuple[float, float]:
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    if floor_zero:
        lo = min(lo, 0.0)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    pad = (hi - lo) * 0.08
    return (lo if floor_zero and lo == 0 else lo - pad), hi + pad


def _fmt(value: float) -> str:
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{value:,.0f}"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.2f}" if abs(value) < 10 else f"{value:.0f}"


def _frame(title: str, width: int, height: int, body: list[str], chart_id: str) -> str:
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="{escape(chart_id)}" role="img" '
            f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" {FONT}>'
            f'<title>{escape(title)}</title>'
            f'<text x="8" y="16" font-size="13" font-weight="600">{escape(title)}</text>')
    return head + "".join(body) + "</svg>"


def _axes(x0: int, y0: int, x1: int, y1: int, ylo: float, yhi: float, ylabel: str) -> list[str]:
    out = [f'<line x1="{x0}" y1="{y1}" x2="{x1}" y2="{y1}" stroke="#94a3b8"/>',
           f'<line x1="{x0}" y1="{y0}" x2="{x0}" y2="{y1}" stroke="#94a3b8"/>',
           f'<text x="{x0 - 34}" y="{y0 - 6}" fill="#475569">{escape(ylabel)}</text>']
    for i in range(5):
        v = ylo + (yhi - ylo) * i / 4
        y = y1 - (y1 - y0) * i / 4
        out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x1}" y2="{y:.1f}" stroke="#e2e8f0"/>'
                   f'<text x="{x0 - 4}" y="{y + 4:.1f}" text-anchor="end" fill="#475569">{_fmt(v)}</text>')
    return out


def line_chart(title: str, series: Sequence[Series], *, chart_id: str, xlabel: str = "round", ylabel: str = "",
               width: int = 560, height: int = 260, hline: tuple[float, str] | None = None) -> str:
    """Lines (or dot clouds) over a numeric x axis, with a legend and an optional reference line."""
    xs = [p[0] for s in series for p in s.points]
    ys = [p[1] for s in series for p in s.points] + ([hline[0]] if hline else [])
    if not xs:
        return _frame(title, width, 60, ['<text x="8" y="40" fill="#64748b">no data yet</text>'], chart_id)
    x0, y0, x1, y1 = 48, 30, width - 175, height - 30
    xlo, xhi = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    ylo, yhi = _nice_range(ys)

    def px(x: float) -> float:
        return x0 + (x - xlo) / (xhi - xlo) * (x1 - x0)

    def py(y: float) -> float:
        return y1 - (y - ylo) / (yhi - ylo) * (y1 - y0)

    body = _axes(x0, y0, x1, y1, ylo, yhi, ylabel)
    for x in sorted(set(xs))[:: max(1, len(set(xs)) // 10)]:
        body.append(f'<text x="{px(x):.1f}" y="{y1 + 14}" text-anchor="middle" fill="#475569">{_fmt(x)}</text>')
    body.append(f'<text x="{(x0 + x1) / 2:.0f}" y="{height - 2}" text-anchor="middle" fill="#475569">'
                f'{escape(xlabel)}</text>')
    if hline:
        body.append(f'<line x1="{x0}" y1="{py(hline[0]):.1f}" x2="{x1}" y2="{py(hline[0]):.1f}" stroke="#dc2626" '
                    f'stroke-dasharray="4 3"/><text x="{x1 - 2}" y="{py(hline[0]) - 4:.1f}" text-anchor="end" '
                    f'fill="#dc2626">{escape(hline[1])}</text>')
    for i, s in enumerate(series):
        color = s.color or PALETTE[i % len(PALETTE)]
        pts = [(px(x), py(y)) for x, y in s.points]
        if not s.dots and len(pts) > 1:
            dash = ' stroke-dasharray="5 3"' if s.dashed else ""
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
            body.append(f'<polyline class="series" points="{path}" fill="none" stroke="{color}" '
                        f'stroke-width="2"{dash}/>')
        radius = 3 if s.dots else 3.5
        body += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{radius}" fill="{color}" fill-opacity="0.8"/>'
                 for x, y in pts[:2000]]
        ly = y0 + 4 + i * 16
        body.append(f'<rect x="{x1 + 12}" y="{ly}" width="10" height="10" fill="{color}"/>'
                    f'<text x="{x1 + 26}" y="{ly + 9}">{escape(s.name)}</text>')
    return _frame(title, width, height, body, chart_id)


def bar_chart(title: str, groups: Sequence[str], bars: Sequence[tuple[str, Sequence[float | None]]], *,
              chart_id: str, errors: Sequence[Sequence[tuple[float, float] | None]] | None = None,
              ylabel: str = "", width: int = 560, height: int = 260, floor_zero: bool = True,
              hline: tuple[float, str] | None = None) -> str:
    """Grouped vertical bars: one group per label, one bar per named series, optional [lo, hi] whiskers."""
    values = [v for _, vs in bars for v in vs if v is not None]
    if errors:
        values += [e for es in errors for pair in es if pair for e in pair]
    if hline:
        values.append(hline[0])
    if not values or not groups:
        return _frame(title, width, 60, ['<text x="8" y="40" fill="#64748b">no data yet</text>'], chart_id)
    x0, y0, x1, y1 = 48, 30, width - 130, height - 34
    ylo, yhi = _nice_range(values, floor_zero=floor_zero)

    def py(y: float) -> float:
        return y1 - (y - ylo) / (yhi - ylo) * (y1 - y0)

    body = _axes(x0, y0, x1, y1, ylo, yhi, ylabel)
    slot = (x1 - x0) / len(groups)
    bw = slot * 0.8 / max(1, len(bars))
    for g, label in enumerate(groups):
        gx = x0 + g * slot + slot * 0.1
        body.append(f'<text x="{gx + slot * 0.4:.1f}" y="{y1 + 14}" text-anchor="middle" fill="#475569">'
                    f'{escape(label[:18])}</text>')
        for b, (name, vals) in enumerate(bars):
            v = vals[g] if g < len(vals) else None
            if v is None:
                continue
            color = PALETTE[b % len(PALETTE)]
            top, base = py(max(v, ylo)), py(max(ylo, 0.0) if floor_zero else ylo)
            bx = gx + b * bw
            body.append(f'<rect class="bar" x="{bx:.1f}" y="{min(top, base):.1f}" width="{bw - 2:.1f}" '
                        f'height="{abs(base - top):.1f}" fill="{color}"><title>{escape(name)} {escape(label)}: '
                        f'{_fmt(v)}</title></rect><text x="{bx + bw / 2 - 1:.1f}" y="{min(top, base) - 3:.1f}" '
                        f'text-anchor="middle" font-size="10">{_fmt(v)}</text>')
            err = errors[b][g] if errors and b < len(errors) and g < len(errors[b]) else None
            if err:
                cx = bx + bw / 2 - 1
                body.append(f'<line x1="{cx:.1f}" y1="{py(err[0]):.1f}" x2="{cx:.1f}" y2="{py(err[1]):.1f}" '
                            f'stroke="#0f172a" stroke-width="1.2"/>')
    if hline:
        body.append(f'<line x1="{x0}" y1="{py(hline[0]):.1f}" x2="{x1}" y2="{py(hline[0]):.1f}" stroke="#dc2626" '
                    f'stroke-dasharray="4 3"/><text x="{x1 + 4}" y="{py(hline[0]) + 4:.1f}" fill="#dc2626">'
                    f'{escape(hline[1])}</text>')
    for b, (name, _) in enumerate(bars):
        ly = y0 + 4 + b * 16
        body.append(f'<rect x="{x1 + 12}" y="{ly}" width="10" height="10" fill="{PALETTE[b % len(PALETTE)]}"/>'
                    f'<text x="{x1 + 26}" y="{ly + 9}">{escape(name)}</text>')
    return _frame(title, width, height, body, chart_id)


def progress_bar(title: str, used: float, total: float | None, *, chart_id: str, unit: str = "",
                 width: int = 560) -> str:
    """A horizontal meter: `used` of `total` (just the number when the total is unknown)."""
    frac = min(1.0, used / total) if total else 0.0
    inner = width - 16
    label = f"{used:,.0f} of {total:,.0f} {unit} ({frac:.0%})" if total else f"{used:,.0f} {unit} (no budget set)"
    color = "#16a34a" if frac < 0.8 else "#d97706" if frac < 1 else "#dc2626"
    body = [f'<rect x="8" y="26" width="{inner}" height="18" rx="4" fill="#e2e8f0"/>',
            f'<rect class="bar" x="8" y="26" width="{inner * frac:.1f}" height="18" rx="4" fill="{color}"/>',
            f'<text x="12" y="60" fill="#334155">{escape(label)}</text>']
    return _frame(title, width, 70, body, chart_id)
