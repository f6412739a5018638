"""Per-node results of cluster runs in reports: rows labelled ``node`` are shown here, one table per
operation with one line per node, instead of one row per node and metric in the operation's table.

Each table has the headline metrics of every node, one value per run and (two or more runs) the
change against the baseline; under it the cluster line of each run (cluster throughput, the spread
between nodes and the slowest node, from the manifest's ``slowest_nodes``) and the telemetry gaps
that fall into the operation. Node labels are ``<role>-<k>``, so nodes of two clusters line up by
role. HTML adds grouped bars per operation (one group per node, one bar per run).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from storbench.telemetry.bound import figures as node_figures, sentence
from storbench.analysis.model import PREPARE, Comparison, Delta, Row
from storbench.report import _format as f
from storbench.report.grid import align, markdown_table
from storbench.report.node_config import config_nodes, limits_text, manifest_of
from storbench.results.runfiles import parse_json, read_text

LABEL = "node"
METRICS = (
    ("max_read_mbps", "Max read", "MB/s"),
    ("max_write_mbps", "Max write", "MB/s"),
    ("read_mb", "Read", "MB"),
    ("written_mb", "Written", "MB"),
    ("avg_read_latency_ms", "Read latency", "ms"),
    ("avg_write_latency_ms", "Write latency", "ms"),
    ("max_cpu_pct", "Max CPU", "%"),
    ("max_util_pct", "Max util", "%"),
    ("max_net_tx_mbps", "Max send", "MB/s"),
    ("max_net_rx_mbps", "Max receive", "MB/s"),
)


def is_node_row(row: Row) -> bool:
    return LABEL in row.labels


def natural(label: str) -> tuple:
    """Sort key putting worker-2 before worker-10."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", label))


SLOW_SHARE, SLOW_NAMED = 0.10, 3  # a node is named slow 10% or more below the median node; three at most


def slowest(values: list[tuple[Any, float]]) -> tuple[list[tuple[Any, float, float]], float | None]:
    """The (at most three) items whose value is 10% or more below the median of ``values``, slowest first, with
    their value and how far below the median they are (%); and the median (None with fewer than 3 values)."""
    if len(values) < 3:
        return [], None
    median = statistics.median(v for _, v in values)
    slow = [
        (item, v, (1 - v / median) * 100)
        for item, v in sorted(values, key=lambda iv: iv[1])
        if median > 0 and v <= median * (1 - SLOW_SHARE)
    ]
    return slow[:SLOW_NAMED], median


def titles(manifest: dict[str, Any]) -> dict[str, str]:
    """A run's node labels (in natural order) and their titles: ``worker-3 (n003)``, or the label alone."""
    nodes = (manifest.get("config") or {}).get("nodes") or []
    found = {str(n.get("label")): said(n) for n in nodes}
    return {
        label: f"{label} ({said})" if said else label
        for label, said in sorted(found.items(), key=lambda kv: natural(kv[0]))
    }


def said(node: dict[str, Any]) -> str:
    """What a node's label is followed by: its name when not the label, and the limits a lab set on it."""
    name = str(node.get("name") or "")
    return "; ".join(p for p in (name if name != str(node.get("label")) else "", limits_text(node)) if p)


@dataclass
class NodeLine:
    node: str  # worker-1
    names: str  # the node's name(s) from the manifests when not the label: "n1" or "base: n1, new: m1"
    values: dict[str, list[float | None]]
    deltas: dict[str, list[Delta | None]]

    @property
    def title(self) -> str:
        return f"{self.node} ({self.names})" if self.names else self.node


@dataclass
class Block:
    workload: str
    group: str  # "fio-write" or "fio-write (prepare)"
    set_name: str  # the labels other than the node
    metrics: list[tuple[str, str, str]]  # (metric, title, unit) present
    nodes: list[NodeLine]
    cluster: list[str] = field(default_factory=list)  # one sentence per run
    gaps: list[str] = field(default_factory=list)

    @property
    def heading(self) -> str:
        return f"{self.group}: per node" + (f" ({self.set_name})" if self.set_name else "")


def _prefix(c: Comparison, index: int) -> str:
    return f"{c.runs[index].name}: " if len(c.runs) > 1 else ""


def _names(c: Comparison, node: str) -> str:
    per_run = [next((said(n) for n in config_nodes(c, i) if n.get("label") == node), None) for i in range(len(c.runs))]
    present = [(c.runs[i].name, name) for i, name in enumerate(per_run) if name]
    if len({name for _, name in present}) <= 1:
        return present[0][1] if present else ""
    return ", ".join(f"{run}: {name}" for run, name in present)


def has_nodes(c: Comparison, index: int) -> bool:
    return bool(config_nodes(c, index)) or any(is_node_row(r) and r.cells[index].n for r in c.rows)


