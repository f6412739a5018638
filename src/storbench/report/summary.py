"""The short summary printed after a run: one line per timed operation with the paper's headline figures.

Time to complete, maximum read and write MB/s, average read and write latency, maximum CPU, and the
workload's own throughput (its first rate metric: records/s, ops/s, MB/s ...). The full table is
``storbench show RUN_ID`` (or ``run --verbose``); the reports hold everything.
"""

from __future__ import annotations

from storbench.analysis.metrics import workload_metrics
from storbench.analysis.model import PREPARE, Comparison, Row
from storbench.report import _format as f
from storbench.report.queries import check_lines
from storbench.report.table import align

COLUMNS = (("completion_time", "Time s"), ("max_read_mbps", "Read MB/s max"), ("max_write_mbps", "Write MB/s max"),
           ("avg_read_latency_ms", "Read lat ms"), ("avg_write_latency_ms", "Write lat ms"),
           ("max_cpu_pct", "CPU % max"))


def own_rate_metric(workload: str) -> str | None:
    """The workload's own throughput: the first metric it declares whose unit is a rate."""
    return next((m.name for m in workload_metrics(workload) or () if "/s" in m.unit), None)


def summary_text(comparison: Comparison) -> str:
    """A single run's short table; rows with labels (per node, per query, per job) are left to the full one."""
    by_workload: dict[str, dict[str, Row]] = {}
    rates: dict[str, list[Row]] = {}  # the workload's own rate: one row, labelled or not (fio labels its job)
    axes = _sweep_axes(comparison)
    for row in comparison.rows:
        if row.phase == PREPARE or workload_metrics(row.workload) is None:
            continue
        point = {k: v for k, v in row.labels.items() if k in axes}  # a sweep point is an operation of its own
        name = row.workload + (f" [{', '.join(f'{k}={v}' for k, v in point.items())}]" if point else "")
        if len(point) == len(row.labels):
            by_workload.setdefault(name, {})[row.metric] = row
        if row.metric == own_rate_metric(row.workload):
            rates.setdefault(name, []).append(row)
    if not by_workload:
        return "(no timed operation finished)"
    table = [["Operation", *(title for _, title in COLUMNS), "Throughput"]]
    for workload, rows in by_workload.items():
        cells = [workload]
        for metric, _ in COLUMNS:
            row = rows.get(metric)
            cells.append(f.num(row.cells[0].aggregate) if row else "")
        own = (rows.get(own_rate_metric(next(iter(rows.values())).workload) or "")
               or next(iter(rates.get(workload, [])[:1]), None))
        cells.append(f"{f.num(own.cells[0].aggregate)} {own.unit}" if own else "")
        table.append(cells)
    checks = check_lines(comparison)  # TPC-DS's per-query outcomes, counted
    runs = comparison.runs[0]
    note = (f"{runs.name}: {len(by_workload)} operation(s); aggregates over repetitions (max for throughput "
            f"and CPU, mean for time and latency). Full table: storbench show {runs.run_id}")
    return "\n".join([*align(table, right=set(range(1, len(COLUMNS) + 2))), "", *checks, note])


def _sweep_axes(comparison: Comparison) -> set[str]:
    """The parameters a run swept (its rows carry them as labels)."""
    return {key for run in comparison.source_runs for point in run.manifest.get("sweep") or [] for key in point}
