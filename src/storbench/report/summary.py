"""The short summary printed after a run: each operation's headline figures first, then time and device telemetry.

A workload family leads with its paper's own figures (``Workload.headline``: ycsb's throughput, operations per
server CPU thread and per watt, p99 per operation; COSBench's MB/s, ops/s and high-water mark ...): one table per
family that declares figures beyond paper 000's, an operation a line. Then one line per operation with paper 000's
figures: time to complete, maximum read and write MB/s, average read and write latency, maximum CPU, and the
workload's own throughput (its first rate metric). A figure no operation of a table has is left out, never
shown as 0. The full table is ``storbench show RUN_ID`` (or ``run --verbose``); the reports hold everything.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from storbench.analysis.metrics import headline, workload_metrics
from storbench.analysis.model import PREPARE, Comparison, Row
from storbench.report import _format as f
from storbench.report import limited, nodes, queries
from storbench.report.queries import check_lines
from storbench.report.grid import align
from storbench.results.metrics import DEVICE_HEADLINE
from storbench.report.registry import register

COLUMNS = (
    ("completion_time", "Time s"),
    ("max_read_mbps", "Read MB/s max"),
    ("max_write_mbps", "Write MB/s max"),
    ("avg_read_latency_ms", "Read lat ms"),
    ("avg_write_latency_ms", "Write lat ms"),
    ("max_cpu_pct", "CPU % max"),
)
MAX_PARTS = 6  # labelled values (per operation type ...) said in one cell; more end in "…"


@dataclass
class _Operation:
    """One timed operation (a workload, or one sweep point of it): its rows by metric, split by their labels."""

    workload: str
    rows: dict[str, list[Row]] = field(default_factory=dict)

    def plain(self, metric: str) -> Row | None:
        """The operation's figure over everything it did: its unlabelled row."""
        return next((row for row in self.rows.get(metric, []) if not row.labels), None)

    def cell(self, metric: str) -> str:
        """ "2,100 us (READ 2,000, UPDATE 2,600)": the figure over the operation (its row with the fewest labels:
        fio labels all of its own with ioengine) and its parts by what tells them apart ("" when it has none);
        with no such one figure (two stream counts), each part with its unit."""
        rows = [row for row in self.rows.get(metric, []) if row.cells[0].aggregate is not None]
        if not rows:
            return ""
        fewest = [row for row in rows if len(row.labels) == min(len(r.labels) for r in rows)]
        main = fewest[0] if len(fewest) == 1 else None
        parts = [row for row in rows if row is not main]
        told = [*parts, *([main] if main else [])]
        keys = [
            k
            for k in dict.fromkeys(k for row in parts for k in row.labels)
            if len({row.labels.get(k) for row in told}) > 1
        ]
        more = " …" if len(parts) > MAX_PARTS else ""
        if main is None:
            return (
                ", ".join(
                    f"{f.num(row.cells[0].aggregate)} {row.unit} ({_label_text(row, keys)})"
                    for row in parts[:MAX_PARTS]
                )
                + more
            )
        said = [f"{_label_text(row, keys)} {f.num(row.cells[0].aggregate)}" for row in parts[:MAX_PARTS]]
        return f"{f.num(main.cells[0].aggregate)} {main.unit}" + (f" ({', '.join(said)}{more})" if said else "")


def _label_text(row: Row, keys: list[str]) -> str:
    # the engines' operation types (op=READ) read as YCSB prints them, bare; any other label as key=value
    return " ".join(row.labels[k] if k == "op" else f"{k}={row.labels[k]}" for k in keys if k in row.labels)


def own_rate_metric(workload: str) -> str | None:
    """The workload's own throughput: the first metric it declares whose unit is a rate."""
    return next((m.name for m in workload_metrics(workload) or () if "/s" in m.unit), None)


