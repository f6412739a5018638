"""Inline SVG charts for the HTML report: grouped bars (the papers' figures) and time series.

Every chart is one ``<svg class="chart" data-metric=...>`` with explicit width, height
and viewBox, so it has a size without any stylesheet; all text is escaped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from html import escape

from storbench.report._format import num

PALETTE = ["#2b5c8a", "#e07b39", "#3c8d5a", "#b8455b", "#7459a8", "#8c6d46", "#3f9bb3", "#7f7f7f"]
WINDOW_FILLS = ["#dde7f2", "#f7e5d6", "#dcefe3", "#f1dde3", "#e6e0f1", "#efe7d8"]
INK, MUTED, GRID = "#1f2937", "#6b7280", "#e5e7eb"


def esc(text: object) -> str:
    return escape(str(text), quote=True)


def nice_ticks(top: float, count: int = 5) -> list[float]:
    """0 .. a round number >= ``top`` in steps of 1, 2, 2.5 or 5 × 10^k."""
    if not top or top <= 0 or not math.isfinite(top):
        return [0.0, 1.0]
    raw = top / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    ticks, value = [0.0], 0.0
    while value < top - 1e-9 * step:
        value += step
        ticks.append(round(value, 10))
    return ticks


def compact(value: float) -> str:
    """A short value label, as the tables print it but with k/M/G from 100,000: 6,369 · 0.41 · 10G."""
    size = abs(value)
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e5, "k")):
        if size >= limit:
            return f"{value / limit:.3g}{suffix}"
    return num(value)


def tick_text(value: float) -> str:
    """An axis tick (a round number): 0 · 2.5 · 2,000 · 100k."""
    return compact(value) if abs(value) >= 1e5 else f"{value:,.6g}"


def _open(key: str, width: int, height: int, label: str, extra: str = "") -> list[str]:
    return [
        f'<svg class="chart" data-metric="{esc(key)}"{extra} xmlns="http://www.w3.org/2000/svg" '
        f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{esc(label)}">',
        f"<title>{esc(label)}</title>",
    ]


def _legend(names: list[tuple[str, str]], x: float, y: float, width: float, line: bool = False) -> list[str]:
    out, cx, cy = [], x, y
    for name, color in names:
        item = 18 + 7.0 * len(name) + 18
        if cx + item > x + width and cx > x:
            cx, cy = x, cy + 18
        mark = (
            f'<line x1="{cx:.1f}" y1="{cy - 4:.1f}" x2="{cx + 14:.1f}" y2="{cy - 4:.1f}" stroke="{color}" '
            f'stroke-width="2.5"/>'
            if line
            else f'<rect x="{cx:.1f}" y="{cy - 10:.1f}" width="12" height="12" rx="2" fill="{color}" '
            f'stroke="#000" stroke-opacity="0.12"/>'
        )
        out += [mark, f'<text x="{cx + 18:.1f}" y="{cy:.1f}" class="legend">{esc(name)}</text>']
        cx += item
    return out


def _y_axis(ticks: list[float], y, left: float, right: float, unit: str, top: float, bottom: float) -> list[str]:
    out = []
    for t in ticks:
        yy = y(t)
        out.append(f'<line x1="{left:.1f}" y1="{yy:.1f}" x2="{right:.1f}" y2="{yy:.1f}" stroke="{GRID}"/>')
        out.append(
            f'<text x="{left - 6:.1f}" y="{yy + 4:.1f}" text-anchor="end" class="tick">{esc(tick_text(t))}</text>'
        )
    mid = (top + bottom) / 2
    out.append(
        f'<text x="14" y="{mid:.1f}" transform="rotate(-90 14 {mid:.1f})" text-anchor="middle" '
        f'class="axis">{esc(unit)}</text>'
    )
    return out


@dataclass
class BarSeries:
    name: str
    values: list[float | None]
    lows: list[float | None] = field(default_factory=list)  # min over repetitions (whisker), per group
    highs: list[float | None] = field(default_factory=list)
    color: str = ""


def bar_chart(key: str, label: str, unit: str, groups: list[str], series: list[BarSeries]) -> str:
    """Grouped bars: one group per workload, one bar per run, value labels and min–max whiskers."""
    n = max(1, len(series))
    bar = 40 if n <= 2 else 30 if n <= 4 else 20
    gap, pad, left, right, top, bottom = 6, 36, 64, 16, 44, 40
    group_w = n * bar + (n - 1) * gap
    width = max(560, left + right + len(groups) * (group_w + pad))
    height = 300
    slot = (width - left - right) / max(1, len(groups))
    highest = max([v for s in series for v in s.values + s.highs if v is not None] or [0.0])
    ticks = [0.0, 20.0, 40.0, 60.0, 80.0, 100.0] if unit == "%" and 50 <= highest <= 100 else nice_ticks(highest * 1.08)
    y0, y1 = height - bottom, top
    scale = (y0 - y1) / ticks[-1]

    def y(v: float) -> float:
        return y0 - max(0.0, v) * scale

    out = _open(key, width, height, label)
    out += _y_axis(ticks, y, left, width - right, unit, y1, y0)
    for gi, group in enumerate(groups):
        gx = left + gi * slot + (slot - group_w) / 2
        for si, s in enumerate(series):
            x = gx + si * (bar + gap)
            cx = x + bar / 2
            value = s.values[gi] if gi < len(s.values) else None
            if value is None:
                out.append(f'<text x="{cx:.1f}" y="{y0 - 6:.1f}" text-anchor="middle" class="na">n/a</text>')
                continue
            yy = y(value)
            out.append(
                f'<rect x="{x:.1f}" y="{yy:.1f}" width="{bar}" height="{max(0.5, y0 - yy):.1f}" '
                f'fill="{s.color}"><title>{esc(s.name)} · {esc(group)}: {esc(compact(value))} '
                f"{esc(unit)}</title></rect>"
            )
            lo = s.lows[gi] if gi < len(s.lows) else None
            hi = s.highs[gi] if gi < len(s.highs) else None
            if lo is not None and hi is not None and hi > lo:
                out.append(
                    f'<path d="M{cx:.1f} {y(lo):.1f}V{y(hi):.1f}M{cx - 5:.1f} {y(lo):.1f}h10'
                    f'M{cx - 5:.1f} {y(hi):.1f}h10" class="whisker"/>'
                )
            label_y = min(yy, y(hi) if hi is not None else yy) - 5
            out.append(
                f'<text x="{cx:.1f}" y="{label_y:.1f}" text-anchor="middle" class="value">{esc(compact(value))}</text>'
            )
        name = group if len(group) <= 22 else group[:21] + "…"
        out.append(
            f'<text x="{left + gi * slot + slot / 2:.1f}" y="{y0 + 20:.1f}" text-anchor="middle" '
            f'class="group">{esc(name)}</text>'
        )
    out.append(f'<line x1="{left}" y1="{y0}" x2="{width - right}" y2="{y0}" stroke="{MUTED}"/>')
    out += _legend([(s.name, s.color) for s in series], left, 20, width - left - right)
    return "\n".join(out + ["</svg>"])


@dataclass
class Line:
    name: str
    values: list[float | None]
    color: str = ""
    dash: str = ""


def _downsample(t: list[float], lines: list[Line], buckets: int) -> tuple[list[float], list[Line]]:
    """At most ``buckets`` points per line, keeping each bucket's peak (maxima are what reports show)."""
    if len(t) <= buckets * 2:
        return t, lines
    size = len(t) / buckets
    edges = [int(i * size) for i in range(buckets)] + [len(t)]
    new_t = [t[edges[i]] for i in range(buckets)]
    out = []
    for line in lines:
        peaks = []
        for i in range(buckets):
            chunk = [v for v in line.values[edges[i] : edges[i + 1]] if v is not None]
            peaks.append(max(chunk) if chunk else None)
        out.append(Line(line.name, peaks, line.color, line.dash))
    return new_t, out


