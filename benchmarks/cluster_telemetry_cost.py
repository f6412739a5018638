"""Cluster telemetry cost and fidelity: a node read through node_exporter, against the local collector.

Two sides, each alone in turn (the order rotated round by round), at 1 s on one node:
- the scrape path: storbench's Collector reading node_exporter (what ``--telemetry node_exporter``
  runs), charged node_exporter's own CPU (its /proc/PID/stat, as a node would pay it) plus the
  scraping thread's (``Collector.cpu_seconds``);
- the peer: storbench's local /proc collector, charged its thread's CPU.

Each side samples over its own steady rate-limited O_DIRECT fio write of the same bytes to a fresh
loop device nothing else writes: the collector starts before fio is spawned and stops after it exits.

- cost: the scrape path's CPU as a share of a core; goal (issue 13): at most 1% of a core per node.
  Beside it, the scrape path over the local collector (no goal).
- fidelity: the device's write-byte delta each path reports over its window, against the bytes fio
  itself reports writing (its JSON ``io_bytes``), an independent truth from the workload; goal
  (issue 13): within 2%. (This once compared the exporter with ``iostat``, a second reader of the
  same kernel counters, which proves nothing about either.)

    .venv/bin/python benchmarks/cluster_telemetry_cost.py [--seconds 20] [--rounds 3] [--quick]

Needs root (a loop device), fio and Debian's prometheus-node-exporter (scripts/setup.sh --test).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))
from harness import parser, ratios, rotated, scope, spread, verdict  # noqa: E402

from storbench.telemetry import Collector  # noqa: E402
from storbench.telemetry.exporter import ExporterReader  # noqa: E402
from storbench.telemetry.window import window_totals  # noqa: E402
from tests.telemetry.exporters import start_exporter  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
RATE_MIB = 50  # MiB/s: fio's steady rate
SECTOR = 512
PATH, LOCAL = "node_exporter path", "local /proc"


@dataclass
class Side:
    cpu_s: float  # the path's CPU over its window
    wall_s: float  # the window
    device_bytes: int  # write-byte delta of the device over the window, as this path read it
    fio_bytes: int  # what fio says it wrote


def process_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def fio_write(device: str, size_mib: int) -> int:
    """A rate-limited O_DIRECT sequential write of ``size_mib`` MiB to ``device``; the bytes fio reports."""
    done = subprocess.run(
        [
            "fio",
            "--name=steady",
            f"--filename={device}",
            "--rw=write",
            "--bs=1m",
            "--direct=1",
            f"--rate={RATE_MIB}m",
            f"--size={size_mib}m",
            "--output-format=json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(json.loads(done.stdout)["jobs"][0]["write"]["io_bytes"])


def side(device: str, size_mib: int, reader: Callable | None, exporter_pid: int | None) -> Callable[[int], Side]:
    """One side of a round: a collector (local, or reading the exporter) around one fio write."""
    name = device.removeprefix("/dev/")

    def run(_k: int) -> Side:
        collector = Collector([name], interval=1.0, reader=reader)
        exporter_before = process_cpu_s(exporter_pid) if exporter_pid else 0.0
        started = time.monotonic()
        collector.start()
        written = fio_write(device, size_mib)
        collector.stop()
        wall = time.monotonic() - started
        exporter_cpu = process_cpu_s(exporter_pid) - exporter_before if exporter_pid else 0.0
        points = collector.points()
        sectors = window_totals(points, points[0].time, points[-1].time)["write_sectors"]
        return Side(collector.cpu_seconds + exporter_cpu, wall, sectors * SECTOR, written)

    return run


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--seconds", type=int, default=20, help="seconds of fio write per side and round (default 20)")
    args = p.parse_args()
    seconds = 2 if args.quick else args.seconds
    if seconds < 1:
        p.error(f"--seconds {args.seconds}: at least 1")
    if os.geteuid() != 0:
        sys.exit("cluster_telemetry_cost: needs root (it attaches a loop device)")
    for tool in ("fio", "losetup"):
        if not shutil.which(tool):
            sys.exit(f"cluster_telemetry_cost: {tool} is not installed (scripts/setup.sh --test)")
    size_mib = RATE_MIB * seconds
    scope(
        f"storbench's Collector reading node_exporter (cost: exporter process + scraping thread) vs storbench's "
        f"local /proc collector (cost: its thread), each alone in turn over its own O_DIRECT fio write of "
        f"{size_mib} MiB at {RATE_MIB} MiB/s to a fresh loop device nothing else writes, 1 s interval; fidelity: "
        f"each path's device write-byte delta over its window against the bytes fio reports writing (the "
        f"workload's own count, an independent truth)",
        peer="storbench's local /proc collector (cost); fio's JSON io_bytes (fidelity)",
        parallelism="one fio job, bs 1m, rate-limited; one sampling thread per path; sides one at a time, "
        "order rotated",
        startup="node_exporter started once before the rounds (outside); each collector started before fio "
        "and stopped after it exits (inside, both sides)",
        cache="O_DIRECT writes to the loop device (no page cache on the measured device)",
        clock="CPU: /proc/PID/stat ticks (node_exporter), thread_time (storbench's threads); window: time.monotonic",
    )
    scratch = Path(tempfile.mkdtemp(prefix="storbench-bench-", dir="/var/tmp"))
    image = scratch / "disk.img"
    with open(image, "wb") as handle:
        handle.truncate((size_mib + 64) << 20)
    device = subprocess.run(
        ["losetup", "-f", "--show", str(image)], capture_output=True, text=True, check=True
    ).stdout.strip()
    exporter = None
    try:
        exporter = start_exporter("127.0.0.41")
        reader = ExporterReader(exporter.url)
        results = rotated(
            {PATH: side(device, size_mib, reader.read, exporter.proc.pid), LOCAL: side(device, size_mib, None, None)},
            args.rounds,
        )
        reader.close()
    finally:
        if exporter is not None:
            exporter.stop()
        subprocess.run(["losetup", "-d", device], check=False)
        shutil.rmtree(scratch, ignore_errors=True)

    print(f"{device} (loop), {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; per round:")
    for k, (remote, local) in enumerate(zip(results[PATH], results[LOCAL])):
        print(
            f"  round {k + 1}: {PATH} {remote.cpu_s * 1e3:.1f} ms CPU over {remote.wall_s:.2f} s, "
            f"device {remote.device_bytes} B / fio {remote.fio_bytes} B; {LOCAL} {local.cpu_s * 1e3:.1f} ms "
            f"over {local.wall_s:.2f} s, device {local.device_bytes} B / fio {local.fio_bytes} B"
        )
    verdict(
        "scrape path CPU per node at 1 s (node_exporter + storbench's scraper), share of a core",
        spread([100 * r.cpu_s / r.wall_s for r in results[PATH]]),
        goal=1,
        at_least=False,
        unit="%",
    )
    verdict(
        "scrape path / local collector, CPU per second",
        ratios([r.cpu_s / r.wall_s for r in results[PATH]], [r.cpu_s / r.wall_s for r in results[LOCAL]]),
        goal=None,
    )
    for name in (PATH, LOCAL):
        verdict(
            f"fidelity via {name}, |device bytes written / bytes fio wrote - 1|",
            spread([100 * abs(r.device_bytes / r.fio_bytes - 1) for r in results[name]]),
            goal=2,
            at_least=False,
            unit="%",
        )


if __name__ == "__main__":
    main()
