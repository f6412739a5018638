"""What limited each operation: the "bound by" line of every report (the USE method's question, answered at the
sampled resolution by telemetry.bound).

A run with nodes has it per node, under its per-node table (report/nodes.py). A run on one machine, the case N=1,
has the machine's, from the operation's own device, network and CPU figures, under the operation's table:
``bound by: CPU (CPU 97%, devices ≤ 5% busy): a faster disk would not change this figure``. No limit is known
for the machine's own devices and links, so it is device-bound only when a device was busy and never link-bound.
The short summary after a run says it for every timed operation, one machine or many.
"""

from __future__ import annotations

from storbench.analysis.model import OVERALL, PREPARE, Comparison, Row
from storbench.report import nodes
from storbench.report.grid import align
from storbench.telemetry.bound import figures, machine_sentence

FIGURES = ("max_write_mbps", "max_read_mbps", "max_net_rx_mbps", "max_net_tx_mbps", "max_util_pct", "avg_cpu_pct")
# The machine's figures decide a verdict when one of these is there: with no stated limit, MB/s alone say nothing
# of capacity (and a label set of network rows alone, interface=lo, is not an operation)
DECIDING = ("max_util_pct", "avg_cpu_pct")

# (group, its labels other than the node as text) -> (the machine's rows by metric, the nodes' by node and metric)
Operations = dict[tuple[str, str], tuple[dict[str, Row], dict[str, dict[str, Row]]]]


def _operations(c: Comparison, prepare: bool = True) -> Operations:
    out: Operations = {}
    for row in c.rows:
        if row.metric not in FIGURES or row.phase == OVERALL or (row.phase == PREPARE and not prepare):
            continue  # the overall group spans every operation: no one resource held it
        rest = ", ".join(f"{k}={v}" for k, v in sorted(row.labels.items()) if k != nodes.LABEL)
        machine, per_node = out.setdefault((row.group, rest), ({}, {}))
        if nodes.is_node_row(row):
            per_node.setdefault(row.labels[nodes.LABEL], {})[row.metric] = row
        else:
            machine[row.metric] = row
    return out


def _machine(c: Comparison, index: int, rows: dict[str, Row]) -> str:
    """Run ``index``'s line from the machine's rows ("" when it has no deciding figure)."""
    values = {metric: row.cells[index].aggregate for metric, row in rows.items()}
    if all(values.get(metric) is None for metric in DECIDING):
        return ""
    return machine_sentence(figures("machine", values, {}))


def machine_lines(c: Comparison) -> dict[str, list[str]]:
    """Group -> its "bound by" lines for the runs without nodes: one per label set and run, named when several."""
    out: dict[str, list[str]] = {}
    alone = [i for i in range(len(c.runs)) if not nodes.has_nodes(c, i)]  # each run's rows scanned once
    for (group, labels), (machine, _) in _operations(c).items():
        for i in alone:
            if not (said := _machine(c, i, machine)):
                continue
            who = ", ".join(filter(None, [c.runs[i].name if len(c.runs) > 1 else "", labels]))
            out.setdefault(group, []).append(f"{who}: {said}" if who else said)
    return out


def summary_lines(c: Comparison) -> list[str]:
    """A single run's timed operations, one line each: per node when the run has nodes, else the machine's."""
    clustered = nodes.has_nodes(c, 0)
    table = [["Operation", "Bound by (at the sampled resolution)"]]
    for (group, labels), (machine, per_node) in _operations(c, prepare=False).items():
        said = nodes.bound_sentence(c, 0, per_node) if clustered else _machine(c, 0, machine)
        if said:
            table.append([group + (f" [{labels}]" if labels else ""), said.removeprefix("bound by: ")])
    return align(table) if len(table) > 1 else []
