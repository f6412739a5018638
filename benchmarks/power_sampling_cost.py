"""The power sampling path's own CPU at 1 s, per source, against the local collector alone.

For each source, a ``PowerSampler`` runs at the interval for ``--seconds`` and we count its thread's
CPU (``PowerSampler.cpu_seconds``) plus, for sources that run a tool (command, ipmi), the children's
CPU (``RUSAGE_CHILDREN``): what the node pays. The local /proc collector is measured the same way.
Goal: under 0.5% of a core per source.

Sources here: ``redfish`` against a real sushy-static serving the tests' mockup (the BMC's own CPU is
not the node's and is left out), ``command`` (``echo 50``), ``rapl`` over the tests' powercap tree
(this machine has no powercap), and ``ipmi`` as it costs here: this machine has no BMC, so each tick
is ipmitool failing to open /dev/ipmi0 (a gap), which still spawns the tool.

    .venv/bin/python benchmarks/power_sampling_cost.py [--seconds 10] [--interval 1]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from storbench.telemetry import Collector  # noqa: E402
from storbench.telemetry.power import ALLOWED, KINDS, PowerSampler  # noqa: E402
from storbench.telemetry.power.base import parse_spec  # noqa: E402
from storbench.telemetry.power.rapl import RaplPower  # noqa: E402
from tests.telemetry.redfish_server import start_bmc  # noqa: E402
from tests.telemetry.test_power_parsing import _powercap  # noqa: E402


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(name: str, start, stop, cpu, seconds: float) -> dict:
    before_children = children_cpu()
    began = time.monotonic()
    start()
    time.sleep(seconds)
    stop()
    wall = time.monotonic() - began
    own, children = cpu(), children_cpu() - before_children
    return {"source": name, "wall_s": wall, "thread_cpu_s": own, "children_cpu_s": children,
            "pct_of_core": 100 * (own + children) / wall}


def sampler_row(name: str, source, interval: float, seconds: float) -> dict:
    sampler = PowerSampler(source, interval)
    row = measure(name, sampler.start, sampler.stop, lambda: sampler.cpu_seconds, seconds)
    row["readings"], row["gaps"] = len(sampler.points()), len(sampler.gaps())
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--interval", type=float, default=1.0)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="storbench-power-bench-"))
    rows = []
    try:
        collector = Collector([], interval=args.interval)
        rows.append(measure("local collector alone", collector.start, collector.stop,
                            lambda: collector.cpu_seconds, args.seconds))
        bmc = start_bmc(work)
        try:
            spec = parse_spec(f"redfish:{bmc.chassis}", "--power", ALLOWED)
            rows.append(sampler_row("redfish (sushy-static)", KINDS["redfish"](spec), args.interval, args.seconds))
        finally:
            bmc.stop()
        rows.append(sampler_row("command (echo 50)", KINDS["command"](parse_spec("command:echo 50", "--power",
                                                                                  ALLOWED)),
                                args.interval, args.seconds))
        _powercap(work / "sys", "powercap-linux-6.1-rapl-before.txt")
        rows.append(sampler_row("rapl (powercap tree)", RaplPower(parse_spec("rapl", "--power", ALLOWED),
                                                                  sys_root=str(work / "sys")),
                                args.interval, args.seconds))
        if shutil.which("ipmitool"):
            rows.append(sampler_row("ipmi (no BMC: failing call)", KINDS["ipmi"](parse_spec("ipmi", "--power",
                                                                                           ALLOWED)),
                                    args.interval, args.seconds))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"interval {args.interval:g} s, {args.seconds:g} s per source; goal < 0.5% of a core")
    print(f"{'source':32} {'thread CPU s':>12} {'children s':>10} {'% core':>7} {'readings':>8} {'gaps':>4}")
    for row in rows:
        print(f"{row['source']:32} {row['thread_cpu_s']:12.4f} {row['children_cpu_s']:10.4f} "
              f"{row['pct_of_core']:7.3f} {row.get('readings', ''):>8} {row.get('gaps', ''):>4}")


if __name__ == "__main__":
    main()