def line_chart(
    key: str,
    label: str,
    unit: str,
    t: list[float],
    lines: list[Line],
    windows: list[dict],
    y_max: float | None = None,
    t_max: float | None = None,
    extra_attrs: str = "",
) -> str:
    """Time series with the timed operations shaded (one shade per workload, named in the legend and,
    where they fit, in a band above the plot); a None value breaks its line."""
    width, height, left, right, top, bottom = 1000, 262, 64, 16, 48, 38
    t, lines = _downsample(t, lines, width - left - right)
    t_end = max([t[-1] if t else 0.0, t_max or 0.0] + [float(w.get("t1", 0)) for w in windows]) or 1.0
    x_ticks = nice_ticks(t_end, 8)
    highest = max([v for line in lines for v in line.values if v is not None] or [0.0])
    ticks = nice_ticks(y_max if y_max else highest * 1.05)
    x0, x1, y0, y1 = left, width - right, height - bottom, top
    sx, sy = (x1 - x0) / x_ticks[-1], (y0 - y1) / ticks[-1]

    def x(v: float) -> float:
        return x0 + v * sx

    def y(v: float) -> float:
        return y0 - min(max(v, 0.0), ticks[-1]) * sy

    out = _open(key, width, height, label, extra_attrs)
    shades: dict[str, str] = {}
    for w in windows:
        workload = str(w.get("workload"))
        fill = shades.setdefault(workload, WINDOW_FILLS[len(shades) % len(WINDOW_FILLS)])
        a, b = x(float(w["t0"])), x(float(w["t1"]))
        rep = f" #{w['repetition']}" if w.get("repetition") else ""
        out.append(
            f'<rect x="{a:.1f}" y="{y1 - 16:.1f}" width="{max(1.0, b - a):.1f}" height="{y0 - y1 + 16:.1f}" '
            f'fill="{fill}" class="window"><title>{esc(workload + rep)}: {float(w["t0"]):.1f}–'
            f"{float(w['t1']):.1f} s</title></rect>"
        )
        for text in (workload + rep, rep.strip()):
            if text and b - a >= 6.0 * len(text) + 6:
                out.append(
                    f'<text x="{(a + b) / 2:.1f}" y="{y1 - 5:.1f}" text-anchor="middle" class="wlabel">'
                    f"{esc(text)}</text>"
                )
                break
    out += _y_axis(ticks, y, x0, x1, unit, y1, y0)
    for t_ in x_ticks:
        out.append(
            f'<text x="{x(t_):.1f}" y="{y0 + 16:.1f}" text-anchor="middle" class="tick">{esc(tick_text(t_))}</text>'
        )
    out.append(f'<text x="{(x0 + x1) / 2:.1f}" y="{height - 4}" text-anchor="middle" class="axis">time (s)</text>')
    for line in lines:
        d, pen = [], "M"
        for tv, v in zip(t, line.values):
            if v is None:
                pen = "M"
                continue
            d.append(f"{pen}{x(tv):.1f} {y(v):.1f}")
            pen = "L"
        if d:
            dash = f' stroke-dasharray="{line.dash}"' if line.dash else ""
            out.append(
                f'<path d="{"".join(d)}" fill="none" stroke="{line.color}" stroke-width="1.6" '
                f'stroke-linejoin="round"{dash}><title>{esc(line.name)}</title></path>'
            )
    out.append(f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y0}" stroke="{MUTED}"/>')
    out += _legend([(line.name, line.color) for line in lines], x0, 16, x1 - x0, line=True)
    shade_x = x0 + sum(36 + 7.0 * len(line.name) for line in lines) + 24
    out += _legend(list(shades.items()), shade_x, 16, x1 - shade_x)
    return "\n".join(out + ["</svg>"])
