"""The objects family's parameters (size distributions, the operation mix, client counts), metrics and figure
names, beside the workloads that take and report them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from storbench.results.metrics import metric, metric_table
from storbench.engines.native_results import Vocabulary
from storbench.errors import InputError
from storbench.units import parse_size
from storbench.workloads.params import Param


MIX_OPS = ("put", "get", "head", "list", "delete")


def size_dist(text: str) -> dict[str, Any] | None:
    """``4k`` → fixed; ``4k-1m`` → uniform; None when not a size (1024-based, k, m or g: storbench.units)."""
    try:
        if "-" not in text:
            return {"dist": "fixed", "bytes": parse_size(text, prefixes="kmg")}
        low, _, high = text.partition("-")
        lo, hi = parse_size(low, prefixes="kmg"), parse_size(high, prefixes="kmg")
    except InputError:
        return None
    return {"dist": "uniform", "min": lo, "max": hi} if lo <= hi else None


def dist_max(dist: dict[str, Any]) -> int:
    return dist["bytes"] if dist["dist"] == "fixed" else dist["max"]


@dataclass(frozen=True)
class SizesParam(Param):
    """A comma list of object sizes (``4k``, ``16m``, ``1k-64k``), kept as text."""

    def coerce(self, value: Any, where: str) -> Any:
        text = ",".join(value) if isinstance(value, (list, tuple)) else str(value)
        items = [item.strip() for item in text.split(",") if item.strip()]
        if not items or any(size_dist(item) is None for item in items):
            raise InputError(
                f"{where}: {self.name}={value!r}: use sizes like 4k, 16m, 128m or a range 4k-1m, comma separated"
            )
        return ",".join(items)


@dataclass(frozen=True)
class IntListParam(Param):
    def coerce(self, value: Any, where: str) -> Any:
        text = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
        items = [item.strip() for item in text.split(",") if item.strip()]
        try:
            numbers = [int(item) for item in items]
        except ValueError:
            numbers = []
        if items and (not numbers or min(numbers) < 1):
            raise InputError(f"{where}: {self.name}={value!r}: use client counts like 1,2,4,8")
        return ",".join(map(str, numbers))


def parse_mix(text: str, where: str) -> list[tuple[str, float]]:
    mix = []
    for item in str(text).split(","):
        name, _, weight = item.strip().partition("=")
        try:
            value = float(weight) if weight else 1.0
        except ValueError:
            value = -1.0
        if name not in MIX_OPS or value < 0:
            raise InputError(
                f"{where}: mix item {item!r}: use op=weight with ops {', '.join(MIX_OPS)}, e.g. get=70,put=25,head=5"
            )
        mix.append((name, value))
    if not mix or sum(w for _, w in mix) <= 0:
        raise InputError(f"{where}: mix {text!r} has no positive weight")
    return mix


COMMON = (
    SizesParam(
        "size", str, "4k", "object size: 4k, 16m, 128m (1024-based), a range 4k-1m, or a comma list (one phase each)"
    ),
    Param("objects", int, 100, "objects in the key space (written untimed first for reads)", minimum=1),
    Param(
        "concurrency", int, 8, "workers (connections) per engine process; the open loop's in-flight bound", minimum=1
    ),
    Param("drivers", int, 1, "engine processes started together (COSBench's driver instances)", minimum=1),
    Param(
        "fanout",
        str,
        "local",
        "where driver processes run: local processes or Spark barrier tasks",
        choices=("local", "spark"),
    ),
    Param("duration_s", float, 10.0, "measured seconds per phase (0: until `ops` operations)", minimum=0),
    Param("ops", int, 0, "operations per phase and driver (0: time based)", minimum=0),
    Param("warmup_s", float, 0.0, "seconds of load before measuring starts", minimum=0),
    Param("rate", float, 0.0, "open loop: requests per second in total (0: closed loop)", minimum=0),
    Param("verify", bool, False, "check the content of every object read (a mismatch is an error)"),
    Param("bucket", str, "", "bucket (default: the target's)"),
    Param("prefix", str, "objects", "sub-prefix under the run-owned prefix"),
    IntListParam("sweep", str, "", "client counts to step through, e.g. 1,2,4,8 (empty: no sweep)"),
    Param("sweep_over", str, "concurrency", "what the sweep steps", choices=("concurrency", "drivers")),
    Param("range_bytes", int, 0, "ranged GETs of this many bytes at random offsets (0: whole objects)", minimum=0),
    Param("mix", str, "get=70,put=25,head=5", "objects-mixed: op=weight list (put, get, head, list, delete)"),
    Param(
        "multipart_threshold",
        int,
        0,
        "objects of at least this many bytes go by multipart upload (0: never)",
        minimum=0,
    ),
    Param("part_size", int, 8 * 1024**2, "multipart part size in bytes", minimum=5 * 1024**2),
    Param("list_max_keys", int, 1000, "keys per LIST page", minimum=1),
    Param("addressing", str, "path", "path-style or virtual-host requests", choices=("path", "virtual")),
    Param(
        "payload_signing", str, "unsigned", "UNSIGNED-PAYLOAD or SHA-256 of every body", choices=("unsigned", "signed")
    ),
    Param("timeout_s", float, 60.0, "per-request I/O timeout in seconds", minimum=0.1),
    Param(
        "max_error_pct",
        float,
        1.0,
        "the phase fails when more than this % of its operations failed "
        "(errors are counted by kind either way; 0: any error fails it)",
        minimum=0,
        maximum=100,
    ),
)

LATENCY_KEYS = ("p50", "p90", "p99", "p99_9", "max")  # of each request's latency, as the engine reports them
TTFB_KEYS = ("p50", "p99")  # of the time to first byte
# MB = 10^6 bytes; latency from each request's intended start (open loop) or its send (closed).
METRICS = (
    *metric_table("""
        obj_mbps      | Object throughput            | MB/s  | max | higher/lower
        obj_ops_per_s | Object operations per second | ops/s | max | higher/lower
    """),
    *(
        metric(f"obj_lat_{key}_ms", f"Object latency {key.replace('_', '.')}", "ms", "mean", "lower/higher")
        for key in LATENCY_KEYS
    ),
    *(
        metric(f"obj_ttfb_{key}_ms", f"Object time to first byte {key}", "ms", "mean", "lower/higher")
        for key in TTFB_KEYS
    ),
    *metric_table("""
        obj_cpu_us_per_op | Client CPU per operation                     | us      | mean | lower/higher
        obj_hwm_mbps      | Throughput high-water mark                   | MB/s    | max  | higher/lower
        obj_hwm_ops_per_s | Operations high-water mark                   | ops/s   | max  | higher/lower
        obj_hwm_clients   | Clients at the high-water mark               | clients | mean | fewer/more
        obj_ops           | Object operations                            | ops     | mean | more/fewer
        obj_errors        | Object operation errors                      | errors  | mean | fewer/more
        obj_not_issued    | Scheduled requests never started (open loop) | ops     | mean | fewer/more
    """),
)
NAMES = Vocabulary(
    rate="obj_ops_per_s",
    ops="obj_ops",
    errors="obj_errors",
    cpu="obj_cpu_us_per_op",
    mbps="obj_mbps",
    latency=tuple((f"obj_lat_{key}_ms", f"{key}_ms") for key in LATENCY_KEYS),
    ttfb=tuple((f"obj_ttfb_{key}_ms", f"{key}_ms") for key in TTFB_KEYS),
    not_issued="obj_not_issued",
)
