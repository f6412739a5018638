"""The metric catalog: unit, direction, aggregation over repetitions and the paper's wording.

Paper 000 aggregates throughput and CPU as the maximum of the repetitions and latency
and completion time as their mean; ``aggregation`` encodes that rule per metric.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetricSpec:
    name: str
    title: str  # as the paper names it
    unit: str
    higher_is_better: bool
    aggregation: str  # "max" | "mean" | "min" | "sum"
    better_word: str  # "faster", "higher", "lower", "better usage"
    worse_word: str


_CATALOG = [
    MetricSpec("completion_time", "Time to complete", "s", False, "mean", "faster", "slower"),
    MetricSpec("max_read_mbps", "Maximum read throughput", "MB/s", True, "max", "higher", "lower"),
    MetricSpec("max_write_mbps", "Maximum write throughput", "MB/s", True, "max", "higher", "lower"),
    MetricSpec("avg_read_latency_ms", "Average read latency", "ms", False, "mean", "lower", "higher"),
    MetricSpec("avg_write_latency_ms", "Average write latency", "ms", False, "mean", "lower", "higher"),
    MetricSpec("max_cpu_pct", "Maximum CPU utilization", "%", True, "max", "better usage", "worse usage"),
    MetricSpec("avg_cpu_pct", "Average CPU utilization", "%", True, "mean", "better usage", "worse usage"),
    MetricSpec("read_mb", "Data read from devices", "MB", False, "mean", "less", "more"),
    MetricSpec("written_mb", "Data written to devices", "MB", False, "mean", "less", "more"),
    MetricSpec("max_util_pct", "Maximum device utilization", "%", False, "max", "lower", "higher"),
    MetricSpec("max_net_mbps", "Maximum network throughput", "MB/s", True, "max", "higher", "lower"),
    MetricSpec("energy_j", "Energy", "J", False, "mean", "lower", "higher"),
    MetricSpec("rows", "Rows", "rows", True, "max", "more", "fewer"),
    MetricSpec("dataset_mb", "Dataset size", "MB", True, "max", "larger", "smaller"),
]

CATALOG: dict[str, MetricSpec] = {spec.name: spec for spec in _CATALOG}


def spec_for(metric: str, unit: str = "") -> MetricSpec:
    """The spec of a metric; an unknown metric is lower-is-better-by-mean only if its unit is time."""
    if metric in CATALOG:
        return CATALOG[metric]
    if unit in ("s", "ms", "us"):
        return MetricSpec(metric, metric.replace("_", " "), unit, False, "mean", "lower", "higher")
    return MetricSpec(metric, metric.replace("_", " "), unit, True, "mean", "higher", "lower")
