"""The HTML section of per-node results (see :mod:`storbench.report.nodes`): per operation a table with
one line per node (one value per run, the change against the baseline), grouped bars (one group per
node, one bar per run) for the operation's direction of I/O, the cluster lines and the telemetry gaps."""

from __future__ import annotations

from storbench.analysis.model import Comparison
from storbench.report import _format as f
from storbench.report import nodes
from storbench.report.svg import PALETTE, BarSeries, bar_chart, esc


def _direction(block: nodes.Block) -> str:
    """ "write" when the nodes wrote more than they read in this operation, else "read"."""

    def total(metric: str) -> float:
        return sum(v or 0.0 for line in block.nodes for v in line.values.get(metric, []))

    return "write" if total("written_mb") > total("read_mb") else "read"


def _charts(c: Comparison, block: nodes.Block) -> str:
    way = _direction(block)
    wanted = [
        (f"max_{way}_mbps", f"Maximum {way} throughput per node", "MB/s"),
        (
            "written_mb" if way == "write" else "read_mb",
            f"Data {'written' if way == 'write' else 'read'} per node",
            "MB",
        ),
    ]
    figures = []
    for metric, title, unit in wanted:
        if not any(m == metric for m, _, _ in block.metrics):
            continue
        series = [
            BarSeries(run.name, [line.values[metric][i] for line in block.nodes], color=PALETTE[i % len(PALETTE)])
            for i, run in enumerate(c.runs)
        ]
        key = f"nodes:{block.group}:{block.set_name}:{metric}"
        svg = bar_chart(key, f"{block.group}: {title} ({unit})", unit, [line.node for line in block.nodes], series)
        figures.append(
            f'<figure><figcaption>{esc(title)} <span class="dir">({esc(unit)}; one group per node, '
            f"one bar per run)</span></figcaption>{svg}</figure>"
        )
    return f'<div class="charts">{"".join(figures)}</div>' if figures else ""


def _table(c: Comparison, block: nodes.Block) -> str:
    multi = len(c.runs) > 1
    head = "".join(
        f"<th{' class=num' if i >= (2 if multi else 1) else ''}>{esc(h)}</th>"
        for i, h in enumerate(nodes.header(c, block))
    )
    body = []
    per_node = len(c.runs) * 2 - 1
    for line in block.nodes:
        for i, run in enumerate(c.runs):
            first = (
                f'<th rowspan="{per_node}">{esc(line.node)}'
                + (f" <span class=dir>({esc(line.names)})</span>" if line.names else "")
                + "</th>"
                if i == 0
                else ""
            )
            cells = "".join(f"<td class=num>{esc(f.num(line.values[m][i]))}</td>" for m, _, _ in block.metrics)
            body.append(f"<tr>{first}{f'<td class=run>{esc(run.name)}</td>' if multi else ''}{cells}</tr>")
        for i in range(1, len(c.runs)):
            cells = ""
            for m, _, _ in block.metrics:
                delta = line.deltas[m][i]
                verdict = {"better": "better", "worse": "worse"}.get(delta.verdict if delta else "", "same")
                cells += f'<td class=num><span class="{verdict}">{esc(f.delta_text(delta, False))}</span></td>'
            body.append(f'<tr><td class="dir run">{esc(c.runs[i].name)} vs {esc(c.runs[0].name)}</td>{cells}</tr>')
    return (
        f'<div class="scroll"><table class="nodes"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody>'
        "</table></div>"
    )


MANY = 12  # past this many nodes: the slowest named, the table folded, no bars (one group per node is unreadable)


def _slowest_lines(c: Comparison, block: nodes.Block) -> str:
    """Per run, the nodes 10% or more below the median node's maximum throughput in the operation's direction."""
    way = _direction(block)
    metric = f"max_{way}_mbps"
    if not any(m == metric for m, _, _ in block.metrics):
        return ""
    items = []
    for i, run in enumerate(c.runs):
        slow, median = nodes.slowest(
            [(line, line.values[metric][i]) for line in block.nodes if line.values[metric][i] is not None]
        )
        if median is None:
            continue
        prefix = f"{run.name}: " if len(c.runs) > 1 else ""
        named = "; ".join(f"{line.title} {f.num(v)} ({behind:.0f}% below)" for line, v, behind in slow)
        items.append(
            f"<li>{esc(prefix)}<b>slowest nodes</b> by maximum {esc(way)} MB/s (median node "
            f"{esc(f.num(median))}): {esc(named) if slow else 'none 10% or more below the median'}</li>"
        )
    return f'<ul class="cluster">{"".join(items)}</ul>' if items else ""


def _many(c: Comparison, block: nodes.Block) -> str:
    """A block of more than :data:`MANY` nodes: the slowest named, every node's figures one click away."""
    return (
        f"{_slowest_lines(c, block)}<details><summary>All {len(block.nodes)} nodes' figures</summary>"
        f'{_table(c, block)}</details><p class="muted">Each node over time: the heat map under '
        "Telemetry over time.</p>"
    )


def _gap_alerts(gaps: list[str]) -> str:
    return "".join(f'<div class="alert warn" role="alert">⚠ Telemetry gap, {esc(gap)}</div>' for gap in gaps)


def html_section(c: Comparison) -> str:
    blocks = nodes.blocks(c)
    if not blocks:
        return ""
    note = nodes.presence_note(c)
    parts = [f'<p class="muted">{esc(note)}</p>' if note else "", _gap_alerts(nodes.other_gaps(c))]
    for block in blocks:
        cluster = "".join(f"<li>{esc(line)}</li>" for line in block.cluster)
        body = (
            _many(c, block)
            if len(block.nodes) > MANY
            else f'{_table(c, block)}<ul class="cluster">{cluster}</ul>{_charts(c, block)}'
        )
        if len(block.nodes) > MANY:
            body = f'<ul class="cluster">{cluster}</ul>{body}'
        parts.append(f"<h3>{esc(block.heading)}</h3>{_gap_alerts(block.gaps)}{body}")
    legend = (
        "Nodes are labelled by role and ordinal (worker-1, worker-2, …), so the nodes of two clusters "
        "line up by role; the node's own name is in brackets."
    )
    return f'<section><h2>Per-node results</h2>{"".join(parts)}<p class="muted">{esc(legend)}</p></section>'
