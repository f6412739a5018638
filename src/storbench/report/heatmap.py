"""Per-node throughput over time as one heat map (SVG): a row per node, a column per time bucket, darker is
faster; the timed operations are marked above it and the slowest nodes are named beside their rows.

A cluster run's ``telemetry.csv`` holds each node's MB/s beside the cluster's (``worker-3.read_mbps``); one line
per node in a line chart is unreadable past a handful of nodes, a heat map of a hundred stays readable (a slow
node is a pale stripe). Cells of one colour next to each other in a row are drawn as one rectangle, so the page
stays small whatever the run's length.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from storbench.report.svg import WINDOW_FILLS, esc, nice_ticks, tick_text

LEVELS = ("#f7fbff", "#deebf7", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b")
NO_DATA = "#e5e7eb"
SLOW = "#b42318"
COLUMNS = 240  # time buckets at most


@dataclass
class NodeSeries:
    label: str  # worker-3
    title: str  # worker-3 (n003)
    values: list[float | None]  # MB/s (read + write) at each ``t``


def _buckets(values: list[float | None], edges: list[int]) -> list[float | None]:
    out = []
    for a, b in zip(edges, edges[1:]):
        chunk = [v for v in values[a:b] if v is not None]
        out.append(statistics.fmean(chunk) if chunk else None)
    return out


def heatmap(
    key: str,
    label: str,
    t: list[float],
    nodes: list[NodeSeries],
    windows: list[dict],
    named: set[str],
    t_max: float | None = None,
) -> str:
    """The SVG; ``named``: labels of the nodes whose names are drawn in red (the slowest)."""
    row_h = 12 if len(nodes) <= 60 else 9
    left, right, top, bottom = 150, 16, 30, 38
    width = 1000
    height = top + row_h * len(nodes) + bottom
    columns = min(COLUMNS, max(len(t), 1))
    edges = [round(i * len(t) / columns) for i in range(columns + 1)]
    t_end = max([t[-1] if t else 0.0, t_max or 0.0] + [float(w.get("t1", 0)) for w in windows]) or 1.0
    x_ticks = nice_ticks(t_end, 8)
    x0, x1 = left, width - right
    sx = (x1 - x0) / x_ticks[-1]
    bounds = [t[e] for e in edges[:-1]] + [t[-1]] if t else [0.0] * (columns + 1)  # each bucket's time span
    bucketed = [_buckets(n.values, edges) for n in nodes]
    top_value = max([v for row in bucketed for v in row if v is not None] or [1.0]) or 1.0
    out = [
        f'<svg class="chart heatmap" data-metric="{esc(key)}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{esc(label)}" xmlns="http://www.w3.org/2000/svg">'
    ]
    shades: dict[str, str] = {}
    for w in windows:
        workload = str(w.get("workload"))
        fill = shades.setdefault(workload, WINDOW_FILLS[len(shades) % len(WINDOW_FILLS)])
        a, b = x0 + float(w["t0"]) * sx, x0 + float(w["t1"]) * sx
        out.append(
            f'<rect x="{a:.1f}" y="{top - 14}" width="{max(1.0, b - a):.1f}" height="10" fill="{fill}">'
            f"<title>{esc(workload)}: {float(w['t0']):.1f}–{float(w['t1']):.1f} s</title></rect>"
        )
        if b - a >= 6.0 * len(workload) + 6:
            out.append(
                f'<text x="{(a + b) / 2:.1f}" y="{top - 6}" text-anchor="middle" class="wlabel">{esc(workload)}</text>'
            )
    for r, (node, row) in enumerate(zip(nodes, bucketed)):
        y = top + r * row_h
        slow = node.label in named
        mark = f' fill="{SLOW}" font-weight="700"' if slow else ""
        out.append(
            f'<text x="{x0 - 6}" y="{y + row_h - 2}" text-anchor="end" class="tick"{mark}>{esc(node.title)}</text>'
        )
        c = 0
        while c < columns:  # one rectangle per run of equal colour
            colour = _colour(row[c], top_value)
            end = c + 1
            while end < columns and _colour(row[end], top_value) == colour:
                end += 1
            a, b = x0 + bounds[c] * sx, x0 + bounds[end] * sx
            out.append(
                f'<rect x="{a:.1f}" y="{y}" width="{max(b - a, 1.0):.1f}" height="{row_h - 1}" fill="{colour}"/>'
            )
            c = end
        if slow:
            out.append(
                f'<rect x="{x0 - 1}" y="{y - 1}" width="{bounds[-1] * sx + 2:.1f}" height="{row_h + 1}" '
                f'fill="none" stroke="{SLOW}" stroke-width="1.5"/>'
            )
    y0 = top + row_h * len(nodes)
    for tv in x_ticks:
        out.append(
            f'<text x="{x0 + tv * sx:.1f}" y="{y0 + 14}" text-anchor="middle" class="tick">{esc(tick_text(tv))}</text>'
        )
    out.append(
        f'<text x="{(x0 + x1) / 2:.1f}" y="{height - 4}" text-anchor="middle" class="axis">time (s); colour: '
        f"MB/s, white 0 to darkest {top_value:,.0f}; grey: no telemetry</text>"
    )
    return "\n".join(out + ["</svg>"])


def _colour(value: float | None, top: float) -> str:
    if value is None:
        return NO_DATA
    return LEVELS[min(len(LEVELS) - 1, max(0, int(value / top * len(LEVELS))))]
