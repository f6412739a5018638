"""Simulated native engine results for the scale benchmarks and their tests: no engine ran them.

``synthetic_results(n, seconds)`` gives ``n`` results in the engine's format (``storbench-load/1``,
storbench.engines.native) as a fan-out of ``n`` processes would return them: two operation types, each with
latency, ttfb and service HDR histograms (V2 encoding, µs, 1 µs .. 1 h, 3 significant digits, as
``native/storbench-load/src/core/stats.rs`` writes them), a per-second series of ``seconds`` seconds, processes
starting up to 2 s apart. Each process's histograms differ (shape, position, scale), so a merge that dropped or
double-counted one would show.

``direct_result(results)`` is the peer of a merge: ONE result whose histograms hold every process's counts
added bucket by bucket and whose series is every process's seconds added on the wall clock, built here without
the engine. Merging it alone through the engine gives the percentiles a merge of the ``n`` must equal.
"""

from __future__ import annotations

import base64
import random
import struct
from typing import Any

OPS = ("read", "write")
KINDS = ("latency", "ttfb", "service")
_COOKIE = 0x1C849303 | 0x10  # hdrhistogram's V2 (uncompressed) cookie
_LOW, _HIGH, _DIGITS = 1, 3_600_000_000, 3
T0_MS = 1_767_225_600_000  # 2026-01-01: a fixed clock, so two calls give the same results


def index_for(value_us: int) -> int:
    """The counts index of a value (1 µs lowest, 3 digits: 2048 sub-buckets, unit magnitude 0)."""
    bucket = (value_us | 2047).bit_length() - 11
    return ((bucket + 1) << 10) + (value_us >> bucket) - 1024


def _varint(value: int, out: bytearray) -> None:
    """LEB128-64b9B: eight 7-bit groups, then the last byte as is."""
    for _ in range(8):
        if value < 0x80:
            out.append(value)
            return
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value & 0xFF)


def encode(counts: dict[int, int]) -> str:
    """A histogram's counts (index -> count) as the engine's base64 V2 text."""
    payload = bytearray()
    index = 0
    for at in sorted(i for i, c in counts.items() if c):
        if at - index > 1:
            _varint(2 * (at - index) - 1, payload)  # zig-zag of -(zeros): a run of empty buckets
        elif at - index == 1:
            _varint(0, payload)
        _varint(2 * counts[at], payload)  # zig-zag of a positive count
        index = at + 1
    header = struct.pack(">IIIIQQd", _COOKIE, len(payload), 0, _DIGITS, _LOW, _HIGH, 1.0)
    return base64.b64encode(header + bytes(payload)).decode()


def _hist(counts: dict[int, int]) -> dict[str, Any]:
    # the merge reads only the encoded histogram and the count; the figures are the engine's to compute
    return {"count": sum(counts.values()), "unit": "us", "hdr": encode(counts)}


