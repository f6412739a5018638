"""Collector overhead: CPU spent by storbench's collector vs sysstat's collectors, process for process.

Named peers, measured in the same rounds and over the same seconds as storbench at 1 s:
sysstat's ``sadc -S DISK`` (what ``sar`` records with) and ``iostat -x`` on the same
devices. Every tool runs as a process of its own (storbench's Collector through
``collector_process.py``), all launched together, sampling for the same seconds at the same
interval, and each one's CPU is its whole rusage (``os.wait4``), interpreter or program
start-up included. Each round runs every tool over two durations (the order of the two
rotated round by round), so the steady-state cost per sample is the CPU difference over the
sample difference: start-up cancels out on every side. Per round: storbench/peer ratios of
the whole processes and of the steady cost; beside them, the in-run figure (the sampling
thread's ``thread_time`` in storbench's own process, what a run pays) and, at 0.1 s,
storbench alone: sysstat samples in whole seconds only.

No goal was ever set for these figures (issue 2 asked for the cost to be measured and
reported): each verdict line says "no goal: reported".

    .venv/bin/python benchmarks/collector_overhead.py [--seconds 20] [--rounds 3] [--quick]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import parser, ratios, rotated, scope, spread, verdict  # noqa: E402

from storbench.telemetry import Collector, devices_for_path  # noqa: E402

SADC = "/usr/lib/sysstat/sadc"
CHILD = Path(__file__).with_name("collector_process.py")
STORBENCH = "storbench"


@dataclass
class Measured:
    tool: str
    seconds: float  # wall time sampled
    samples: int
    cpu_s: float


@dataclass
class Tool:
    """A collector process: its command and how many samples it takes (None: it prints its own count)."""

    name: str
    command: list[str]
    samples: int | None


def tools(devices: list[str], seconds: int, tmp: Path) -> list[Tool]:
    """The tools to run for ``seconds`` at 1 s, each with count = seconds + 1 reports, the first at once."""
    found = [Tool(STORBENCH, [sys.executable, str(CHILD), "1", str(seconds), *devices], None)]
    if Path(SADC).exists():
        found.append(Tool("sadc", [SADC, "-S", "DISK", "1", str(seconds + 1), str(tmp / f"sa{seconds}")], seconds + 1))
    if shutil.which("iostat"):
        found.append(Tool("iostat", ["iostat", "-x", *devices, "1", str(seconds + 1)], seconds + 1))
    return found


def run_processes(started_in_order: list[Tool], during: Callable[[], Measured]) -> tuple[dict[str, Measured], Measured]:
    """Starts every tool at once (in the given order), calls ``during``, then reads each one's own rusage
    (os.wait4 on its pid, so concurrent tools are not mixed up). Output goes to files, not pipes: a pipe
    must be drained before the wait, and draining it (communicate) would reap the rusage away."""
    started = {}
    for tool in started_in_order:
        out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        started[tool.name] = (subprocess.Popen(tool.command, stdout=out, stderr=err), time.monotonic(), out, err)
    thread = during()
    measured = {}
    for tool in started_in_order:
        process, began, out, err = started[tool.name]
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = code = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - began
        out.seek(0), err.seek(0)
        text, error = out.read().decode(), err.read().decode()
        out.close(), err.close()
        if code != 0:
            print(f"  {tool.name} failed (exit {code}): {error.strip()[:200]}")
            continue
        samples = tool.samples if tool.samples is not None else int(text.split()[-1])
        measured[tool.name] = Measured(tool.name, wall, samples, usage.ru_utime + usage.ru_stime)
    return measured, thread


def run_thread(devices: list[str], interval: float, seconds: float) -> Measured:
    """The collector as a run has it: a thread in this process, charged its thread_time only."""
    collector = Collector(devices, interval=interval)
    started = time.monotonic()
    collector.start()
    time.sleep(seconds)
    collector.stop()
    return Measured(
        f"thread at {interval:g} s", time.monotonic() - started, len(collector.points()), collector.cpu_seconds
    )


def sysstat_version() -> str:
    try:
        return subprocess.run([SADC, "-V"], capture_output=True, text=True).stdout.split()[2]
    except (OSError, IndexError):
        return "?"


def steady(short: Measured, long: Measured) -> float | None:
    """CPU s per sample from two runs of one tool (the slope of CPU on samples); None if the slope is not
    positive (load from elsewhere outweighed the few extra samples: the round says nothing)."""
    slope = (long.cpu_s - short.cpu_s) / (long.samples - short.samples)
    return slope if slope > 0 else None


def round_side(
    devices: list[str], seconds: int, tmp: Path, thread_interval: float, thread_seconds: float
) -> Callable[[int], tuple[dict[str, Measured], Measured]]:
    """One duration of a round: every tool launched together (launch order rotated by round), and storbench's
    in-run thread sampling in this process meanwhile."""

    def side(k: int) -> tuple[dict[str, Measured], Measured]:
        found = tools(devices, seconds, tmp)
        order = found[k % len(found) :] + found[: k % len(found)]
        return run_processes(order, lambda: run_thread(devices, thread_interval, thread_seconds))

    return side


def report_ratio(name: str, ours: list[float | None], peer: list[float | None]) -> None:
    """A verdict over the rounds where both sides have a figure; fewer than 3 such rounds: an n/a line."""
    pairs = [(o, p) for o, p in zip(ours, peer) if o is not None and p is not None]
    if len(pairs) < 3:
        print(f"  {name}: n/a (a figure in only {len(pairs)} of {len(ours)} rounds)")
        return
    verdict(name, ratios([o for o, _ in pairs], [p for _, p in pairs]), goal=None)


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--seconds", type=int, default=20, help="the long duration in seconds (default 20)")
    args = p.parse_args()
    long_s = 4 if args.quick else args.seconds
    short_s = 2 if args.quick else max(2, long_s // 4)
    if long_s <= short_s:
        p.error(f"--seconds {args.seconds}: at least 3 (two durations are needed)")

    resolution = devices_for_path(os.getcwd())
    devices = resolution.devices
    with tempfile.TemporaryDirectory(prefix="storbench-bench-") as tmp:
        names = [tool.name for tool in tools(devices, long_s, Path(tmp))]
        peers = [name for name in names if name != STORBENCH]
        version = sysstat_version()
        scope(
            f"storbench's Collector as its own python process (collector_process.py) vs "
            f"{', '.join(peers) or 'no peer (sysstat missing)'}, all launched together, sampling "
            f"{', '.join(devices) or 'no device'} ({resolution.how}) at 1 s for {short_s} s and {long_s} s; "
            f"whole process = each one's rusage; steady = CPU slope over the two durations",
            peer=f"sysstat {version}: sadc -S DISK (default activities + every disk, binary records to a file), "
            f"iostat -x (avg-cpu + the named devices, text to a file)",
            parallelism="one process per tool, one sampler each, the tools concurrent; launch order rotated",
            startup="inside for every tool (whole process); subtracted for every tool (steady)",
            cache="nothing to cache: /proc reads; storbench keeps points in memory",
            clock="CPU: os.wait4 rusage (user+sys) per process; samples: each tool's own count",
        )
        if resolution.warning:
            print(f"  warning: {resolution.warning}")
        results = rotated(
            {
                "short": round_side(devices, short_s, Path(tmp), 0.1, short_s),
                "long": round_side(devices, long_s, Path(tmp), 1.0, long_s),
            },
            args.rounds,
        )

    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; per round, CPU ms (samples):")
    for k, (short, long) in enumerate(zip(results["short"], results["long"])):
        cells = [
            f"{name} {long[0][name].cpu_s * 1e3:.1f} ({long[0][name].samples})" for name in names if name in long[0]
        ]
        print(
            f"  round {k + 1}, {long_s} s: {', '.join(cells)}; in-run thread {long[1].cpu_s * 1e3:.1f} "
            f"({long[1].samples})"
        )

    def figure(rounds: list[tuple[dict[str, Measured], Measured]], name: str) -> list[float | None]:
        return [r[0][name].cpu_s if name in r[0] else None for r in rounds]

    def slopes(name: str) -> list[float | None]:
        return [
            steady(short[0][name], long_[0][name]) if name in short[0] and name in long_[0] else None
            for short, long_ in zip(results["short"], results["long"])
        ]

    for name in names:
        cells = ", ".join("n/a" if v is None else f"{v * 1e3:.3f}" for v in slopes(name))
        print(f"  {name}: steady ms of CPU per sample by round: {cells}")
    for peer in peers:
        report_ratio(
            f"storbench/{peer} CPU, whole processes over {long_s} s at 1 s",
            figure(results["long"], STORBENCH),
            figure(results["long"], peer),
        )
        report_ratio(f"storbench/{peer} CPU per sample, steady state at 1 s", slopes(STORBENCH), slopes(peer))
    if not peers:
        print("  no peer measured: install sysstat (sadc, iostat) for the comparison")
    in_run = [thread for _, thread in results["long"]]
    verdict(
        "in-run collector thread at 1 s, ms of CPU per sample",
        spread([t.cpu_s / t.samples * 1e3 for t in in_run]),
        goal=None,
        unit="ms",
    )
    verdict(
        "in-run collector thread at 1 s, share of a core",
        spread([100 * t.cpu_s / t.seconds for t in in_run]),
        goal=None,
        unit="%",
    )
    # cost per second at 0.1 s over cost per second at 1 s, within a round (10x the samples)
    verdict(
        "in-run collector thread, CPU per second at 0.1 s / at 1 s",
        ratios(
            [fast.cpu_s / fast.seconds for _, fast in results["short"]], [slow.cpu_s / slow.seconds for slow in in_run]
        ),
        goal=None,
    )


if __name__ == "__main__":
    main()