def presence_note(c: Comparison) -> str:
    """Which runs measured nodes, when some did and some did not ("" otherwise)."""
    flags = [has_nodes(c, i) for i in range(len(c.runs))]
    if all(flags) or not any(flags):
        return ""
    with_nodes = ", ".join(r.name for r, flag in zip(c.runs, flags) if flag)
    without = ", ".join(r.name for r, flag in zip(c.runs, flags) if not flag)
    return (
        f"Per-node telemetry in {with_nodes} only; {without} measured the machine storbench ran on "
        "(its nodes show n/a)."
    )


def _slowest(c: Comparison, index: int, workload: str, prepare: bool) -> str:
    entries = [
        s
        for s in manifest_of(c, index).get("slowest_nodes") or []
        if s.get("workload") == workload and (s.get("repetition") == 0) == prepare
    ]
    if not entries:
        return ""
    node, count = Counter(str(s.get("node")) for s in entries).most_common(1)[0]
    names = {str(n.get("label")): str(n.get("name")) for n in config_nodes(c, index)}
    who = f"{node} ({names[node]})" if names.get(node) not in (None, node) else node
    top = max(float(s.get("spread_pct") or 0.0) for s in entries if str(s.get("node")) == node)
    reps = f" in {count} of {len(entries)} repetitions" if len(entries) > 1 else ""
    held = Counter(str(s.get("held_by") or "") for s in entries if str(s.get("node")) == node).most_common(1)[0][0]
    why = f", held by its {held}" if held else ""
    measure = " in network rate" if held == "link" else ""  # a device-held node is behind in MB moved
    return f"slowest node {who}{reps}{why}, {'up to ' if count > 1 else ''}{f.num(top)}% behind the busiest{measure}"


def _cluster_line(c: Comparison, index: int, rows: dict[str, Row], workload: str, prepare: bool) -> str:
    if not has_nodes(c, index):
        return f"{_prefix(c, index)}no nodes (the machine storbench ran on)"

    def value(metric: str, unit: str) -> str:
        row = rows.get(metric)
        return f.with_unit(row.cells[index].aggregate if row else None, unit)

    parts = [
        f"cluster read {value('cluster_read_mbps', 'MB/s')}, write {value('cluster_write_mbps', 'MB/s')}",
        f"spread between nodes {value('node_spread_pct', '%')}",
    ]
    slowest = _slowest(c, index, workload, prepare)
    return f"{_prefix(c, index)}" + "; ".join(parts + ([slowest] if slowest else []))


def _bound_lines(c: Comparison, nodes: dict[str, dict[str, Row]]) -> list[str]:
    """Per run, what limited the operation on each node."""
    return [_prefix(c, i) + said for i in range(len(c.runs)) if (said := bound_sentence(c, i, nodes))]


def bound_sentence(c: Comparison, index: int, nodes: dict[str, dict[str, Row]]) -> str:
    """Run ``index``'s "bound by" line for one operation from its nodes' rows (node -> metric -> row), with the
    limits its manifest states (telemetry.bound); "" when no node has a figure."""
    limits = {str(n.get("label")): n.get("limits") or {} for n in config_nodes(c, index)}

    def value(rows: dict[str, Row], metric: str) -> float | None:
        return rows[metric].cells[index].aggregate if metric in rows else None

    figures = [
        node_figures(node, {metric: value(rows, metric) for metric in rows}, limits.get(node, {}))
        for node, rows in sorted(nodes.items(), key=lambda kv: natural(kv[0]))
        if any(value(rows, m) is not None for m in ("max_write_mbps", "max_util_pct", "avg_cpu_pct"))
    ]
    return sentence(figures)


def _run_dir_json(c: Comparison, index: int, name: str) -> list[dict[str, Any]]:
    run = c.source_runs[index] if index < len(c.source_runs) else None
    path = Path(run.path) / name if run is not None and run.path else None
    text = read_text(path) if path is not None else None  # a link is refused, never followed
    try:
        return list(parse_json(text)) if text is not None else []
    except (TypeError, ValueError):
        return []


def gap_text(gap: dict[str, Any]) -> str:
    return (
        f"{gap.get('node')}: no telemetry from {float(gap.get('from_s') or 0):.1f} s to "
        f"{float(gap.get('to_s') or 0):.1f} s: {gap.get('error')}"
    )


def _overlaps(gap: dict[str, Any], window: dict[str, Any]) -> bool:
    return float(gap.get("from_s") or 0) < float(window.get("t1") or 0) and float(gap.get("to_s") or 0) > float(
        window.get("t0") or 0
    )


def _gaps(c: Comparison, index: int) -> list[dict[str, Any]]:
    return list(manifest_of(c, index).get("telemetry_gaps") or [])


