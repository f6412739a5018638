"""Spark's event log → per-workload Spark metrics (works the same for local and cluster masters).

The runner tags every workload's Spark jobs with a job group ``<workload>#<repetition>``;
after the session stops, the finished event log is read once and each group's tasks
are summed: task time, input/output bytes, shuffle read/write bytes, shuffle fetch
wait ("shuffle read blocked time", paper 001), spill to memory/disk and GC time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from storbench.engines.base import HOST_LABEL
from storbench.results.metrics import metric_table
from storbench.results.model import Sample

METRIC_SECTION = 30  # where this section comes in reports (storbench.analysis.metrics)

GROUP_SEPARATOR = "#"


def job_group(workload: str, repetition: int) -> str:
    return f"{workload}{GROUP_SEPARATOR}{repetition}"


# A workload may tag parts of its Spark jobs (tpcds: each query) as ``<its group>@key=value,...``;
# their metrics become samples of the workload with those labels, and count in its totals.
SUB_GROUP = "@"


def sub_group(parent: str, labels: dict[str, str]) -> str:
    return parent + SUB_GROUP + ",".join(f"{key}={value}" for key, value in labels.items())


def sub_labelled(meaning: Any) -> Any:
    """``meaning`` extended to sub-groups: the parent's meaning with the sub-group's labels added."""

    def lookup(name: str) -> tuple[str, int, dict[str, str]] | None:
        parent, sep, text = name.partition(SUB_GROUP)
        known = meaning(parent)
        if known is None or not sep:
            return known
        labels = dict(item.partition("=")[::2] for item in text.split(",") if "=" in item)
        return known[0], known[1], {**known[2], **labels}

    return lookup


def roll_up(groups: dict[str, "GroupTotals"]) -> dict[str, "GroupTotals"]:
    """The groups plus, for sub-groups, their stages added to the parent's (the workload's totals)."""
    out = {
        name: GroupTotals(name, dict(totals.stages), {h: t.copy() for h, t in totals.hosts.items()})
        for name, totals in groups.items()
    }
    for name, totals in groups.items():
        parent, sep, _ = name.partition(SUB_GROUP)
        if sep:
            into = out.setdefault(parent, GroupTotals(parent))
            into.stages.update(totals.stages)
            for host, host_totals in totals.hosts.items():
                into.hosts.setdefault(host, StageTotals(-1)).add(host_totals)
    return out


@dataclass
class StageTotals:
    stage_id: int
    name: str = ""
    tasks: int = 0
    task_time_ms: int = 0
    gc_time_ms: int = 0
    input_bytes: int = 0
    output_bytes: int = 0
    shuffle_read_bytes: int = 0
    shuffle_write_bytes: int = 0
    fetch_wait_ms: int = 0
    memory_spill_bytes: int = 0
    disk_spill_bytes: int = 0

    def copy(self) -> "StageTotals":
        return StageTotals(**vars(self))

    def add(self, other: "StageTotals") -> None:
        for name, value in vars(other).items():
            if name not in ("stage_id", "name"):
                setattr(self, name, getattr(self, name) + value)

    def add_task(self, metrics: dict[str, Any]) -> None:
        shuffle_read = metrics.get("Shuffle Read Metrics") or {}
        self.tasks += 1
        self.task_time_ms += metrics.get("Executor Run Time", 0)
        self.gc_time_ms += metrics.get("JVM GC Time", 0)
        self.input_bytes += (metrics.get("Input Metrics") or {}).get("Bytes Read", 0)
        self.output_bytes += (metrics.get("Output Metrics") or {}).get("Bytes Written", 0)
        self.shuffle_read_bytes += shuffle_read.get("Remote Bytes Read", 0) + shuffle_read.get("Local Bytes Read", 0)
        self.fetch_wait_ms += shuffle_read.get("Fetch Wait Time", 0)
        self.shuffle_write_bytes += (metrics.get("Shuffle Write Metrics") or {}).get("Shuffle Bytes Written", 0)
        self.memory_spill_bytes += metrics.get("Memory Bytes Spilled", 0)
        self.disk_spill_bytes += metrics.get("Disk Bytes Spilled", 0)


@dataclass
class GroupTotals:
    group: str
    stages: dict[int, StageTotals] = field(default_factory=dict)
    hosts: dict[str, StageTotals] = field(default_factory=dict)  # the same totals per executor host

    def total(self, attr: str) -> int:
        return sum(getattr(stage, attr) for stage in self.stages.values())


def parse_event_log(lines: Iterable[str]) -> dict[str, GroupTotals]:
    """Job-group name → its stages' task totals. Tasks of untagged jobs are left out."""
    stage_group: dict[int, str] = {}
    groups: dict[str, GroupTotals] = {}
    names: dict[int, str] = {}
    for line in lines:
        if not line.strip():
            continue
        event = json.loads(line)
        kind = event.get("Event")
        if kind == "SparkListenerJobStart":
            group = (event.get("Properties") or {}).get("spark.jobGroup.id")
            if group:
                for stage_id in event.get("Stage IDs", []):
                    stage_group[stage_id] = group
        elif kind == "SparkListenerStageSubmitted":
            info = event.get("Stage Info", {})
            names[info.get("Stage ID")] = info.get("Stage Name", "")
        elif kind == "SparkListenerTaskEnd":
            stage_id = event.get("Stage ID")
            group = stage_group.get(stage_id)
            metrics = event.get("Task Metrics")
            if group is None or not metrics:
                continue
            totals = groups.setdefault(group, GroupTotals(group))
            stage = totals.stages.setdefault(stage_id, StageTotals(stage_id, names.get(stage_id, "")))
            stage.add_task(metrics)
            host = (event.get("Task Info") or {}).get("Host")
            if host:
                totals.hosts.setdefault(host, StageTotals(-1)).add_task(metrics)
    return groups


