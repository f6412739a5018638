"""Paper 003's thread sweep: the thread count where a workload's throughput peaks before its average
latency climbs. Over the points of ``--sweep threads=8,16,32,...`` (each point's [OVERALL] Throughput and
average latency, averaged over its repetitions), in increasing thread order: the peak moves to the next
point while that point's throughput is at least MIN_GAIN above the peak's so far; it stops at the first
point that gains less. In a closed loop average latency = threads / throughput (Little's law), so past
the peak more threads mostly lengthen average latency. The run states the rule, the pick and the curve
in its notes and in artifacts.json (ycsb.peaks)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from storbench.context import RunContext

MIN_GAIN = 0.10  # a step of the sweep must add 10% throughput to count as still climbing


@dataclass
class SweepState:
    """The run's sweep so far: workload → threads → [(ops/s, average latency µs) per repetition]."""

    curves: dict[str, dict[int, list[tuple[float, float]]]] = field(default_factory=dict)


def peak(curve: dict[int, list[tuple[float, float]]]) -> dict[str, Any] | None:
    """``curve``: threads → [(ops/s, average latency µs) per repetition]; None below two points."""
    points = {
        threads: (sum(o for o, _ in runs) / len(runs), sum(a for _, a in runs) / len(runs))
        for threads, runs in curve.items()
        if runs
    }
    if len(points) < 2:
        return None
    order = sorted(points)
    best, following = order[0], None
    for threads in order[1:]:
        if points[threads][0] < (1 + MIN_GAIN) * points[best][0]:
            following = threads
            break
        best = threads
    return {
        "threads": best,
        "ops_per_s": points[best][0],
        "avg_latency_us": points[best][1],
        "next_threads": following,
        "min_gain": MIN_GAIN,
        "points": {str(t): {"ops_per_s": o, "avg_latency_us": a} for t, (o, a) in sorted(points.items())},
    }


def note(workload: str, found: dict[str, Any]) -> str:
    curve = ", ".join(
        f"{t} threads {p['ops_per_s']:.0f} ops/s {p['avg_latency_us']:.0f} us" for t, p in found["points"].items()
    )
    if found["next_threads"] is None:
        why = "throughput still rose by the sweep's last point: sweep further"
    else:
        nxt = found["points"][str(found["next_threads"])]
        why = (
            f"{found['next_threads']} threads added less than {found['min_gain']:.0%} throughput "
            f"({nxt['ops_per_s']:.0f} ops/s) while average latency went to {nxt['avg_latency_us']:.0f} us"
        )
    return (
        f"{workload}: peak at {found['threads']} threads ({found['ops_per_s']:.0f} ops/s, average latency "
        f"{found['avg_latency_us']:.0f} us): the last sweep step adding at least {found['min_gain']:.0%} "
        f"throughput; {why}; sweep: {curve}"
    )


def record(ctx: RunContext, workload: str, threads: int, ops_per_s: float, avg_latency_us: float) -> None:
    """Adds one measured point; keeps one note per workload (replaced as points arrive) and the artifact."""
    curves = ctx.state(SweepState).curves.setdefault(workload, {})
    curves.setdefault(threads, []).append((ops_per_s, avg_latency_us))
    found = peak(curves)
    if found is None:
        return
    prefix = f"{workload}: peak at "
    ctx.notes[:] = [n for n in ctx.notes if not n.startswith(prefix)] + [note(workload, found)]
    ctx.artifacts.setdefault("ycsb", {}).setdefault("peaks", {})[workload] = found
