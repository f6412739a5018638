"""The power sampling path's own CPU per source, as a share of a core at a 1 s interval: goal ≤ 0.5%.

Each side is one source sampled by a ``PowerSampler`` for ``--seconds``; its cost is the sampling thread's
CPU (``PowerSampler.cpu_seconds``) plus the CPU of the processes it ran (``RUSAGE_CHILDREN``, counted once
they are waited for: a persistent ipmitool session is, when the sampler stops). That CPU over the number of
readings is the cost of one reading; at a 1 s interval a core pays that every second, so the share of a core
at 1 s is 100 × CPU per reading / 1 s. (--quick samples every 0.1 s for 1 s and reports the same per-reading
figure; it is a smoke run, not a measurement.) The BMCs' own CPU is not the node's and is left out: they run
as a thread of this process or as a child never waited for before the end.

Sides: ``ipmi`` as storbench reads it (one ``ipmitool shell`` session for every reading) against the named
peer ``ipmi, one ipmitool per reading`` (storbench's IPMI path before issue 26: a process and a private -f
password file per reading), both the real ipmitool on its dummy interface against the same BMC answering
DCMI power readings (tests/ipmi_dummy.py; no machine here has a BMC); ``redfish`` against a real
sushy-static serving the tests' mockup; ``command`` (``echo 50``); ``rapl`` over the tests' powercap tree
(this machine has no powercap); and the local /proc collector alone, for reference.

Before issue 26 (closing note of issue 16, one ipmitool per reading): ipmi 3.54% of a core at 1 s.

    .venv/bin/python benchmarks/power_sampling_cost.py [--seconds 10] [--rounds 3] [--quick]
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT))

from harness import parser, ratios, rotated, scope, spread, verdict  # noqa: E402
from storbench.redaction import private_file  # noqa: E402
from storbench.telemetry import Collector  # noqa: E402
from storbench.telemetry.power import ALLOWED, KINDS, PowerSampler  # noqa: E402
from storbench.telemetry.power.base import PowerError, Reading, parse_spec  # noqa: E402
from storbench.telemetry.power.ipmi import IpmiPower, parse_dcmi  # noqa: E402
from storbench.telemetry.power.rapl import RaplPower  # noqa: E402
from tests.ipmi_dummy import DummyBmc  # noqa: E402

GOAL_PCT = 0.5
PASSWORD_ENV = "STORBENCH_BENCH_BMC_PASSWORD"


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class IpmiPerReading:
    """The peer: storbench's IPMI reader before issue 26, one ipmitool per reading with its own -f file."""

    kind, scope = "ipmi", "node-psu"

    def __init__(self, argv: list[str], password: str):
        self.argv, self.password = argv, password

    def read(self) -> Reading:
        with private_file(self.password, "ipmi-password") as path:
            done = subprocess.run(
                [*self.argv, "-f", str(path), "dcmi", "power", "reading"], capture_output=True, text=True, timeout=5
            )
        if done.returncode != 0:
            raise PowerError(f"ipmitool exited {done.returncode}: {done.stderr.strip()[:200]}")
        return Reading(watts=parse_dcmi(done.stdout))


def on_dummy(argv: list[str]) -> list[str]:
    """ipmitool's lanplus arguments with the dummy interface instead (the BMC of tests/ipmi_dummy.py)."""
    return [("dummy" if arg == "lanplus" else arg) for arg in argv]


def sample(make: Callable[[], Any], interval: float, seconds: float, bmc: DummyBmc) -> dict[str, float]:
    """One side for one round: CPU per reading (thread + waited children), the readings taken and the ipmitool
    processes the dummy BMC saw."""
    opened = bmc.connections
    source = make()
    sampler = PowerSampler(source, interval)
    before = children_cpu()
    sampler.start()
    time.sleep(seconds)
    sampler.stop()  # closes a persistent session: its process is waited for, its CPU counted
    readings, gaps = len(sampler.points()), len(sampler.gaps())
    if gaps or readings < 2:
        raise SystemExit(f"{source.kind}: {readings} readings, {gaps} gaps: {sampler.gaps()[:1]}")
    cpu = sampler.cpu_seconds + children_cpu() - before
    return {
        "cpu_s": cpu,
        "readings": readings,
        "pct_at_1s": 100 * cpu / readings / 1.0,
        "ipmitools": bmc.connections - opened,
    }