_SAMPLES = (  # (metric, attribute, unit, scale)
    ("spark_task_time_s", "task_time_ms", "s", 1e-3),
    ("spark_input_mb", "input_bytes", "MB", 1e-6),
    ("spark_output_mb", "output_bytes", "MB", 1e-6),
    ("shuffle_read_mb", "shuffle_read_bytes", "MB", 1e-6),
    ("shuffle_write_mb", "shuffle_write_bytes", "MB", 1e-6),
    ("shuffle_read_blocked_s", "fetch_wait_ms", "s", 1e-3),
    ("spill_memory_mb", "memory_spill_bytes", "MB", 1e-6),
    ("spill_disk_mb", "disk_spill_bytes", "MB", 1e-6),
    ("gc_time_s", "gc_time_ms", "s", 1e-3),
)


def parse_group(name: str) -> tuple[str, int, dict[str, str]] | None:
    """``workload#repetition`` → (workload, repetition, no labels); None for groups that are not ours."""
    workload, _, repetition = name.rpartition(GROUP_SEPARATOR)
    return (workload, int(repetition), {}) if workload and repetition.isdigit() else None


def samples_from(groups: dict[str, GroupTotals], meaning: Any = None) -> list[Sample]:
    """Samples per job group; ``meaning(name)`` gives (workload, repetition, labels), default parse_group."""
    samples = []
    for name, totals in groups.items():
        known = (meaning or parse_group)(name)
        if known is None:
            continue
        workload, repetition, labels = known
        for metric, attr, unit, scale in _SAMPLES:
            samples.append(Sample(workload, metric, totals.total(attr) * scale, unit, repetition, dict(labels)))
        samples.append(Sample(workload, "spark_tasks", float(totals.total("tasks")), "tasks", repetition, dict(labels)))
        if len(totals.hosts) > 1:  # a cluster: what each executor host did (the runner names its node)
            for host, host_totals in sorted(totals.hosts.items()):
                samples += [
                    Sample(
                        workload,
                        metric,
                        getattr(host_totals, attr) * scale,
                        unit,
                        repetition,
                        {**labels, HOST_LABEL: host},
                    )
                    for metric, attr, unit, scale in _SAMPLES
                ]
    return samples


def stage_table(groups: dict[str, GroupTotals]) -> list[dict[str, Any]]:
    """Per stage detail, stored beside the samples for readers who want it."""
    return [
        {"group": name, **vars(stage)}
        for name, totals in groups.items()
        for stage in sorted(totals.stages.values(), key=lambda s: s.stage_id)
    ]


COMPRESSED_SUFFIXES = (".zstd", ".lz4", ".lzf", ".snappy")


def read_event_logs(directory: Path) -> dict[str, GroupTotals]:
    """Every event log file under ``directory`` (Spark 4 writes ``eventlog_v2_*/events_N_*``)."""
    groups: dict[str, GroupTotals] = {}
    for path in sorted(directory.rglob("*")):
        if not path.is_file() or path.name.startswith((".", "appstatus")):
            continue
        if path.suffix in COMPRESSED_SUFFIXES:
            raise ValueError(f"{path.name} is compressed; run with --spark-conf spark.eventLog.compress=false")
        with open(path, errors="replace") as handle:
            groups.update(parse_event_log(handle))
    return groups


# Spark's own task metrics per operation (diagnostics beside the paper's device metrics),
# as samples_from reports them; storbench.analysis.metrics puts them in the catalog.
METRICS = metric_table("""
    spark_task_time_s      | Spark task time           | s     | mean | lower/higher
    spark_input_mb         | Spark input               | MB    | mean | less/more
    spark_output_mb        | Spark output              | MB    | mean | less/more
    shuffle_read_mb        | Shuffle read              | MB    | mean | less/more
    shuffle_write_mb       | Shuffle write             | MB    | mean | less/more
    shuffle_read_blocked_s | Shuffle read blocked time | s     | mean | lower/higher
    spill_memory_mb        | Spilled to memory         | MB    | mean | less/more
    spill_disk_mb          | Spilled to disk           | MB    | mean | less/more
    gc_time_s              | JVM GC time               | s     | mean | lower/higher
    spark_tasks            | Spark tasks               | tasks | mean | fewer/more
""")
