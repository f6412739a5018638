"""Collector overhead: CPU spent by storbench's sampling thread vs sysstat's collectors.

Named peers, measured in the same run and over the same seconds as storbench at 1 s:
sysstat's ``sadc -S DISK`` (what ``sar`` records with) and ``iostat -x`` on the same
devices. Each peer's CPU comes from its own rusage (``os.wait4``); storbench's is
``Collector.cpu_seconds`` (the sampling thread's ``thread_time`` plus mark() costs).
sysstat samples in whole seconds only, so at 0.1 s storbench is shown alone.

    .venv/bin/python benchmarks/collector_overhead.py [--seconds 20]
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from storbench.telemetry import Collector, devices_for_path  # noqa: E402

SADC = "/usr/lib/sysstat/sadc"


@dataclass
class Measured:
    tool: str
    interval: float
    seconds: float  # wall time sampled
    samples: int | None
    cpu_s: float

    @property
    def per_hour(self) -> float:
        return self.cpu_s / self.seconds * 3600

    @property
    def core_pct(self) -> float:
        return self.cpu_s / self.seconds * 100


def run_collector(devices: list[str], interval: float, seconds: float) -> Measured:
    collector = Collector(devices, interval=interval)
    started = time.monotonic()
    collector.start()
    time.sleep(seconds)
    collector.stop()
    return Measured(f"storbench Collector ({len(devices)} device(s))", interval, time.monotonic() - started,
                    len(collector.points()), collector.cpu_seconds)


def start_peer(command: list[str]) -> tuple[subprocess.Popen, float]:
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE), time.monotonic()


def finish_peer(name: str, peer: tuple[subprocess.Popen, float], samples: int) -> Measured | None:
    """Waits for the child and reads its own rusage, so concurrent peers are not mixed up."""
    process, started = peer
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - started
    if process.returncode != 0:
        print(f"  {name} failed (exit {process.returncode}): {process.stderr.read().decode().strip()[:200]}")
        return None
    return Measured(name, 1.0, seconds, samples, usage.ru_utime + usage.ru_stime)


def sysstat_version() -> str:
    try:
        return subprocess.run([SADC, "-V"], capture_output=True, text=True).stdout.split()[2]
    except (OSError, IndexError):
        return "?"


def print_table(rows: list[Measured]) -> None:
    print(f"  {'tool':<38} {'interval':>8} {'samples':>7} {'CPU s':>8} {'CPU s/hour':>10} {'% of a core':>11}"
          f" {'per sample':>11}")
    for row in rows:
        per_sample = f"{row.cpu_s / row.samples * 1e6:.0f} µs" if row.samples else "-"
        print(f"  {row.tool:<38} {row.interval:>7g}s {row.samples or '-':>7} {row.cpu_s:>8.4f} "
              f"{row.per_hour:>10.2f} {row.core_pct:>10.4f}% {per_sample:>11}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=20, help="seconds per interval (default 20)")
    args = parser.parse_args()
    seconds = args.seconds

    resolution = devices_for_path(os.getcwd())
    devices = resolution.devices
    print(f"collector overhead: {seconds} s per interval, devices {', '.join(devices) or 'none'} "
          f"({resolution.how}), {os.cpu_count()} CPUs")
    if resolution.warning:
        print(f"  warning: {resolution.warning}")

    # 1 s: storbench and both peers over the same seconds; each runs count = seconds + 1 reports,
    # the first at once, so they span `seconds` like the collector does.
    peers: dict[str, tuple[subprocess.Popen, float]] = {}
    with tempfile.TemporaryDirectory(prefix="storbench-bench-") as tmp:
        version = sysstat_version()
        if Path(SADC).exists():
            peers[f"sadc -S DISK (sysstat {version})"] = start_peer(
                [SADC, "-S", "DISK", "1", str(seconds + 1), str(Path(tmp) / "sa")])
        if shutil.which("iostat"):
            peers[f"iostat -x {' '.join(devices)} (sysstat {version})".replace("  ", " ")] = start_peer(
                ["iostat", "-x", *devices, "1", str(seconds + 1)])
        ours_1s = run_collector(devices, 1.0, seconds)
        measured_peers = [m for name, peer in peers.items() if (m := finish_peer(name, peer, seconds + 1))]
    ours_01s = run_collector(devices, 0.1, seconds)

    print()
    print_table([ours_1s, *measured_peers, ours_01s])
    print()
    if not measured_peers:
        print("  no peer measured: install sysstat (sadc, iostat) for the comparison")
    for peer in measured_peers:
        ratio = ours_1s.cpu_s / peer.cpu_s if peer.cpu_s > 0 else float("inf")
        print(f"  storbench/{peer.tool.split(' (')[0]} CPU ratio at 1 s: {ratio:.2f}x")
    print(f"  storbench at 0.1 s costs {ours_01s.cpu_s / ours_1s.cpu_s:.1f}x its 1 s cost "
          f"for 10x the samples; sysstat cannot sample below 1 s")


if __name__ == "__main__":
    main()
