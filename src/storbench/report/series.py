"""The telemetry time series of one run as HTML: throughput and CPU charts with the timed
operations shaded. ``rows`` are dicts with ``t`` (seconds) and numeric columns such as
``read_mbps``, ``write_mbps``, ``cpu_pct``, ``iowait_pct`` or per device ``vda.read_mbps``."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from storbench.report import heatmap, nodes
from storbench.report.svg import PALETTE, Line, esc, line_chart


def _number(value: Any) -> float | None:
    if value is None or value == "":
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _column(rows: list[dict[str, Any]], name: str) -> list[float | None]:
    return [_number(row.get(name)) for row in rows]


def _present(values: list[float | None]) -> bool:
    return any(v is not None for v in values)


def _throughput_lines(rows: list[dict[str, Any]]) -> list[Line]:
    lines = []
    for name, title, color in (("read_mbps", "read", PALETTE[0]), ("write_mbps", "write", PALETTE[1])):
        values = _column(rows, name)
        if _present(values):
            lines.append(Line(title, values, color))
    columns = list(dict.fromkeys(k for row in rows[:50] for k in row if "." in k and k.endswith("_mbps")))
    devices = list(dict.fromkeys(k.split(".", 1)[0] for k in columns))
    if not lines or 1 < len(devices) <= 4:  # per device when there is no total, or to show the spread
        for i, column in enumerate(columns[:8]):
            values = _column(rows, column)
            if _present(values):
                color = PALETTE[(2 + i) % len(PALETTE)] if lines else PALETTE[i % len(PALETTE)]
                lines.append(Line(column.replace("_mbps", ""), values, color, "5 3" if len(lines) >= 2 else ""))
    return lines


@dataclass
class RunSeries:
    """One run's series, ready to chart."""

    run_id: str
    name: str
    t: list[float]
    throughput: list[Line]
    cpu: list[Line]
    windows: list[dict[str, Any]]
    note: str = ""
    nodes: list[heatmap.NodeSeries] = field(default_factory=list)  # a cluster run's nodes, read + write MB/s

    @property
    def t_max(self) -> float:
        return max([self.t[-1] if self.t else 0.0] + [float(w["t1"]) for w in self.windows])

    @property
    def throughput_max(self) -> float:
        return max([v for line in self.throughput for v in line.values if v is not None] or [0.0])


def _node_lines(rows: list[dict[str, Any]], titles: dict[str, str]) -> list[heatmap.NodeSeries]:
    """Each node's read + write MB/s (``<label>.read_mbps`` and ``.write_mbps``), for the nodes in ``titles``."""
    out = []
    for label, title in titles.items():
        read, write = _column(rows, f"{label}.read_mbps"), _column(rows, f"{label}.write_mbps")
        values = [None if r is None and w is None else (r or 0.0) + (w or 0.0) for r, w in zip(read, write)]
        if _present(values):
            out.append(heatmap.NodeSeries(label, title, values))
    return out


def prepare(
    run_id: str,
    name: str,
    rows: list[dict[str, Any]],
    windows: list[dict[str, Any]],
    nodes: dict[str, str] | None = None,
) -> RunSeries:
    """``nodes``: a cluster run's node labels and their titles (``worker-3 (n003)``), in the order to show."""
    rows = sorted((row for row in rows if _number(row.get("t")) is not None), key=lambda row: float(row["t"]))
    windows = [w for w in windows if _number(w.get("t0")) is not None and _number(w.get("t1")) is not None]
    cpu = [
        Line(title, _column(rows, key), color)
        for key, title, color in (("cpu_pct", "CPU", PALETTE[3]), ("iowait_pct", "I/O wait", PALETTE[4]))
    ]
    series = RunSeries(
        run_id,
        name,
        [float(row["t"]) for row in rows],
        _throughput_lines(rows),
        [line for line in cpu if _present(line.values)],
        windows,
        nodes=_node_lines(rows, nodes or {}),
    )
    if not rows:
        series.note = "No telemetry series was recorded for this run."
    elif not series.throughput and not series.cpu:
        series.note = "The telemetry series has no throughput or CPU columns."
    return series


def section(series: RunSeries, t_max: float | None = None, throughput_max: float | None = None) -> str:
    """One run's charts (or a note why there are none); shared limits make runs comparable by eye."""
    parts = [f'<h3>{esc(series.name)} <span class="muted">{esc(series.run_id)}</span></h3>']
    if series.note:
        return parts[0] + f'<p class="muted">{esc(series.note)}</p>'
    attrs = f' data-run="{esc(series.run_id)}"'
    if series.throughput:
        top = throughput_max * 1.05 if throughput_max else None
        parts.append(
            '<figure><figcaption>Device throughput <span class="dir">(MB/s; timed operations shaded)'
            "</span></figcaption>"
            + line_chart(
                "series:throughput",
                f"{series.name}: device throughput (MB/s)",
                "MB/s",
                series.t,
                series.throughput,
                series.windows,
                y_max=top,
                t_max=t_max,
                extra_attrs=attrs,
            )
            + "</figure>"
        )
    if series.cpu:
        parts.append(
            '<figure><figcaption>CPU utilization <span class="dir">(% of all cores)</span></figcaption>'
            + line_chart(
                "series:cpu",
                f"{series.name}: CPU utilization (%)",
                "%",
                series.t,
                series.cpu,
                series.windows,
                y_max=100.0,
                t_max=t_max,
                extra_attrs=attrs,
            )
            + "</figure>"
        )
    if len(series.nodes) > 1:
        parts.append(_node_heatmap(series, t_max))
    return "\n".join(parts)


def _node_heatmap(series: RunSeries, t_max: float | None) -> str:
    inside = [i for i, tv in enumerate(series.t) if any(float(w["t0"]) <= tv <= float(w["t1"]) for w in series.windows)]
    inside = inside or list(range(len(series.t)))  # no timed operation known: the whole series
    means = [
        (node, statistics.fmean(vs))
        for node in series.nodes
        if (vs := [node.values[i] for i in inside if node.values[i] is not None])
    ]
    slow, median = nodes.slowest(means)
    if slow:
        named = "; ".join(f"{node.title} {mean:,.0f} MB/s ({behind:.0f}% below)" for node, mean, behind in slow)
        caption = (
            f'<p class="slowest"><b>Slowest nodes</b> (mean read + write MB/s in the timed operations; '
            f"median node {median:,.0f} MB/s): {esc(named)}</p>"
        )
    else:
        caption = (
            '<p class="slowest">No node is 10% or more below the median node in the timed operations.</p>'
            if median is not None
            else ""
        )
    svg = heatmap.heatmap(
        "series:nodes",
        f"{series.name}: read + write MB/s per node over time",
        series.t,
        series.nodes,
        series.windows,
        {node.label for node, _, _ in slow},
        t_max,
    )
    return (
        f'<figure><figcaption>Throughput per node <span class="dir">(read + write MB/s, one row per node; '
        f"darker is faster, the slowest nodes in red)</span></figcaption>{caption}{svg}</figure>"
    )