def collector_side(interval: float, seconds: float) -> dict[str, float]:
    collector = Collector([], interval=interval)
    collector.start()
    time.sleep(seconds)
    collector.stop()
    readings = len(collector.points())
    return {
        "cpu_s": collector.cpu_seconds,
        "readings": readings,
        "pct_at_1s": 100 * collector.cpu_seconds / readings,
        "ipmitools": 0,
    }


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--seconds", type=float, default=10.0, help="sampling time per side and round (default 10)")
    args = p.parse_args()
    interval, seconds = (0.1, 1.0) if args.quick else (1.0, args.seconds)
    work = Path(tempfile.mkdtemp(prefix="storbench-power-bench-"))
    dummy = DummyBmc(watts=231)
    os.environ["IPMI_DUMMY_SOCK"] = dummy.socket_path  # read by ipmitool's dummy interface
    os.environ[PASSWORD_ENV] = "bench-not-a-secret"
    lan = parse_spec(f"ipmi:10.0.0.9,user=admin,password_env={PASSWORD_ENV}", "--power", ALLOWED)

    def ipmi_session() -> IpmiPower:
        source = IpmiPower(lan, timeout=5)
        source.argv = on_dummy(source.argv)
        return source

    def ipmi_per_reading() -> IpmiPerReading:
        return IpmiPerReading(on_dummy(ipmi_session().argv), "bench-not-a-secret")

    from tests.telemetry.redfish_server import SUSHY, start_bmc
    from tests.telemetry.test_power_parsing import _powercap

    _powercap(work / "sys", "powercap-linux-6.1-rapl-before.txt")
    bmc = start_bmc(work) if Path(SUSHY).exists() else None
    sides: dict[str, Callable[[], Any]] = {
        "ipmi (one ipmitool shell session)": ipmi_session,
        "ipmi, one ipmitool per reading (before)": ipmi_per_reading,
        "command (echo 50)": lambda: KINDS["command"](parse_spec("command:echo 50", "--power", ALLOWED)),
        "rapl (powercap tree)": lambda: RaplPower(parse_spec("rapl", "--power", ALLOWED), sys_root=str(work / "sys")),
    }
    if bmc is not None:
        chassis = parse_spec(f"redfish:{bmc.chassis}", "--power", ALLOWED)
        sides["redfish (sushy-static)"] = lambda: KINDS["redfish"](chassis)
    scope(
        f"CPU per power reading (sampler thread + waited child processes) as % of a core at a 1 s interval; "
        f"{', '.join(sides)}; the local collector alone for reference; read every {interval:g} s for "
        f"{seconds:g} s per side and round",
        peer="ipmi, one ipmitool per reading (storbench's IPMI path before issue 26), the same ipmitool and BMC",
        parallelism="one sampler thread at a time",
        startup="session and process starts inside (they are the cost)",
        cache="BMCs in memory (dummy IPMI thread, sushy-static); their own CPU left out",
        clock="thread_time + RUSAGE_CHILDREN over the readings taken",
    )
    try:
        runs = {name: (lambda _k, make=make: sample(make, interval, seconds, dummy)) for name, make in sides.items()}
        runs["local collector alone"] = lambda _k: collector_side(interval, seconds)
        results = rotated(runs, args.rounds)
    finally:
        if bmc is not None:
            bmc.stop()
        dummy.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'source (medians over rounds)':42} {'CPU s':>8} {'readings':>8} {'ipmitools':>9} {'% core at 1 s':>13}")
    for name, rows in results.items():
        med = {key: spread([r[key] for r in rows]).median for key in rows[0]}
        print(f"{name:42} {med['cpu_s']:8.4f} {med['readings']:8.0f} {med['ipmitools']:9.0f} {med['pct_at_1s']:13.3f}")
    print("(a session's start is inside its figure, spread over one round's readings; a run's session lasts the run)")
    for name, rows in results.items():
        pct = spread([r["pct_at_1s"] for r in rows])
        before = "before" in name
        verdict(f"{name} % of a core at 1 s", pct, goal=None if before else GOAL_PCT, at_least=False, unit="%")
    ours = [r["pct_at_1s"] for r in results["ipmi (one ipmitool shell session)"]]
    peer = [r["pct_at_1s"] for r in results["ipmi, one ipmitool per reading (before)"]]
    verdict("ipmi CPU per reading, session over one ipmitool per reading", ratios(ours, peer), goal=None)


if __name__ == "__main__":
    main()
