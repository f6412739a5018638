"""Collector overhead: CPU spent by storbench's collector vs sysstat's collectors, process for process.

Named peers, measured in the same run and over the same seconds as storbench at 1 s:
sysstat's ``sadc -S DISK`` (what ``sar`` records with) and ``iostat -x`` on the same
devices. Every tool runs as a process of its own (storbench's Collector through
``collector_process.py``) sampling for the same seconds at the same interval, and each one's
CPU is its whole rusage (``os.wait4``), interpreter or program start-up included. Each tool
runs over two durations, so the steady-state cost per sample is the CPU difference over the
sample difference: start-up cancels out on both sides. The in-run figure (the sampling
thread's ``thread_time`` in storbench's own process, what a run pays) is shown beside, and at
0.1 s storbench alone: sysstat samples in whole seconds only.

    .venv/bin/python benchmarks/collector_overhead.py [--seconds 20] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from storbench.telemetry import Collector, devices_for_path  # noqa: E402

SADC = "/usr/lib/sysstat/sadc"
CHILD = Path(__file__).with_name("collector_process.py")
STORBENCH = "storbench Collector"


@dataclass
class Measured:
    tool: str
    interval: float
    seconds: float  # wall time sampled
    samples: int
    cpu_s: float


@dataclass
class Peer:
    """A collector process: its command and how many samples it takes in ``seconds``."""

    tool: str
    scope: str
    command: list[str]
    samples: int | None  # None: the process prints its own count on stdout


def peers(devices: list[str], seconds: int, interval: float, tmp: Path) -> list[Peer]:
    """The tools to run for ``seconds``, each with count = seconds + 1 reports, the first at once."""
    version = sysstat_version()
    found = [Peer(STORBENCH, f"{len(devices)} device(s) from /proc/diskstats, /proc/stat cpu, /proc/net/dev, "
                             f"/proc/meminfo, RAPL energy; kept in memory (python {sys.version.split()[0]})",
                  [sys.executable, str(CHILD), str(interval), str(seconds), *devices], None)]
    if Path(SADC).exists():
        found.append(Peer(f"sadc -S DISK (sysstat {version})", "sysstat's default activities (CPU, memory, "
                          "paging, network, ...) and every block device; binary records to a file",
                          [SADC, "-S", "DISK", "1", str(seconds + 1), str(tmp / f"sa{seconds}")], seconds + 1))
    if shutil.which("iostat"):
        found.append(Peer(f"iostat -x {' '.join(devices)} (sysstat {version})".replace("  ", " "),
                          "avg-cpu and the named devices' extended statistics; text to /dev/null",
                          ["iostat", "-x", *devices, "1", str(seconds + 1)], seconds + 1))
    return found


def run_processes(tools: list[Peer], during: Callable[[], object] = lambda: None) -> dict[str, Measured]:
    """Starts every tool at once, calls ``during``, then reads each one's own rusage (so concurrent tools are
    not mixed up)."""
    started = {tool.tool: (subprocess.Popen(tool.command, stdout=subprocess.PIPE, stderr=subprocess.PIPE),
                           time.monotonic()) for tool in tools}
    during()
    measured = {}
    for tool in tools:
        process, began = started[tool.tool]
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - began
        out, err = process.stdout.read().decode(), process.stderr.read().decode()
        if process.returncode != 0:
            print(f"  {tool.tool} failed (exit {process.returncode}): {err.strip()[:200]}")
            continue
        samples = tool.samples if tool.samples is not None else int(out.split()[-1])
        measured[tool.tool] = Measured(tool.tool, 1.0, wall, samples, usage.ru_utime + usage.ru_stime)
    return measured


def run_thread(devices: list[str], interval: float, seconds: float) -> Measured:
    """The collector as a run has it: a thread in this process, charged its thread_time only."""
    collector = Collector(devices, interval=interval)
    started = time.monotonic()
    collector.start()
    time.sleep(seconds)
    collector.stop()
    return Measured(f"{STORBENCH}, thread in a run", interval, time.monotonic() - started,
                    len(collector.points()), collector.cpu_seconds)


def sysstat_version() -> str:
    try:
        return subprocess.run([SADC, "-V"], capture_output=True, text=True).stdout.split()[2]
    except (OSError, IndexError):
        return "?"


def print_table(rows: list[Measured]) -> None:
    print(f"  {'tool':<46} {'interval':>8} {'seconds':>7} {'samples':>7} {'CPU ms':>8} {'% of a core':>11}"
          f" {'ms/sample':>9}")
    for row in rows:
        print(f"  {row.tool:<46} {row.interval:>7g}s {row.seconds:>7.1f} {row.samples:>7} {row.cpu_s * 1e3:>8.1f} "
              f"{row.cpu_s / row.seconds * 100:>10.4f}% {row.cpu_s / row.samples * 1e3:>9.3f}")


def median_of(rounds: list[dict[str, Measured]]) -> dict[str, Measured]:
    """Per tool, the round with the median CPU time (tools that failed in some round: over the others)."""
    by_tool: dict[str, list[Measured]] = {}
    for measured in rounds:
        for name, row in measured.items():
            by_tool.setdefault(name, []).append(row)
    return {name: sorted(rows, key=lambda m: m.cpu_s)[len(rows) // 2] for name, rows in by_tool.items()}


def steady(short: Measured, long: Measured) -> tuple[float, float]:
    """(CPU s per sample, start-up CPU s) from two runs of one tool: the slope and intercept of CPU on samples."""
    per_sample = (long.cpu_s - short.cpu_s) / (long.samples - short.samples)
    return per_sample, short.cpu_s - per_sample * short.samples


def ratio(ours: float, theirs: float) -> str:
    return f"{ours / theirs:.2f}x" if theirs > 0 else "n/a (peer measured 0)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=20, help="the long duration in seconds (default 20)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of both durations; medians (default 3)")
    args = parser.parse_args()
    long_s = args.seconds
    short_s = max(2, long_s // 4)

    resolution = devices_for_path(os.getcwd())
    devices = resolution.devices
    print(f"collector overhead: {short_s} s and {long_s} s at 1 s, {args.rounds} round(s) (medians), "
          f"devices {', '.join(devices) or 'none'} "
          f"({resolution.how}), {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    if resolution.warning:
        print(f"  warning: {resolution.warning}")

    shorts: list[dict[str, Measured]] = []
    longs: list[dict[str, Measured]] = []
    in_run: list[Measured] = []  # the in-run thread samples over the same seconds as the long processes
    with tempfile.TemporaryDirectory(prefix="storbench-bench-") as tmp:
        for _ in range(args.rounds):  # alternated, so a burst of load from elsewhere hits both durations
            shorts.append(run_processes(peers(devices, short_s, 1.0, Path(tmp))))
            tools = peers(devices, long_s, 1.0, Path(tmp))
            longs.append(run_processes(tools, lambda: in_run.append(run_thread(devices, 1.0, long_s))))
    short, long = median_of(shorts), median_of(longs)
    thread_1s = median_of([{"thread": m} for m in in_run])["thread"]
    thread_01s = run_thread(devices, 0.1, long_s)

    print("\nscope: every process's whole rusage (start-up included), the same devices, seconds and interval")
    for tool in tools:
        print(f"  {tool.tool}: {tool.scope}")
    print()
    print_table([*short.values(), *long.values(), thread_1s, thread_01s])

    print("\nsteady state (start-up subtracted: CPU difference / sample difference between the two durations)")
    costs = {name: steady(short[name], long[name]) for name in long if name in short}
    for name, (per_sample, startup) in costs.items():
        print(f"  {name:<46} {per_sample * 1e3:>8.3f} ms/sample   start-up {startup * 1e3:>7.1f} ms")
    ours = long.get(STORBENCH)
    if ours is None or STORBENCH not in costs:
        print("  storbench's collector process failed: no ratio")
        return
    others = [name for name in long if name != STORBENCH]
    if not others:
        print("  no peer measured: install sysstat (sadc, iostat) for the comparison")
    print("\nratios storbench/peer at 1 s (> 1: storbench costs more)")
    for name in others:
        peer = long[name]
        print(f"  vs {name.split(' (')[0]:<24} whole process over {long_s} s: {ratio(ours.cpu_s, peer.cpu_s)}   "
              f"steady per sample: {ratio(costs[STORBENCH][0], costs[name][0])}")
    print(f"  in a run, storbench's thread costs {thread_1s.cpu_s / thread_1s.samples * 1e3:.3f} ms/sample "
          f"(thread_time only: no interpreter start-up, which the run pays anyway)")
    print(f"  storbench at 0.1 s costs {thread_01s.cpu_s / thread_1s.cpu_s:.1f}x its 1 s cost "
          f"for 10x the samples; sysstat cannot sample below 1 s")


if __name__ == "__main__":
    main()