@register("summary", "the headline figures printed after a run", listed=False)
def summary_text(comparison: Comparison) -> str:
    """A single run's short tables; per node and per query rows are left to the full one."""
    operations = _operations(comparison)
    if not operations:
        return "(no timed operation finished)"
    lines = []
    for lead in dict.fromkeys(_own_headline(op.workload) for op in operations.values()):
        lines += _headline_table(
            {name: op for name, op in operations.items() if _own_headline(op.workload) == lead}, lead
        )
    if lines:
        lines.append("Time and device telemetry")
    lines += _device_table(operations)
    bounds = limited.summary_lines(comparison)
    lines += ["", *bounds] if bounds else []
    runs = comparison.runs[0]
    note = (
        f"{runs.name}: {len(operations)} operation(s); aggregates over repetitions (max for throughput "
        f"and CPU, mean for time and latency). Full table: storbench show {runs.run_id}"
    )
    return "\n".join([*lines, "", *check_lines(comparison), note])


def _operations(comparison: Comparison) -> dict[str, _Operation]:
    axes = _sweep_axes(comparison)
    out: dict[str, _Operation] = {}
    for row in comparison.rows:
        if (
            row.phase == PREPARE
            or workload_metrics(row.workload) is None
            or queries.is_query_row(row)
            or nodes.is_node_row(row)
        ):
            continue
        point = {k: v for k, v in row.labels.items() if k in axes}  # a sweep point is an operation of its own
        name = row.workload + (f" [{', '.join(f'{k}={v}' for k, v in point.items())}]" if point else "")
        rest = {k: v for k, v in row.labels.items() if k not in axes}
        split = Row(row.workload, row.phase, row.metric, rest, row.spec, row.unit, row.cells, row.deltas, row.scopes)
        out.setdefault(name, _Operation(row.workload)).rows.setdefault(row.metric, []).append(split)
    return out


def _own_headline(workload: str) -> tuple[str, ...]:
    """What the workload leads with beyond paper 000's figures (those are every operation's, in the last table)."""
    return tuple(m for m in headline(workload) if m not in DEVICE_HEADLINE)


def _headline_table(operations: dict[str, _Operation], lead: tuple[str, ...]) -> list[str]:
    metrics = [m for m in lead if any(op.cell(m) for op in operations.values())]  # a figure none has: left out
    if not metrics:
        return []
    titles = [
        _two_lines(next(row for op in operations.values() for row in op.rows.get(m, [])).spec.title) for m in metrics
    ]
    table = [["Operation", *(t[0] for t in titles)], ["", *(t[1] for t in titles)]]
    table += [[name, *(op.cell(m) for m in metrics)] for name, op in operations.items()]
    return ["Headline figures", *align(table, head=2), ""]


def _device_table(operations: dict[str, _Operation]) -> list[str]:
    """Paper 000's figures per operation, and the workload's own rate where its headline did not say it."""
    table = [["Operation", *(title for _, title in COLUMNS), "Throughput"]]
    for name, op in operations.items():
        cells = [name]
        for metric, _ in COLUMNS:
            row = op.plain(metric)
            cells.append(f.num(row.cells[0].aggregate) if row else "")
        rate = own_rate_metric(op.workload) or ""
        # unlabelled, else its first row (fio labels its job's ioengine)
        own = None if rate in headline(op.workload) else op.plain(rate) or next(iter(op.rows.get(rate, [])), None)
        cells.append(f"{f.num(own.cells[0].aggregate)} {own.unit}" if own else "")
        table.append(cells)
    if not any(cells[-1] for cells in table[1:]):  # every rate said already (or none has one)
        table = [cells[:-1] for cells in table]
    return [*align(table, right=set(range(1, len(COLUMNS) + 2)))]


def _two_lines(title: str) -> tuple[str, str]:
    """A long title over two header lines, split at the space nearest its middle; a short one on the first."""
    words = title.split()
    if len(title) <= 18 or len(words) < 2:
        return title, ""
    cut = min(range(1, len(words)), key=lambda i: abs(len(" ".join(words[:i])) - len(" ".join(words[i:]))))
    return " ".join(words[:cut]), " ".join(words[cut:])


def _sweep_axes(comparison: Comparison) -> set[str]:
    """The parameters a run swept (its rows carry them as labels)."""
    return {key for run in comparison.source_runs for point in run.manifest.get("sweep") or [] for key in point}
