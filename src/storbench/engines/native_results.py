"""The native engine's result (``storbench-load`` JSON, storbench.engines.native) as samples, for every family.

A family (objects, YCSB) names the result's figures in its own vocabulary (:class:`Vocabulary`); the
translation itself, and the judgement of failed operations, are written once here. The result's figures:
``total`` and each operation type in ``ops`` have ``ops``, ``errors``, ``ops_per_s``, ``mb_per_s`` (MB = 10^6
bytes) and the ``latency`` and ``ttfb`` histograms (``count``, ``mean_ms``, ``p50_ms`` .. ``max_ms``);
``errors`` counts failed operations by kind (``{"count": N, "example": "..."}``); ``cpu.cpu_us_per_op`` is
the engine's own user+sys CPU per operation; ``load.not_issued`` the open loop's scheduled requests never
started; ``series`` each second's ops, bytes, errors, ``mean_ms`` and ``max_ms``. YCSB's own client
(workloads/ycsb/core_driver.py) writes the same shape. What has no value is null (None here), never 0: CPU per
operation and the start lag with no operation done, a rate over no measured time, the latency of a second in
which no operation completed; the samples keep None (reports show n/a).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from storbench.errors import WorkloadError
from storbench.results.model import Sample


@dataclass(frozen=True)
class Vocabulary:
    """A family's metric names for the result's figures (None: the family reports that figure not)."""

    rate: str  # operations per second (ops/s)
    ops: str  # operations done (ops)
    errors: str  # operations failed (errors): in all, and by kind (label ``error``)
    cpu: str | None  # the engine's CPU per operation (us); None: the family scopes its client CPU itself
    latency: tuple[tuple[str, str], ...]  # (metric, the latency histogram's key: "p50_ms", "mean_ms", ...)
    latency_unit: str = "ms"  # the unit of the latency metrics: "ms" as the engine reports them, or "us"
    ttfb: tuple[tuple[str, str], ...] = ()  # (metric, the time-to-first-byte histogram's key), in ms
    mbps: str | None = None  # MB/s
    not_issued: str | None = None  # the open loop's requests never started (ops)
    op_rate: bool = True  # per operation type too: the rate (and MB/s)
    op_errors: bool = False  # per operation type too: the errors


def result_samples(
    workload: str, result: dict[str, Any], names: Vocabulary, labels: dict[str, str] | None = None, per_op: bool = True
) -> list[Sample]:
    """The samples of one engine result: the totals, then (``per_op``) each operation type's, labelled ``op``."""
    labels = labels or {}
    total = result["total"]
    samples = _figures(workload, total, names, labels, rate=True)
    if names.cpu:
        samples.append(
            Sample(workload, names.cpu, result["cpu"]["cpu_us_per_op"] if total["ops"] else None, "us", labels=labels)
        )
    samples.append(Sample(workload, names.errors, float(total["errors"]), "errors", labels=labels))
    for kind, error in sorted(result["errors"].items()):  # by kind (connect, timeout, http_503_SlowDown...)
        samples.append(
            Sample(workload, names.errors, float(error["count"]), "errors", labels={**labels, "error": kind})
        )
    if names.not_issued and result["load"]["model"] == "open":
        samples.append(Sample(workload, names.not_issued, float(result["load"]["not_issued"]), "ops", labels=labels))
    if per_op:
        for name, stats in sorted(result["ops"].items()):
            op_labels = {**labels, "op": name}
            samples += _figures(workload, stats, names, op_labels, rate=names.op_rate)
            if names.op_errors:
                samples.append(Sample(workload, names.errors, float(stats["errors"]), "errors", labels=op_labels))
    return samples


def _figures(
    workload: str, stats: dict[str, Any], names: Vocabulary, labels: dict[str, str], rate: bool
) -> list[Sample]:
    """One operation type's (or the total's) throughput, count and latencies."""
    out = []
    if rate:
        if names.mbps:
            out.append(Sample(workload, names.mbps, stats["mb_per_s"], "MB/s", labels=labels))
        out.append(Sample(workload, names.rate, stats["ops_per_s"], "ops/s", labels=labels))
    out.append(Sample(workload, names.ops, float(stats["ops"]), "ops", labels=labels))
    scale = 1000 if names.latency_unit == "us" else 1
    for metric, key in names.latency:
        value = _hist(stats["latency"], key)
        out.append(
            Sample(workload, metric, value * scale if value is not None else None, names.latency_unit, labels=labels)
        )
    for metric, key in names.ttfb:
        out.append(Sample(workload, metric, _hist(stats["ttfb"], key), "ms", labels=labels))
    return out


def _hist(hist: dict[str, Any], key: str) -> float | None:
    """A histogram's figure; None when it saw nothing (an empty histogram's figures are zeros, not latencies)."""
    return hist.get(key) if hist.get("count") else None


def progress(result: dict[str, Any]) -> list[list[float]]:
    """The result's progress points [Unix time s, operations done so far, failed ones too] from its per-second
    series: 0 at its start, then each second's end (the last one at its window's end)."""
    if result.get("start_unix_ms") is None:
        return []
    start = result["start_unix_ms"] / 1000
    end = (result.get("measure_start_unix_ms") or result["start_unix_ms"]) / 1000 + (result.get("measured_s") or 0)
    points, done = [[start, 0.0]], 0.0
    for second in result.get("series") or []:
        done += second["ops"] + second["errors"]
        bound = start + second["t"] + 1
        points.append([min(bound, end) if end > points[-1][0] else bound, done])
    return points


def failure(workload: str, results: list[dict[str, Any]]) -> tuple[WorkloadError | None, float]:
    """One line naming the failed operations by kind (``connect 812, timeout 3``) and the first example,
    and the share of operations that failed."""
    kinds: dict[str, int] = {}
    example = ""
    for result in results:
        for kind, error in result["errors"].items():
            kinds[kind] = kinds.get(kind, 0) + error["count"]
            example = example or error.get("example", "")
    if not kinds:
        return None, 0.0
    failed = sum(kinds.values())
    done = sum(result["total"]["ops"] for result in results)
    by_kind = ", ".join(f"{kind} {count}" for kind, count in sorted(kinds.items(), key=lambda kv: -kv[1]))
    return (
        WorkloadError(
            f"{workload}: {failed} of {failed + done} operations failed ({by_kind}); "
            f"first: {example.splitlines()[0] if example else 'no detail'}"
        ),
        failed / (failed + done),
    )


def judge_errors(
    workload: str, results: list[dict[str, Any]], samples: list[Sample], max_error_pct: float, notes: list[str]
) -> None:
    """Raises when more than ``max_error_pct`` % of the operations failed (the error keeps ``samples``: what
    was measured is kept); a few errors (503 SlowDown under load) are a result, counted by kind, and a note."""
    failed, share = failure(workload, results)
    if failed and share * 100 > max_error_pct:
        failed.samples = tuple(samples)
        raise failed
    if failed:
        notes.append(f"{failed} (at most {max_error_pct:g}% allowed: max_error_pct)")
