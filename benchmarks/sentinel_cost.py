"""The noise sentinel's own CPU per timed window, as a share of a core at a run's window rates: goal ≤ 0.2%.

A window costs its two marks. Each side marks ``--windows`` windows as a run does (``HostTelemetry.mark()``
at the start and at the end, ``--gap`` seconds apart, windows ``--between`` seconds apart: more than
``REUSE_S``, so each window pays two sentinel readings, the worst case) and is charged the marks' thread CPU
(``time.thread_time`` around each mark: the collector's snapshot, and on our side the sentinel's readings
of every process's /proc/PID/stat and io, /proc/stat, meminfo and /proc/pressure). Ours: the collector
with the sentinel, as ``storbench run`` has it; the named peer: the collector alone (storbench before
issue 37). The sentinel's cost is the difference per window, within a round (both sides meet the same
machine, whose process count sets the cost), then the median over rounds; as a share of a core it is
that CPU times the window rate: 1 window per second (short windows back to back, the worst a run does)
and 1 per 10 s. Neither side's collector thread runs: its ticks cost the same with or without the sentinel.
Beside them, reported without a goal: windows back to back (the next opens within ``REUSE_S`` of the last
one's end and starts from its reading: one sentinel reading per window).

The cost grows with the processes on the machine (one /proc/PID/stat read each, an io read for those that ran):
the scope line says how many there were.

    .venv/bin/python benchmarks/sentinel_cost.py [--windows 40] [--gap 0.02] [--between 0.3] [--rounds 3] [--quick]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import parser, ratios, rotated, scope, spread, verdict  # noqa: E402

from storbench.telemetry import Collector  # noqa: E402
from storbench.telemetry.run import REUSE_S, HostTelemetry  # noqa: E402
from storbench.telemetry.sentinel import NoiseSentinel  # noqa: E402

GOAL_PCT = 0.2
RATES = {"1 window/s": 1.0, "1 window/10 s": 0.1}


class Window:
    start = end = 0.0


def side(sentinel: bool, windows: int, gap: float, between: float) -> dict[str, Any]:
    """CPU per window of the marks (ms), with or without the sentinel; the last window's noise figures."""
    telemetry = HostTelemetry(Collector([], interval=1.0), [], [], 1.0, sentinel=NoiseSentinel() if sentinel else None)
    spent, window = 0.0, Window()
    for _ in range(windows):
        used = time.thread_time()
        window.start = telemetry.mark()
        spent += time.thread_time() - used
        time.sleep(gap)
        used = time.thread_time()
        window.end = telemetry.mark()
        spent += time.thread_time() - used
        time.sleep(between)
    noise = {s.metric: s.value for s in telemetry.samples("bench", window, 1) if s.metric.startswith("noise_")}
    telemetry.stop()
    return {"ms_per_window": 1000 * spent / windows, "noise": noise}


def processes() -> int:
    return sum(1 for name in os.listdir("/proc") if name.isdigit())


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--windows", type=int, default=40, help="windows per side and round (default 40)")
    p.add_argument("--gap", type=float, default=0.02, help="seconds between a window's marks (default 0.02)")
    p.add_argument(
        "--between",
        type=float,
        default=REUSE_S + 0.05,
        help=f"seconds between windows (default {REUSE_S + 0.05:g}: over REUSE_S, two readings a window)",
    )
    args = p.parse_args()
    windows = 10 if args.quick else args.windows
    scope(
        f"thread CPU of a timed window's two marks (HostTelemetry.mark: collector snapshot [+ noise sentinel "
        f"readings]), {windows} windows per side and round, marks {args.gap:g} s apart, windows {args.between:g} s "
        f"apart (and back to back, reported), {processes()} processes "
        f"on this machine now; as % of a core at {' and '.join(RATES)}",
        peer="the collector alone (storbench's window marks before issue 37), same windows, same machine",
        parallelism="one thread marks, as a run's loop does",
        startup="the sentinel's first reading (opening every process's files) inside, spread over the round's windows",
        cache="procfs: nothing cached by the kernel",
        clock="time.thread_time around each mark",
    )
    results = rotated(
        {
            "collector + sentinel": lambda _k: side(True, windows, args.gap, args.between),
            "collector alone": lambda _k: side(False, windows, args.gap, args.between),
            "back to back + sentinel": lambda _k: side(True, windows, args.gap, 0.0),
            "back to back alone": lambda _k: side(False, windows, args.gap, 0.0),
        },
        args.rounds,
    )
    ours = [r["ms_per_window"] for r in results["collector + sentinel"]]
    peer = [r["ms_per_window"] for r in results["collector alone"]]
    extra = [o - q for o, q in zip(ours, peer)]
    chained = [
        o["ms_per_window"] - q["ms_per_window"]
        for o, q in zip(results["back to back + sentinel"], results["back to back alone"])
    ]
    print(f"{'side (medians over rounds)':34} {'CPU ms per window':>18}")
    for name, rows in results.items():
        print(f"{name:34} {spread([r['ms_per_window'] for r in rows]).median:18.3f}")
    print(f"{'the sentinel (difference)':34} {spread(extra).median:18.3f}")
    print(f"{'the sentinel, back to back':34} {spread(chained).median:18.3f}")
    last = results["collector + sentinel"][-1]["noise"]
    print("the last window's figures: " + ", ".join(f"{k} {v}" for k, v in last.items()))
    for name, rate in RATES.items():
        verdict(
            f"sentinel % of a core at {name}",
            spread([e * rate / 10 for e in extra]),
            goal=GOAL_PCT,
            at_least=False,
            unit="%",
        )  # ms per window × windows per s / 1000 ms × 100%
    verdict(
        "sentinel % of a core at 1 window/s, windows back to back",
        spread([e / 10 for e in chained]),
        goal=None,
        unit="%",
    )
    verdict("window marks' CPU, collector + sentinel over the collector alone", ratios(ours, peer), goal=None)


if __name__ == "__main__":
    main()
