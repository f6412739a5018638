"""What rados bench prints, read: its per-second lines, its summary (MB/s as MiB/s, IOPS, latencies) and the first
error line of a failed run."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any


MIB_TO_MB = 1.048576  # rados bench's MB/sec is MiB/s

_SECOND = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$")
_SUMMARY = re.compile(r"^([A-Za-z][A-Za-z ()/]*?):\s+([-+0-9.eE]+)\s*$")
_ERROR = re.compile(r"^(error|failed|couldn't|unable)\b.*", re.IGNORECASE)

# Summary keys → storbench's names (values as printed; MB/sec still MiB/s, latencies in seconds).
SUMMARY_KEYS = {
    "Total time run": "time_s",
    "Total writes made": "ops",
    "Total reads made": "ops",
    "Write size": "op_size",
    "Read size": "op_size",
    "Object size": "object_size",
    "Bandwidth (MB/sec)": "bw_mibps",
    "Stddev Bandwidth": "bw_stddev_mibps",
    "Max bandwidth (MB/sec)": "bw_max_mibps",
    "Min bandwidth (MB/sec)": "bw_min_mibps",
    "Average IOPS": "avg_iops",
    "Stddev IOPS": "stddev_iops",
    "Max IOPS": "max_iops",
    "Min IOPS": "min_iops",
    "Average Latency(s)": "avg_lat_s",
    "Stddev Latency(s)": "stddev_lat_s",
    "Max latency(s)": "max_lat_s",
    "Min latency(s)": "min_lat_s",
}


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None  # "-": no operation finished in that second


@dataclass
class BenchSecond:
    sec: int
    cur_ops: int
    started: int
    finished: int
    avg_mibps: float | None
    cur_mibps: float | None
    last_lat_s: float | None
    avg_lat_s: float | None


@dataclass
class BenchOutput:
    """One ``rados bench`` run as printed: its settings, per-second lines, summary and errors."""

    prefix: str | None = None  # "Object prefix: benchmark_data_<host>_<pid>" (write only)
    concurrency: int | None = None
    op_size: int | None = None
    object_size: int | None = None
    seconds: list[BenchSecond] = field(default_factory=list)
    summary: dict[str, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return "time_s" in self.summary

    def iops_series(self) -> list[float | None]:
        """Operations finished in each second after the start line (``sec`` 0 is the start); None before
        the first operation completed (n/a, not a stall)."""
        out: list[float | None] = []
        previous = 0
        for line in self.seconds:
            if line.sec > 0:
                out.append(float(line.finished - previous) if line.finished else None)
            previous = line.finished
        return out

    def mbps_series(self) -> list[float | None]:
        """Per-second throughput in MB/s (10^6 B/s), from the ``cur MB/s`` column; None where it is n/a."""
        return [
            None if line.cur_mibps is None else round(line.cur_mibps * MIB_TO_MB, 6)
            for line in self.seconds
            if line.sec > 0
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "prefix": self.prefix,
            "concurrency": self.concurrency,
            "op_size": self.op_size,
            "object_size": self.object_size,
            "summary": dict(self.summary),
            "errors": list(self.errors),
            "per_second": {"iops": self.iops_series(), "mbps": self.mbps_series()},
        }


def _second(match: re.Match[str]) -> BenchSecond:
    """One per-second line; before the first completion its current MB/s and average latency are n/a
    (rados prints 0 for them), and a negative MB/s (rados's -1: no interval yet) is n/a too."""
    sec, cur_ops, started, finished = (int(match.group(i)) for i in range(1, 5))
    avg_mibps, cur_mibps, last_lat, avg_lat = (_number(match.group(i)) for i in range(5, 9))
    if not finished or (cur_mibps is not None and cur_mibps < 0):
        cur_mibps = None
    return BenchSecond(sec, cur_ops, started, finished, avg_mibps, cur_mibps, last_lat, avg_lat if finished else None)


def parse_bench(stdout: str, stderr: str = "") -> BenchOutput:
    """``rados bench`` output (write, seq or rand) as typed values; tolerant of a cut-off run."""
    out = BenchOutput()
    seen: set[int] = set()
    in_summary = False
    for raw in stdout.splitlines():
        line = raw.rstrip()
        if line.startswith("Object prefix:"):
            out.prefix = line.split(":", 1)[1].strip()
            continue
        maintaining = re.match(r"Maintaining (\d+) concurrent \w+ of (\d+) bytes to objects of size (\d+)", line)
        if maintaining:
            out.concurrency, out.op_size, out.object_size = map(int, maintaining.groups())
            continue
        second = _SECOND.match(line)
        if second and not in_summary:
            sec = int(second.group(1))
            if sec not in seen:  # a repeated line would count a second twice
                seen.add(sec)
                out.seconds.append(_second(second))
            continue
        summary = _SUMMARY.match(line)
        if summary and summary.group(1) in SUMMARY_KEYS:
            in_summary = True
            value = _number(summary.group(2))
            if value is not None:
                out.summary.setdefault(SUMMARY_KEYS[summary.group(1)], value)
            continue
        if _ERROR.match(line.strip()):
            out.errors.append(line.strip())
    for line in stderr.splitlines():
        line = line.strip()
        if _ERROR.match(line) and line not in out.errors:
            out.errors.append(line)
    out.seconds.sort(key=lambda s: s.sec)
    return out


def first_error(*texts: str) -> str:
    """The most telling error line of a rados/ceph command (``error during benchmark: (110) ...``)."""
    lines = [line.strip() for text in texts for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if _ERROR.match(line)]
    # rados prints "error during benchmark: (N) ..." then "error N: (N) ..."; the first says where.
    return (errors or lines or ["no message"])[0][:300]
