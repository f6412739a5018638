"""fio's results: its JSON (3.x, with fio 2.x's microsecond fields as a fallback) and per-second logs.

Units out: MB is 10^6 bytes and MB/s 10^6 bytes per second, as everywhere in storbench;
latencies in milliseconds. With ``group_reporting=1`` fio reports one entry per group
(the aggregate); without it one entry per job, and the aggregate is computed here:
bandwidth, IOPS and bytes add up, mean latency is weighted by I/O count and the
percentiles are taken from the merged latency histograms (``json+`` bins), as fio does.
"""

from __future__ import annotations

import math
import re
import os
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from storbench.engines.fio import load_json

DIRECTIONS = ("read", "write", "trim")
PERCENTILES = {"p50": 50.0, "p90": 90.0, "p99": 99.0, "p99_9": 99.9}


@dataclass
class DirectionStats:
    """One direction (read/write/trim) of one fio job entry."""

    io_bytes: int
    bw_bytes: float
    iops: float
    runtime_ms: float
    total_ios: int
    lat_mean_ns: float | None
    clat_mean_ns: float | None
    clat_percentiles_ns: dict[float, float]
    clat_bins: dict[int, int] | None = None  # json+ only: latency histogram (ns -> count)

    def percentile_ms(self, percentile: float) -> float | None:
        for key, value in self.clat_percentiles_ns.items():
            if abs(key - percentile) < 1e-6:
                return value / 1e6
        return None


@dataclass
class JobStats:
    name: str
    groupid: int
    directions: dict[str, DirectionStats]  # only directions that moved data
    job_runtime_ms: float | None = None
    usr_cpu: float | None = None
    sys_cpu: float | None = None


@dataclass
class FioResult:
    version: str
    jobs: list[JobStats]
    grouped: bool  # True: each entry is fio's own group aggregate (group_reporting)

    def aggregate(self) -> dict[str, DirectionStats]:
        if len(self.jobs) == 1:
            return dict(self.jobs[0].directions)
        merged: dict[str, DirectionStats] = {}
        for direction in DIRECTIONS:
            parts = [job.directions[direction] for job in self.jobs if direction in job.directions]
            if parts:
                merged[direction] = merge_directions(parts)
        return merged


def _block(stats: dict[str, Any], ns_key: str, us_key: str) -> tuple[dict[str, Any] | None, float]:
    if isinstance(stats.get(ns_key), dict):
        return stats[ns_key], 1.0
    if isinstance(stats.get(us_key), dict):  # fio 2.x: microseconds
        return stats[us_key], 1000.0
    return None, 1.0


def parse_direction(stats: dict[str, Any]) -> DirectionStats:
    clat, clat_scale = _block(stats, "clat_ns", "clat")
    lat, lat_scale = _block(stats, "lat_ns", "lat")
    percentiles: dict[float, float] = {}
    bins = None
    if clat:
        for key, value in (clat.get("percentile") or {}).items():
            try:
                percentiles[float(key)] = float(value) * clat_scale
            except (TypeError, ValueError):
                continue
        if isinstance(clat.get("bins"), dict):
            bins = {int(k): int(v) for k, v in clat["bins"].items()}
    bw_bytes = stats.get("bw_bytes")
    if bw_bytes is None:
        bw_bytes = float(stats.get("bw", 0)) * 1024  # fio 2.x: KiB/s
    total_ios = int(stats.get("total_ios", 0) or 0)
    return DirectionStats(
        io_bytes=int(stats.get("io_bytes", 0) or 0),
        bw_bytes=float(bw_bytes),
        iops=float(stats.get("iops", 0)),
        runtime_ms=float(stats.get("runtime", 0) or 0),
        total_ios=total_ios,
        lat_mean_ns=float(lat["mean"]) * lat_scale if lat and "mean" in lat else None,
        clat_mean_ns=float(clat["mean"]) * clat_scale if clat and "mean" in clat else None,
        clat_percentiles_ns=percentiles,
        clat_bins=bins,
    )


def parse_fio_json(data: dict[str, Any] | str) -> FioResult:
    """fio's JSON (3.x layouts; 2.x microsecond blocks as a fallback) as typed per-job statistics."""
    if isinstance(data, str):
        data = load_json(data)
    options = data.get("global options") or {}
    grouped = str(options.get("group_reporting", "0")) not in ("0", "")
    jobs = []
    for job in data.get("jobs", []):
        grouped = grouped or str((job.get("job options") or {}).get("group_reporting", "0")) not in ("0", "")
        directions = {}
        for direction in DIRECTIONS:
            stats = job.get(direction)
            if isinstance(stats, dict) and (stats.get("io_bytes") or stats.get("total_ios")):
                directions[direction] = parse_direction(stats)
        jobs.append(
            JobStats(
                str(job.get("jobname", "")),
                int(job.get("groupid", 0)),
                directions,
                _float(job.get("job_runtime")),
                _float(job.get("usr_cpu")),
                _float(job.get("sys_cpu")),
            )
        )
    return FioResult(str(data.get("fio version", "unknown")), jobs, grouped)


