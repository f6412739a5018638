"""What both rados-bench drivers measured, as samples: rados bench's summary or fio's JSON, the same metrics.

rados bench's own summary figures (its MB/sec is MiB/s, converted to MB/s = 10^6 B/s here) and the fio
driver's (``driver=fio``: fio's rados engine) map onto one vocabulary, :data:`METRICS`; the per-second IOPS
add storbench's consistency figures (``ps_iops_*``). A failed phase's message gets a hint from the errno
rados or fio printed (:func:`hint`).
"""

from __future__ import annotations

import statistics
from typing import Any

from storbench.results.consistency import consistency_samples
from storbench.results.metrics import metric_table
from storbench.engines import rados_output
from storbench.results.model import Sample

METRICS = metric_table("""
    rados_bw_mbps     | Bandwidth            | MB/s | mean | higher/lower
    rados_avg_iops    | Average IOPS         | IOPS | mean | higher/lower
    rados_stddev_iops | Stddev IOPS          | IOPS | mean | more consistent/less consistent
    rados_max_iops    | Max IOPS             | IOPS | mean | higher/lower
    rados_min_iops    | Min IOPS             | IOPS | mean | higher/lower
    rados_avg_lat_ms  | Average latency      | ms   | mean | lower/higher
    rados_max_lat_ms  | Max latency          | ms   | mean | lower/higher
    rados_ops         | Operations completed | ops  | mean | more/fewer
""")
UNITS = {"rados_bw_mbps": "MB/s", "rados_avg_lat_ms": "ms", "rados_max_lat_ms": "ms", "rados_ops": "ops"}  # else IOPS

_HINTS = {
    "(110)": "no answer from an OSD or monitor within op_timeout_s; is an OSD down?",
    "(27)": "the object size is above the OSDs' osd_max_object_size",
    "(90)": "the op size is above the OSDs' osd_max_write_size",
    "(28)": "the pool is full",
    "(122)": "the pool's quota is reached",
    "(2)": "the pool or the objects to read do not exist",
}


def hint(message: str) -> str:
    """`` — what the errno in ``message`` likely means here``, or nothing."""
    return next((f" — {hint}" for code, hint in _HINTS.items() if code in message), "")


def bench_figures(summary: dict[str, float]) -> dict[str, float | None]:
    """The metrics from rados bench's summary (storbench.engines.rados_output.parse_bench)."""
    return {
        "rados_bw_mbps": _scaled(summary.get("bw_mibps"), rados_output.MIB_TO_MB),
        "rados_avg_iops": summary.get("avg_iops"),
        "rados_stddev_iops": summary.get("stddev_iops"),
        "rados_max_iops": summary.get("max_iops"),
        "rados_min_iops": summary.get("min_iops"),
        "rados_avg_lat_ms": _scaled(summary.get("avg_lat_s"), 1000.0),
        "rados_max_lat_ms": _scaled(summary.get("max_lat_s"), 1000.0),
        "rados_ops": summary.get("ops"),
    }


def fio_figures(data: dict[str, Any], iops: list[float]) -> dict[str, float | None]:
    """The same metrics from fio's figures for one direction (``data``) and its per-second IOPS."""
    return {
        "rados_bw_mbps": data["bw_bytes"] / 1e6,
        "rados_avg_iops": data["iops"],
        "rados_stddev_iops": statistics.stdev(iops) if len(iops) >= 2 else None,
        "rados_max_iops": max(iops) if iops else None,
        "rados_min_iops": min(iops) if iops else None,
        "rados_avg_lat_ms": _scaled(data.get("lat_ns", {}).get("mean"), 1e-6),
        "rados_max_lat_ms": _scaled(data.get("lat_ns", {}).get("max"), 1e-6),
        "rados_ops": float(data["total_ios"]),
    }


def figure_samples(
    workload: str, figures: dict[str, float | None], labels: dict[str, str], iops: list[float | None]
) -> list[Sample]:
    """The figures and the consistency of the per-second IOPS (None: an n/a second, skipped, not a stall)."""
    samples = [
        Sample(workload, metric, value, UNITS.get(metric, "IOPS"), labels=dict(labels))
        for metric, value in figures.items()
    ]
    # IOPS only: with a fixed op size the MB/s series is the IOPS series times a constant (same CV,
    # stalls and relative changes); both series are kept in the artifacts.
    return samples + consistency_samples(workload, "iops", iops, labels)


def _scaled(value: float | None, factor: float) -> float | None:
    return None if value is None else value * factor