def _shape(rng: random.Random, median_us: int, spread: float, total: int) -> dict[int, int]:
    """A skewed latency histogram: ~``total`` operations around ``median_us`` with a long right tail."""
    counts: dict[int, int] = {}
    for _ in range(300):
        value = max(1, int(rng.lognormvariate(0, spread) * median_us))
        counts[index_for(value)] = counts.get(index_for(value), 0) + max(1, total // 300)
    return counts


def synthetic_results(n: int, seconds: int, seed: int = 28) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for p in range(n):
        start = T0_MS + (p % 4) * 650  # processes start up to ~2 s apart: the merge aligns them on the clock
        ops: dict[str, Any] = {}
        for k, op in enumerate(OPS):
            hists = {
                kind: _shape(
                    rng, rng.randint(200, 4000) * (1 + k) // (1 + j), 0.4 + 0.3 * j, rng.randint(20_000, 60_000)
                )
                for j, kind in enumerate(KINDS)
            }
            done = sum(hists["latency"].values())
            ops[op] = {
                "ops": done,
                "bytes": done * 4096,
                "errors": p % 3,
                **{kind: _hist(h) for kind, h in hists.items()},
            }
        series = []
        for t in range(seconds):
            n_ops = rng.randint(50, 500)
            mean_us = rng.randint(500, 5000)
            series.append(
                {
                    "t": t,
                    "warmup": t < 2,
                    "ops": n_ops,
                    "bytes": n_ops * 4096,
                    "errors": int(t % 7 == 0),
                    "mean_ms": mean_us / 1000,
                    "max_ms": rng.randint(mean_us, 4 * mean_us) / 1000,
                }
            )
        out.append(
            {
                "format": "storbench-load/1",
                "status": "ok",
                "fatal": None,
                "engine": {"name": "storbench-load", "version": "simulated", "protocol": "s3", "tls": False},
                "job": {"protocol": "s3", "process_index": p, "simulated": True},
                "processes": 1,
                "workers": 4,
                "load": {
                    "model": "closed",
                    "rate": None,
                    "workers": 4,
                    "scheduled": 0,
                    "not_issued": 0,
                    "late_starts": 0,
                    "max_start_lag_ms": 0.2,
                },
                "start_unix_ms": start,
                "measure_start_unix_ms": start + 2000,
                "measured_s": float(seconds - 2),
                "warmup_s": 2,
                "ops": ops,
                "total": {},
                "errors": {"timeout": {"count": p % 3, "example": "simulated"}} if p % 3 else {},
                "series": series,
                "cpu": {
                    "user_s": 1.0,
                    "sys_s": 0.5,
                    "cpu_s": 1.5,
                    "cpu_us_per_op": 10.0,
                    "process_cpu_s": 1.6,
                    "max_rss_kb": 20_000,
                },
                "per_process": [{"process_index": p, "start_unix_ms": start}],
            }
        )
    return out


def _counts(text: str) -> dict[int, int]:
    """The counts of a V2 histogram text written by :func:`encode` (no other writer's)."""
    raw = base64.b64decode(text)
    payload = raw[40:]
    counts: dict[int, int] = {}
    index, value, shift, pos = 0, 0, 0, 0
    while pos < len(payload):
        byte = payload[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte & 0x80 and shift < 56:
            continue
        if byte & 0x80:  # the ninth byte is taken whole
            value |= payload[pos] << 56
            pos += 1
        number = (value >> 1) ^ -(value & 1)
        value, shift = 0, 0
        if number < 0:
            index -= number
        else:
            if number:
                counts[index] = number
            index += 1
    return counts


def direct_result(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The peer of a merge: one result holding every process's counts and seconds, added here directly."""
    first = min(r["start_unix_ms"] for r in results)
    ops: dict[str, Any] = {}
    for op in OPS:
        merged: dict[str, dict[int, int]] = {kind: {} for kind in KINDS}
        for r in results:
            for kind in KINDS:
                for index, count in _counts(r["ops"][op][kind]["hdr"]).items():
                    merged[kind][index] = merged[kind].get(index, 0) + count
        ops[op] = {key: sum(r["ops"][op][key] for r in results) for key in ("ops", "bytes", "errors")}
        ops[op].update({kind: _hist(h) for kind, h in merged.items()})
    seconds: dict[int, dict[str, Any]] = {}
    for r in results:
        shift = round((r["start_unix_ms"] - first) / 1000)
        for s in r["series"]:
            into = seconds.setdefault(
                s["t"] + shift, {"ops": 0, "bytes": 0, "errors": 0, "sum_us": 0, "max_ms": 0.0, "warmup": False}
            )
            into["ops"] += s["ops"]
            into["bytes"] += s["bytes"]
            into["errors"] += int(s["errors"])
            into["sum_us"] += round(s["mean_ms"] * 1000 * s["ops"])
            into["max_ms"] = max(into["max_ms"], s["max_ms"])
            into["warmup"] = into["warmup"] or s["warmup"]
    series = [
        {
            "t": t,
            "warmup": v["warmup"],
            "ops": v["ops"],
            "bytes": v["bytes"],
            "errors": v["errors"],
            "mean_ms": v["sum_us"] / v["ops"] / 1000 if v["ops"] else None,
            "max_ms": v["max_ms"],
        }
        for t, v in sorted(seconds.items())
    ]
    one = dict(results[0])
    one.update(ops=ops, series=series, start_unix_ms=first, per_process=[{"process_index": 0}])
    return one


def percentiles(result: dict[str, Any]) -> dict[str, Any]:
    """What a merge must get right: each operation's (and the total's) histogram figures, and the series."""
    keys = ("count", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "p99_9_ms", "max_ms", "min_ms", "mean_ms")
    out: dict[str, Any] = {}
    for name, stats in [*result["ops"].items(), ("total", result["total"])]:
        for kind in KINDS:
            out[f"{name}.{kind}"] = {k: stats[kind].get(k) for k in keys}
        out[f"{name}.ops"] = stats["ops"]
    out["series"] = [
        (
            s["t"],
            s["ops"],
            s["bytes"],
            s["errors"],
            s["max_ms"],
            round(s["mean_ms"], 6) if s["mean_ms"] is not None else None,
        )
        for s in result["series"]
    ]
    return out


def mismatches(merged: dict[str, Any], direct: dict[str, Any]) -> list[str]:
    """Where a merge's figures differ from the direct merge's ([] when they are equal)."""
    a, b = percentiles(merged), percentiles(direct)
    return [f"{key}: {a.get(key)!r} != {b.get(key)!r}" for key in sorted(set(a) | set(b)) if a.get(key) != b.get(key)]
