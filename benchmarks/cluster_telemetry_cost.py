"""Cluster telemetry cost and fidelity: a node read through node_exporter, against the local collector and iostat.

Over the same seconds at 1 s, on one node:
- the scrape path's CPU: node_exporter's own (its /proc/PID/stat, as a node would pay it) plus
  storbench's scraping thread (``Collector.cpu_seconds``), against the local /proc collector's;
  goal: at most 1% of a core per node;
- fidelity: the write MB/s storbench derives from the exporter, against ``iostat -x -o JSON`` run on
  the same device at the same interval, over a steady rate-limited fio write on a loop device
  that nothing else touches; goal: mean within 2%.

    .venv/bin/python benchmarks/cluster_telemetry_cost.py [--seconds 20]

Needs root (a loop device), fio, sysstat and Debian's prometheus-node-exporter (scripts/setup.sh --test).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from storbench.telemetry import Collector  # noqa: E402
from storbench.telemetry.exporter import ExporterReader  # noqa: E402
from tests.telemetry.exporters import start_exporter  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime


def iostat_write_mbps(device: str, seconds: int) -> subprocess.Popen:
    return subprocess.Popen(["iostat", "-x", "-d", "-k", "-o", "JSON", device, "1", str(seconds + 1)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def iostat_rates(proc: subprocess.Popen) -> list[float]:
    out, _ = proc.communicate(timeout=120)
    stats = json.loads(out)["sysstat"]["hosts"][0]["statistics"]
    return [disk["wkB/s"] * 1024 / 1e6 for report in stats[1:] for disk in report["disk"]]  # [0]: since boot


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=20)
    args = parser.parse_args()
    seconds = args.seconds
    for tool in ("fio", "iostat", "losetup"):
        if not shutil.which(tool):
            sys.exit(f"cluster_telemetry_cost: {tool} is not installed (scripts/setup.sh --test)")
    scratch = Path(tempfile.mkdtemp(prefix="storbench-bench-"))
    image = scratch / "disk.img"
    with open(image, "wb") as handle:
        handle.truncate(1 << 30)
    device = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True, text=True,
                            check=True).stdout.strip()
    name = device.removeprefix("/dev/")
    exporter = start_exporter("127.0.0.41")
    try:
        fio = subprocess.Popen(["fio", "--name=steady", f"--filename={device}", "--rw=write", "--bs=1m",
                                "--direct=1", "--rate=50m", "--time_based", f"--runtime={seconds + 6}"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(2)  # past fio's ramp
        remote = Collector([name], interval=1.0, reader=ExporterReader(exporter.url).read)
        local = Collector([name], interval=1.0)
        exporter_before = process_cpu_s(exporter.proc.pid)
        iostat = iostat_write_mbps(name, seconds)
        started = time.monotonic()
        remote.start(), local.start()
        time.sleep(seconds)
        remote.stop(), local.stop()
        wall = time.monotonic() - started
        exporter_cpu = process_cpu_s(exporter.proc.pid) - exporter_before
        by_iostat = iostat_rates(iostat)
        fio.wait(60)
    finally:
        exporter.stop()
        subprocess.run(["losetup", "-d", device], check=False)
        shutil.rmtree(scratch, ignore_errors=True)

    ours = [row["write_mbps"] for row in remote.rates() if row.get("write_mbps") is not None]
    scrape_cpu = remote.cpu_seconds + exporter_cpu
    print(f"cluster telemetry: {seconds} s at 1 s, device {name} (loop, fio --rate=50m), {os.cpu_count()} CPUs")
    print(f"  {'path':<46} {'CPU s':>8} {'% of a core':>11}")
    for label, cpu in ((f"node_exporter {exporter.url} (its process)", exporter_cpu),
                       ("storbench scraping it (Collector thread)", remote.cpu_seconds),
                       ("  scrape path, per node", scrape_cpu),
                       ("storbench local /proc collector (peer)", local.cpu_seconds)):
        print(f"  {label:<46} {cpu:>8.4f} {100 * cpu / wall:>10.3f}%")
    print(f"  scrape path / local collector CPU: {scrape_cpu / local.cpu_seconds:.2f}x; "
          f"goal <= 1% of a core per node: {'met' if 100 * scrape_cpu / wall <= 1 else 'MISSED'}")
    mean_ours, mean_iostat = sum(ours) / len(ours), sum(by_iostat) / len(by_iostat)
    diff = 100 * (mean_ours - mean_iostat) / mean_iostat
    print(f"  write MB/s, mean over the run: storbench via node_exporter {mean_ours:.2f} ({len(ours)} intervals), "
          f"iostat -x {mean_iostat:.2f} ({len(by_iostat)} reports): {diff:+.2f}%; goal within 2%: "
          f"{'met' if abs(diff) <= 2 else 'MISSED'}")


if __name__ == "__main__":
    main()
