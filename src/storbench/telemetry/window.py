"""From raw snapshots to the paper's metrics over a timed window and the rate series.

Maximum CPU and utilization are maxima over sampling intervals. Maximum throughput (read,
write, network, a cluster's sum) is the peak of the throughput series averaged over
:data:`PEAK_SPAN_S` seconds (:func:`peak_rate`): one interval that caught a burst (a
throttled device's credit after idle, a page-cache flush) cannot set it alone. Totals and
averages (MB moved, latency, average CPU, energy) come straight from the window's first and
last snapshots, so they are exact whatever the interval. Anything the host cannot measure is None.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from itertools import pairwise
from math import inf
from typing import TYPE_CHECKING, Any, Sequence

from storbench.telemetry.metrics import WINDOW
from storbench.telemetry.procfs import SECTOR_BYTES

if TYPE_CHECKING:
    from storbench.telemetry.snapshot import Snapshot

MB = 1e6
METRICS = tuple(spec.name for spec in WINDOW)  # what window_metrics returns (specs: telemetry.metrics)
# Maximum throughput is the highest average over any this many seconds of the window. A QEMU throttle lets an
# idle device burst about 0.1 s of its rate: +6-10% in a 1 s interval (a lab device limited to 31.46 MB/s showed
# 33.43), +2-3.3% over 3 s; a sustained peak of 3 s or more is still found exactly.
PEAK_SPAN_S = 3.0
_DISK_FIELDS = ("reads", "read_sectors", "read_ms", "writes", "write_sectors", "write_ms", "io_ticks")


def merge_slivers(points: Sequence[Snapshot], interval: float) -> list[Snapshot]:
    """Drops interior snapshots that would bound an interval shorter than ``interval``/2.

    mark() snapshots land anywhere between ticks; a 5 ms interval next to one would
    turn a few stray sectors into a spiky maximum. The first and last snapshots
    always stay, so totals over the merged intervals are unchanged.
    """
    if len(points) <= 2:
        return list(points)
    half = interval / 2
    kept = [points[0]]
    for point in points[1:-1]:
        if point.time - kept[-1].time >= half:
            kept.append(point)
    if len(kept) > 1 and points[-1].time - kept[-1].time < half:
        kept.pop()
    kept.append(points[-1])
    return kept


def _disk_deltas(a: Snapshot, b: Snapshot) -> dict[str, dict[str, int]]:
    """Counter increase per device seen in both snapshots (a counter that went back counts as 0)."""
    deltas = {}
    for name, before in a.disks.items():
        after = b.disks.get(name)
        if after is not None:
            deltas[name] = {f: max(0, getattr(after, f) - getattr(before, f)) for f in _DISK_FIELDS}
    return deltas


def _total(deltas: dict[str, dict[str, int]], field: str) -> int:
    return sum(d[field] for d in deltas.values())


def _cpu_pct(a: Snapshot, b: Snapshot) -> tuple[float | None, float | None]:
    """(busy %, iowait %) of all CPUs between two snapshots; busy excludes idle and iowait."""
    if a.cpu is None or b.cpu is None or b.cpu.total <= a.cpu.total:
        return None, None
    total = b.cpu.total - a.cpu.total
    return (100 * (b.cpu.busy - a.cpu.busy) / total, 100 * (b.cpu.iowait - a.cpu.iowait) / total)


def _net_rates(a: Snapshot, b: Snapshot, seconds: float) -> dict[str, float | None]:
    """rx+tx MB/s per interface (``net.<if>.mbps``) and, over the non-loopback ones, each direction
    (``net_rx_mbps``, ``net_tx_mbps``: a link's limit holds each way) and both (``net_mbps``)."""
    if a.net is None or b.net is None:
        return {"net_mbps": None, "net_rx_mbps": None, "net_tx_mbps": None}
    names = [name for name in b.net if name in a.net]
    rx = {name: (b.net[name].rx_bytes - a.net[name].rx_bytes) / MB / seconds for name in names}
    tx = {name: (b.net[name].tx_bytes - a.net[name].tx_bytes) / MB / seconds for name in names}
    row: dict[str, float | None] = {f"net.{name}.mbps": rx[name] + tx[name] for name in names}
    row["net_rx_mbps"] = sum(rate for name, rate in rx.items() if name != "lo")
    row["net_tx_mbps"] = sum(rate for name, rate in tx.items() if name != "lo")
    row["net_mbps"] = row["net_rx_mbps"] + row["net_tx_mbps"]
    return row


def only_devices(points: Sequence[Snapshot], names: Sequence[str]) -> list[Snapshot]:
    """The snapshots restricted to some devices (the target's, or the shuffle directory's)."""
    from dataclasses import replace

    wanted = set(names)
    return [replace(p, disks={n: c for n, c in p.disks.items() if n in wanted}) for p in points]


def interface_max_mbps(points: Sequence[Snapshot], start: float, end: float, interval: float) -> dict[str, float]:
    """Maximum rx+tx MB/s of each interface during a window (paper 002 reports network beside DFSIO), as
    :func:`peak_rate` defines a maximum throughput."""
    series = window_series(points, start, end, interval)
    names = {key[4:-5] for _, _, row in series for key in row if key.startswith("net.") and key.endswith(".mbps")}
    return {name: value for name in sorted(names) if (value := peak_rate([series], f"net.{name}.mbps")) is not None}


def _window(points: Sequence[Snapshot], start: float, end: float) -> Sequence[Snapshot]:
    """The snapshots covering [start, end], widened to the ones just outside when between snapshots."""
    first_index = max(0, bisect_right(points, start, key=lambda p: p.time) - 1)
    last_index = min(len(points) - 1, bisect_left(points, end, key=lambda p: p.time))
    if last_index <= first_index or points[last_index].time <= points[first_index].time:
        return []
    return points[first_index : last_index + 1]


def interval_rates(a: Snapshot, b: Snapshot) -> dict[str, float | None]:
    """Per-device and aggregate rates between two snapshots (one row of the series, without ``t``)."""
    seconds = b.time - a.time
    deltas = _disk_deltas(a, b)
    row: dict[str, float | None] = {}
    for name, d in deltas.items():
        row[f"{name}.read_mbps"] = d["read_sectors"] * SECTOR_BYTES / MB / seconds
        row[f"{name}.write_mbps"] = d["write_sectors"] * SECTOR_BYTES / MB / seconds
        row[f"{name}.read_iops"] = d["reads"] / seconds
        row[f"{name}.write_iops"] = d["writes"] / seconds
        # io_ticks and the timestamps are read microseconds apart: clamp the overshoot.
        row[f"{name}.util_pct"] = min(100.0, d["io_ticks"] / 10 / seconds)
    measured = bool(deltas)
    row["read_mbps"] = _total(deltas, "read_sectors") * SECTOR_BYTES / MB / seconds if measured else None
    row["write_mbps"] = _total(deltas, "write_sectors") * SECTOR_BYTES / MB / seconds if measured else None
    row["util_pct"] = max(row[f"{name}.util_pct"] for name in deltas) if measured else None  # busiest device
    row["cpu_pct"], row["iowait_pct"] = _cpu_pct(a, b)
    row["mem_used_pct"] = (
        100 * (b.memory[0] - b.memory[1]) / b.memory[0] if b.memory is not None and b.memory[0] > 0 else None
    )
    row.update(_net_rates(a, b, seconds))
    row["power_w"] = (
        (b.energy_uj - a.energy_uj) / 1e6 / seconds if a.energy_uj is not None and b.energy_uj is not None else None
    )
    return row


def _intervals(points: Sequence[Snapshot], interval: float) -> list[tuple[Snapshot, Snapshot]]:
    return [(a, b) for a, b in pairwise(merge_slivers(points, interval)) if b.time > a.time]


def rate_row(a: Snapshot, b: Snapshot, origin: float) -> dict[str, Any]:
    """One row of the stored series: the interval from ``a`` to ``b``, at its end, ``t`` relative to ``origin``."""
    return {
        "t": round(b.time - origin, 4),
        **{k: None if v is None else round(v, 4) for k, v in interval_rates(a, b).items()},
    }


def rate_rows(points: Sequence[Snapshot], interval: float) -> list[dict[str, Any]]:
    """The stored series: one row per (merged) interval, at its end, ``t`` relative to points[0]."""
    if not points:
        return []
    return [rate_row(a, b, points[0].time) for a, b in _intervals(points, interval)]


def latest_rates(points: Sequence[Snapshot], interval: float) -> dict[str, float | None]:
    """The last sampling interval's rates over all devices and interfaces (the series' columns without a
    device's or interface's name; a mark's sliver merged as in the series); {} before two snapshots."""
    intervals = _intervals(points[-16:], interval)  # the tail is enough for the last interval
    if not intervals:
        return {}
    return {key: value for key, value in interval_rates(*intervals[-1]).items() if "." not in key}


def peak_rate(
    sources: Sequence[Sequence[tuple[float, float, dict[str, float | None]]]], key: str, span: float = PEAK_SPAN_S
) -> float | None:
    """The papers' maximum throughput: the peak of the ``key`` MB/s series, averaged over ``span`` seconds.

    ``sources`` are (start, end, rates) intervals: one node's (:func:`window_series`), or every node's for a
    cluster's throughput, their MB added up. Each interval's MB count as spread evenly over it (what its rate
    says), and the figure is the most MB in any ``span`` seconds of the window, sliding anywhere, over ``span``:
    bytes over seconds, so a short interval (a mark's) weighs by its length, not as a rate of its own. A window
    no longer than ``span`` gives its own average. An unmeasured interval (None) moves nothing; None if none is
    measured. With intervals of ``span`` or longer this is the maximum over intervals.
    """
    events: list[tuple[float, float]] = []  # (time, change of the summed MB/s)
    measured, lo, hi = False, inf, -inf
    for intervals in sources:
        for start, end, rates in intervals:
            rate = rates.get(key)
            measured = measured or rate is not None
            events += [(start, rate or 0.0), (end, -(rate or 0.0))]
            lo, hi = min(lo, start), max(hi, end)
    if not measured or hi <= lo:
        return None
    times: list[float] = []
    moved: list[float] = []  # MB moved from lo to times[i]
    rate = amount = 0.0
    for time, change in sorted(events):
        if not times or time > times[-1]:
            amount += rate * (time - times[-1]) if times else 0.0
            times.append(time)
            moved.append(amount)
        rate += change
    if hi - lo <= span:
        return moved[-1] / (hi - lo)

    def at(t: float) -> float:  # MB moved from lo to t, linear within an interval
        j = min(max(bisect_right(times, t) - 1, 0), len(times) - 2)
        return moved[j] + (moved[j + 1] - moved[j]) * (t - times[j]) / (times[j + 1] - times[j])

    # The MB in [t, t + span] is linear in t between the times where t or t + span meets an interval's edge.
    last = hi - span
    starts = [lo, last, *(t for t in times if t <= last), *(t - span for t in times if lo <= t - span <= last)]
    return max(at(t + span) - at(t) for t in starts) / span


def _max(rows: list[dict[str, float | None]], key: str) -> float | None:
    values = [row[key] for row in rows if row.get(key) is not None]
    return max(values) if values else None


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def window_metrics(points: Sequence[Snapshot], start: float, end: float, interval: float) -> dict[str, float | None]:
    """The paper's metrics between two snapshot times (mark() results).

    If ``start``/``end`` fall between snapshots, the window widens to the snapshots
    just outside them, so it never misses I/O that happened inside. Maximum read, write
    and network throughput are the highest average MB/s over any :data:`PEAK_SPAN_S`
    seconds of the window (the window's average if shorter; :func:`peak_rate`), not one
    sampling interval's; maximum CPU and utilization are the highest interval's.
    """
    window = _window(points, start, end)
    if not window:
        return dict.fromkeys(METRICS)
    first, last = window[0], window[-1]
    series = [(a.time, b.time, interval_rates(a, b)) for a, b in _intervals(window, interval)]
    rows = [row for _, _, row in series]
    deltas = _disk_deltas(first, last)
    measured = bool(deltas)
    sectors_mb = SECTOR_BYTES / MB
    return {
        "max_read_mbps": peak_rate([series], "read_mbps"),
        "max_write_mbps": peak_rate([series], "write_mbps"),
        "avg_read_latency_ms": _ratio(_total(deltas, "read_ms"), _total(deltas, "reads")),
        "avg_write_latency_ms": _ratio(_total(deltas, "write_ms"), _total(deltas, "writes")),
        "max_cpu_pct": _max(rows, "cpu_pct"),
        "avg_cpu_pct": _cpu_pct(first, last)[0],
        "read_mb": _total(deltas, "read_sectors") * sectors_mb if measured else None,
        "written_mb": _total(deltas, "write_sectors") * sectors_mb if measured else None,
        "max_util_pct": _max(rows, "util_pct"),
        "max_net_mbps": peak_rate([series], "net_mbps"),
        "max_net_rx_mbps": peak_rate([series], "net_rx_mbps"),
        "max_net_tx_mbps": peak_rate([series], "net_tx_mbps"),
        "energy_j": (
            (last.energy_uj - first.energy_uj) / 1e6
            if first.energy_uj is not None and last.energy_uj is not None
            else None
        ),
    }


def window_totals(points: Sequence[Snapshot], start: float, end: float) -> dict[str, int]:
    """The devices' raw counter increases over a window (what I/O-weighted averages across nodes need)."""
    window = _window(points, start, end)
    deltas = _disk_deltas(window[0], window[-1]) if window else {}
    return {field: _total(deltas, field) for field in _DISK_FIELDS}


def window_series(
    points: Sequence[Snapshot], start: float, end: float, interval: float
) -> list[tuple[float, float, dict[str, float | None]]]:
    """(start time, end time, rates) of each (merged) sampling interval of a window."""
    return [(a.time, b.time, interval_rates(a, b)) for a, b in _intervals(_window(points, start, end), interval)]


def window_intervals(
    points: Sequence[Snapshot], start: float, end: float, interval: float
) -> list[tuple[float, dict[str, float | None]]]:
    """(middle time, rates) of each sampling interval of a window."""
    return [((a + b) / 2, rates) for a, b, rates in window_series(points, start, end, interval)]