def _float(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def merge_directions(parts: list[DirectionStats]) -> DirectionStats:
    """The aggregate of several jobs' statistics for one direction (what group_reporting would print)."""
    total_ios = sum(p.total_ios for p in parts)

    def weighted(values: list[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        if len(known) < len(values) or not total_ios:
            return None
        return sum(v * p.total_ios for v, p in zip(known, parts)) / total_ios

    bins: dict[int, int] | None = None
    part_bins = [p.clat_bins for p in parts if p.clat_bins is not None]
    if len(part_bins) == len(parts):
        bins = {}
        for one in part_bins:
            for value, count in one.items():
                bins[value] = bins.get(value, 0) + count
    percentiles = {}
    if bins:
        wanted = sorted({k for p in parts for k in p.clat_percentiles_ns} | set(PERCENTILES.values()))
        percentiles = percentiles_from_bins(bins, wanted)
    return DirectionStats(
        io_bytes=sum(p.io_bytes for p in parts),
        bw_bytes=sum(p.bw_bytes for p in parts),
        iops=sum(p.iops for p in parts),
        runtime_ms=max(p.runtime_ms for p in parts),
        total_ios=total_ios,
        lat_mean_ns=weighted([p.lat_mean_ns for p in parts]),
        clat_mean_ns=weighted([p.clat_mean_ns for p in parts]),
        clat_percentiles_ns=percentiles,
        clat_bins=bins,
    )


def percentiles_from_bins(bins: dict[int, int], percentiles: list[float]) -> dict[float, float]:
    """fio's own rule: the first bucket where the running count reaches p% of all I/Os."""
    total = sum(bins.values())
    out: dict[float, float] = {}
    if not total:
        return out
    ordered = sorted(bins.items())
    for percentile in percentiles:
        need, running = percentile / 100.0 * total, 0
        for value, count in ordered:
            running += count
            if running >= need:
                out[percentile] = float(value)
                break
    return out


# -- per-second logs -------------------------------------------------------------------------


def read_log_series(prefix: str, kind: str) -> dict[str, list[float]]:
    """Per-second series per direction from fio's ``<prefix>_<kind>.<job>.log`` files, summed over jobs.

    Each line is ``msec, value, direction, bs, offset``; bandwidth values are KiB/s
    (returned as MB/s), IOPS values are I/Os per second. A second counts only when
    every job logged it, so a last partial window of some jobs does not dip the series.
    """
    directory, stem = os.path.split(prefix)
    files = sorted(Path(directory or ".").glob(f"{stem}_{kind}.*.log"))
    per_second: dict[str, dict[int, list[float]]] = {}
    for path in files:
        for line in path.read_text().splitlines():
            fields = [f.strip() for f in line.split(",")]
            if len(fields) < 3:
                continue
            try:
                msec, value, ddir = int(fields[0]), float(fields[1]), int(fields[2])
            except ValueError:
                continue
            direction = DIRECTIONS[ddir] if 0 <= ddir < len(DIRECTIONS) else str(ddir)
            value = value * 1024 / 1e6 if kind == "bw" else value
            per_second.setdefault(direction, {}).setdefault(max(1, round(msec / 1000)), []).append(value)
    series = {}
    for direction, seconds in per_second.items():
        series[direction] = [
            round(sum(values), 6) for second, values in sorted(seconds.items()) if len(values) == len(files)
        ]
    return series


def stddev(values: list[float]) -> float | None:
    """Sample standard deviation of a per-second series; None below two points."""
    return statistics.stdev(values) if len(values) >= 2 else None


def is_finite(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


_ZONE_RESETS = re.compile(r";\s*(\d+) zone resets?\b")


def zone_resets(normal_output: str) -> int | None:
    """Zone resets fio made (``--output-format=...,normal`` prints "; N zone resets" on a job's line when N > 0);
    0 when the output holds fio's report without such a line, None when it holds no report at all."""
    counts = [int(n) for n in _ZONE_RESETS.findall(normal_output)]
    if counts:
        return sum(counts)  # one line per group (group_reporting) or per job
    return 0 if re.search(r"(?m)^\s*(write|read): IOPS=", normal_output) else None
