"""rados bench wrapper overhead, and fio's rados engine vs rados bench, on the same pool of a real Ceph.

Named peers, measured in the same script on the same cluster and pool:

1. ``rados bench`` alone: the exact commands storbench ran (from the run's
   artifacts.json, with a fresh ``--run-name``), write then seq then rand, timed from a
   bare script. Figures per phase: what storbench adds inside its timed window (window
   minus the rados process's own wall time, same run), the window vs rados alone, the
   bandwidth storbench reports vs the bandwidth rados alone printed, and the whole CLI
   (`storbench run rados-004`: start-up, cluster checks, telemetry, cleanup, results)
   vs the sum of the three rados-alone runs.
2. fio's ``rados`` engine vs ``rados bench``: `storbench run rados-004 --set driver=fio`
   against `--set driver=rados` on the same pool, same duration, threads and 4 MB
   objects; ratio of bandwidth and average IOPS per phase.

Runs alternate (storbench, rados alone, storbench with fio) so drift hits all alike.

    .venv/bin/python benchmarks/rados_overhead.py [--repeat 3] [--seconds 5] [--conf CEPH_CONF --pool POOL]

Without --conf it starts its own cluster (`services up ceph`, BlueStore on a file) in a
temporary results home and stops it at the end.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from peers import run_cli  # noqa: E402  (benchmarks/ is on sys.path as a script)
from storbench import api  # noqa: E402
from storbench.engines.rados import MIB_TO_MB, parse_bench  # noqa: E402
from storbench.results.store import ResultStore  # noqa: E402

PHASES = ("rados-bench-write", "rados-bench-seq", "rados-bench-rand")


def storbench_run(home: Path, target: str, seconds: int, driver: str) -> tuple[float, dict, dict]:
    outcome, wall = run_cli(home, "run", "rados-004", "--scale", str(seconds), "--target", target,
                            "--label", driver, "--set", f"driver={driver}")
    run_dir = Path(outcome["path"])
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines() if line.strip()]
    figures: dict[str, dict[str, float]] = {}
    for s in samples:
        figures.setdefault(s["workload"], {})[s["metric"]] = s["value"]
    artifacts = json.loads((run_dir / "artifacts.json").read_text())["rados"]
    return wall, figures, artifacts


def rados_alone(artifacts: dict, run_name: str) -> dict[str, tuple[float, float]]:
    """The same three commands with a fresh run name: phase -> (wall s, bandwidth MB/s)."""
    out = {}
    for phase in PHASES:
        command = list(artifacts["workloads"][phase]["runs"][0]["command"])
        command[command.index("--run-name") + 1] = run_name
        started = time.monotonic()
        done = subprocess.run(command, capture_output=True, text=True)
        wall = time.monotonic() - started
        if done.returncode != 0:
            sys.exit(f"rados bench {phase} alone failed: {done.stderr.strip()[-300:]}")
        out[phase] = (wall, parse_bench(done.stdout).summary["bw_mibps"] * MIB_TO_MB)
    cleanup = list(artifacts["workloads"]["rados-bench-write"]["runs"][0]["command"])
    bench = cleanup.index("bench")
    subprocess.run(cleanup[:bench] + ["cleanup", "--run-name", run_name], check=True, capture_output=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5, help="seconds per phase (rados-004 --scale)")
    parser.add_argument("--conf", help="an existing cluster's ceph.conf (default: start storbench's own)")
    parser.add_argument("--pool", default="storbench")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="rados-overhead-home-", dir="/var/tmp"))
    store = ResultStore(home)
    own = args.conf is None
    try:
        if own:
            state = api.service_up("ceph", store)
            conf = state["conf"]
            target = f"rados://{args.pool}"
        else:
            conf = args.conf
            target = f"rados://{args.pool}?conf={conf}"
        med = statistics.median
        windows, inside, alone_wall, sb_bw, alone_bw = ({p: [] for p in PHASES} for _ in range(5))
        fio_bw, fio_iops, rados_iops = ({p: [] for p in PHASES} for _ in range(3))
        cli_walls, alone_sums = [], []
        version = ""
        for repetition in range(args.repeat):
            wall, figures, artifacts = storbench_run(home, target, args.seconds, "rados")
            version = artifacts["version"]
            alone = rados_alone(artifacts, f"overhead-alone-{repetition}")
            for phase in PHASES:
                window = figures[phase]["completion_time"]
                windows[phase].append(window)
                inside[phase].append(window - artifacts["workloads"][phase]["runs"][0]["wall_s"])
                alone_wall[phase].append(alone[phase][0])
                sb_bw[phase].append(figures[phase]["rados_bw_mbps"])
                alone_bw[phase].append(alone[phase][1])
                rados_iops[phase].append(figures[phase]["rados_avg_iops"])
            cli_walls.append(wall)
            alone_sums.append(sum(w for w, _ in alone.values()))
            _, fio_figures, _ = storbench_run(home, target, args.seconds, "fio")
            for phase in PHASES:
                fio_bw[phase].append(fio_figures[phase]["rados_bw_mbps"])
                fio_iops[phase].append(fio_figures[phase]["rados_avg_iops"])
    finally:
        if own:
            api.service_down("ceph", store)
        shutil.rmtree(home, ignore_errors=True)

    print(f"{version}; pool {args.pool} on {'storbench services up ceph (BlueStore on a file)' if own else conf}; "
          f"{args.seconds} s per phase, 4 MB objects, 16 threads; {args.repeat} repetition(s); medians")
    print("\n1. storbench's rados-bench wrapper vs rados bench alone (same commands, same pool)")
    print(f"{'phase':<19}{'window s':>9}{'added ms':>10}{'alone s':>9}{'window/alone':>13}"
          f"{'sb MB/s':>9}{'alone MB/s':>11}{'sb/alone':>9}")
    for phase in PHASES:
        print(f"{phase:<19}{med(windows[phase]):>9.3f}{med(inside[phase]) * 1000:>10.1f}{med(alone_wall[phase]):>9.3f}"
              f"{med(windows[phase]) / med(alone_wall[phase]):>13.4f}{med(sb_bw[phase]):>9.0f}"
              f"{med(alone_bw[phase]):>11.0f}{med(sb_bw[phase]) / med(alone_bw[phase]):>9.3f}")
    cli, total = med(cli_walls), med(alone_sums)
    print(f"whole CLI {cli:.2f} s vs rados alone (3 phases) {total:.2f} s: ratio {cli / total:.3f}, "
          f"{cli - total:.2f} s of start-up, cluster checks, telemetry, cleanup and results")
    print("\n2. fio's rados engine vs rados bench (storbench driver=fio vs driver=rados, same pool)")
    print(f"{'phase':<19}{'rados MB/s':>11}{'fio MB/s':>10}{'fio/rados':>10}{'rados IOPS':>11}{'fio IOPS':>10}")
    for phase in PHASES:
        print(f"{phase:<19}{med(sb_bw[phase]):>11.0f}{med(fio_bw[phase]):>10.0f}"
              f"{med(fio_bw[phase]) / med(sb_bw[phase]):>10.3f}{med(rados_iops[phase]):>11.0f}"
              f"{med(fio_iops[phase]):>10.0f}")
    print(f"\nper repetition, write MB/s rados: {', '.join(f'{v:.0f}' for v in sb_bw[PHASES[0]])}; "
          f"fio: {', '.join(f'{v:.0f}' for v in fio_bw[PHASES[0]])}; alone: "
          f"{', '.join(f'{v:.0f}' for v in alone_bw[PHASES[0]])}")


if __name__ == "__main__":
    main()
