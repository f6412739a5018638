"""Paper 003's thread sweep: the thread count where a workload's throughput peaks before its average
latency climbs. Over the points of ``--sweep threads=8,16,32,...`` (each point's ops/s and average
latency, averaged over its repetitions), the peak is the highest [OVERALL] Throughput among the points
whose average latency is at most LATENCY_CLIMB times the lowest average latency of the sweep; ties go to
fewer threads. The run states the rule and the pick in its notes and in artifacts.json (ycsb.peaks)."""

from __future__ import annotations

from typing import Any

LATENCY_CLIMB = 1.5  # "before average latency climbs": within 50% of the sweep's lowest average latency


def peak(curve: dict[int, list[tuple[float, float]]]) -> dict[str, Any] | None:
    """``curve``: threads → [(ops/s, average latency µs) per repetition]; None below two points."""
    points = {threads: (sum(o for o, _ in runs) / len(runs), sum(a for _, a in runs) / len(runs))
              for threads, runs in curve.items() if runs}
    if len(points) < 2:
        return None
    lowest = min(avg for _, avg in points.values())
    within = [t for t, (_, avg) in points.items() if avg <= LATENCY_CLIMB * lowest]
    best = max(within, key=lambda t: (points[t][0], -t))
    return {"threads": best, "ops_per_s": points[best][0], "avg_latency_us": points[best][1],
            "lowest_avg_latency_us": lowest, "latency_climb": LATENCY_CLIMB,
            "points": {str(t): {"ops_per_s": o, "avg_latency_us": a} for t, (o, a) in sorted(points.items())}}


def note(workload: str, found: dict[str, Any]) -> str:
    curve = ", ".join(f"{t} threads {p['ops_per_s']:.0f} ops/s {p['avg_latency_us']:.0f} us"
                      for t, p in found["points"].items())
    return (f"{workload}: peak at {found['threads']} threads ({found['ops_per_s']:.0f} ops/s, average latency "
            f"{found['avg_latency_us']:.0f} us): the highest throughput whose average latency is within "
            f"{found['latency_climb']:g}x of the sweep's lowest ({found['lowest_avg_latency_us']:.0f} us); "
            f"sweep: {curve}")


def record(ctx: Any, workload: str, threads: int, ops_per_s: float, avg_latency_us: float) -> None:
    """Adds one measured point; keeps one note per workload (replaced as points arrive) and the artifact."""
    curves = ctx.shared.setdefault("ycsb_sweep", {}).setdefault(workload, {})
    curves.setdefault(threads, []).append((ops_per_s, avg_latency_us))
    found = peak(curves)
    if found is None:
        return
    prefix = f"{workload}: peak at "
    ctx.notes[:] = [n for n in ctx.notes if not n.startswith(prefix)] + [note(workload, found)]
    ctx.artifacts.setdefault("ycsb", {}).setdefault("peaks", {})[workload] = found