def _operation_gaps(c: Comparison, workload: str, prepare: bool) -> list[str]:
    out = []
    for i in range(len(c.runs)):
        windows = [
            w
            for w in _run_dir_json(c, i, "windows.json")
            if w.get("workload") == workload and (w.get("repetition") == 0) == prepare
        ]
        out += [_prefix(c, i) + gap_text(g) for g in _gaps(c, i) if any(_overlaps(g, w) for w in windows)]
    return out


def other_gaps(c: Comparison) -> list[str]:
    """Gaps that fall into no operation's window (or all of a run's gaps when its windows are unknown)."""
    out = []
    for i in range(len(c.runs)):
        windows = _run_dir_json(c, i, "windows.json")
        out += [
            _prefix(c, i) + gap_text(g) + (" (between operations)" if windows else "")
            for g in _gaps(c, i)
            if not any(_overlaps(g, w) for w in windows)
        ]
    return out


def blocks(c: Comparison) -> list[Block]:
    by_key: dict[tuple[str, str, str, str], dict[str, dict[str, Row]]] = {}
    cluster: dict[str, dict[str, Row]] = {}
    for row in c.rows:
        rest = ", ".join(f"{k}={v}" for k, v in sorted(row.labels.items()) if k != LABEL)
        if is_node_row(row):
            key = (row.workload, row.group, row.phase, rest)
            by_key.setdefault(key, {}).setdefault(row.labels[LABEL], {})[row.metric] = row
        elif not row.labels:
            cluster.setdefault(row.group, {})[row.metric] = row
    out = []
    for (workload, group, phase, rest), nodes in by_key.items():
        present = [m for m in METRICS if any(m[0] in rows for rows in nodes.values())]
        lines = [
            NodeLine(
                node,
                _names(c, node),
                {
                    m: [cell.aggregate for cell in rows[m].cells] if m in rows else [None] * len(c.runs)
                    for m, _, _ in present
                },
                {m: list(rows[m].deltas) if m in rows else [None] * len(c.runs) for m, _, _ in present},
            )
            for node, rows in sorted(nodes.items(), key=lambda kv: natural(kv[0]))
        ]
        prepare = phase == PREPARE
        out.append(
            Block(
                workload,
                group,
                rest,
                present,
                lines,
                [_cluster_line(c, i, cluster.get(group, {}), workload, prepare) for i in range(len(c.runs))]
                + _bound_lines(c, nodes),
                _operation_gaps(c, workload, prepare),
            )
        )
    return out


def table_rows(c: Comparison, block: Block, words: bool = True) -> list[list[str]]:
    """Body rows: per node one row per run and, with 2+ runs, one row per change against the baseline
    (first cell the node, second the run), values as :func:`_format.num`."""
    names = [r.name for r in c.runs]
    rows = []
    for line in block.nodes:
        for i, name in enumerate(names):
            rows.append([line.title if i == 0 else "", name] + [f.num(line.values[m][i]) for m, _, _ in block.metrics])
        for i in range(1, len(names)):
            rows.append(
                ["", f"{names[i]} vs {names[0]}"]
                + [f.delta_text(line.deltas[m][i], words) for m, _, _ in block.metrics]
            )
    if len(names) == 1:
        rows = [[row[0], *row[2:]] for row in rows]
    return rows


def header(c: Comparison, block: Block) -> list[str]:
    return ["Node"] + (["Run"] if len(c.runs) > 1 else []) + [f"{t} {u}" for _, t, u in block.metrics]


def text_lines(c: Comparison) -> list[str]:
    out: list[str] = []
    note = presence_note(c)
    if note:
        out += [note, ""]
    for block in blocks(c):
        out.append(block.heading)
        first = 2 if len(c.runs) > 1 else 1
        out += align([header(c, block), *table_rows(c, block)], right=set(range(first, first + len(block.metrics))))
        out += [f"  {line}" for line in block.cluster]
        out += [f"  !! {gap}" for gap in block.gaps] + [""]
    gaps = other_gaps(c)
    out += [f"!! telemetry gap, {gap}" for gap in gaps] + ([""] if gaps else [])
    return out


def markdown_lines(c: Comparison, esc_md: Callable[[str], str]) -> list[str]:
    out: list[str] = []
    note = presence_note(c)
    if note:
        out += [esc_md(note), ""]
    for block in blocks(c):
        first = 2 if len(c.runs) > 1 else 1
        out += [f"### {esc_md(block.heading)}", ""]
        out += markdown_table(
            [esc_md(h) for h in header(c, block)],
            [[esc_md(x) for x in row] for row in table_rows(c, block)],
            right=set(range(first, first + len(block.metrics))),
        )
        out += [""] + [f"- {esc_md(line)}" for line in block.cluster]
        out += [f"- **Telemetry gap, {esc_md(gap)}**" for gap in block.gaps] + [""]
    out += [f"> **Telemetry gap, {esc_md(gap)}**" for gap in other_gaps(c)]
    return out + ([""] if other_gaps(c) else [])
