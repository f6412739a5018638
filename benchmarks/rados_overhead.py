"""rados bench wrapper overhead, and fio's rados engine vs rados bench, on the same pool of a real Ceph.

Three sides per round, the order rotated each round (benchmarks/harness.py), on one cluster and pool:

- **storbench**: ``storbench run rados-004 --set driver=rados`` as its own process: rados bench write,
  seq and rand of 4 MB objects with 16 concurrent operations, SECONDS each, with its checks, telemetry,
  the cache drop before each read phase, the cleanup of its objects and the results written.
- **bare**: the same ``rados bench`` commands (same arguments, ``--max-objects`` cap included) in a bash
  script, as a careful user would run them by hand: write, then before each read phase the same cache
  drop (``ceph tell osd.* cache drop`` and, on storbench's own cluster, the OSD files out of the page
  cache with ``dd iflag=nocache``), then ``rados cleanup`` of its objects.
- **fio**: ``storbench run rados-004 --set driver=fio``: fio's rados engine, same pool, threads, object
  size and duration, same window rules (storbench applies them to both drivers).

Figures, both sides of each in one scope:

- whole process (spawn to exit of the storbench CLI and of the bash script; both write then read cold
  and clean up): the ratio, and the seconds storbench adds (positive or negative: its overhead);
- per phase on rados bench's own clock ("Total time run", the bandwidth it prints): storbench's recorded
  bandwidth over the bare script's, i.e. whether wrapping rados bench changes what it measures;
- per phase, fio's rados engine over rados bench (storbench's recorded bandwidth, each tool's own clock).

Issue 7 asked for these figures without a goal: every verdict line is "no goal: reported".

--quick runs 1 s phases and leaves the fio side out (three sides would take the smoke run past a minute).

    .venv/bin/python benchmarks/rados_overhead.py [--rounds 3] [--seconds 5] [--quick]
        [--service-home HOME | --conf CEPH_CONF --pool POOL]

Without --service-home or --conf it starts its own cluster (`services up ceph`, BlueStore on a file) in a
temporary results home and stops it at the end. With --service-home the storbench runs are recorded in
that home (the target is the cluster recorded there, so both sides evict its OSD files alike).
"""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

from harness import parser, ratios, rotated, scope, service, spread, verdict  # noqa: E402 (sets sys.path)
from peers import run_cli  # noqa: E402
from storbench.engines import rados, rados_output  # noqa: E402
from storbench.workloads.rados_bench import FILL_SHARE  # noqa: E402

PHASES = {"rados-bench-write": "write", "rados-bench-seq": "seq", "rados-bench-rand": "rand"}
THREADS, OBJECT_SIZE = 16, 4 << 20  # rados-004's own parameters


def storbench_side(home: Path, target: str, seconds: int, driver: str) -> dict:
    """One `storbench run rados-004` process: its wall time and, per phase, the bandwidth it recorded (MB/s,
    over the tool's own clock)."""
    outcome, wall = run_cli(
        home,
        "run",
        "rados-004",
        "--scale",
        str(seconds),
        "--target",
        target,
        "--label",
        f"overhead-{driver}",
        "--set",
        f"driver={driver}",
    )
    run_dir = Path(outcome["path"])
    bw = {}
    for line in (run_dir / "samples.jsonl").read_text().splitlines():
        sample = json.loads(line) if line.strip() else {}
        if sample.get("metric") == "rados_bw_mbps" and not sample.get("labels"):
            bw[sample["workload"]] = sample["value"]
    missing = [phase for phase in PHASES if bw.get(phase) is None]
    if missing:
        sys.exit(f"storbench run {outcome['run_id']}: no bandwidth recorded for {', '.join(missing)}")
    return {"wall": wall, "bw": bw}


def bare_script(
    cluster: rados.Cluster, seconds: int, cap: int | None, run_name: str, osd_dirs: list[str], out: Path
) -> str:
    """The bash script of the bare side: rados bench's three phases, the same cache drop before each read
    phase, the cleanup of what the write left. Each phase's output goes to OUT/PHASE.txt."""
    drop = [rados.ceph_binary(), "-c", cluster.conf, "--connect-timeout", "60", "tell", "osd.*", "cache", "drop"]
    lines = ["set -e"]
    for phase, mode in PHASES.items():
        if mode != "write":
            # the OSDs may refuse (memstore): storbench then goes on warm, and so does this
            lines.append(f"{shlex.join(drop)} >/dev/null 2>&1 || true")
            if osd_dirs:
                lines.append(
                    f"find {shlex.join(osd_dirs)} -type f -exec sync -- {{}} + "
                    f"-exec dd if={{}} iflag=nocache count=0 status=none \\;"
                )
        argv = cluster.bench_argv(mode, seconds, THREADS, run_name, OBJECT_SIZE, OBJECT_SIZE, cap)
        lines.append(f"{shlex.join(argv)} > {shlex.quote(str(out / phase))}.txt")
    lines.append(f"{shlex.join(cluster.rados_argv('cleanup', '--run-name', run_name))} >/dev/null")
    return "\n".join(lines) + "\n"


def bare_side(
    cluster: rados.Cluster, seconds: int, cap: int | None, osd_dirs: list[str], work: Path, round_: int
) -> dict:
    """The bare script as one process timed from spawn to exit; per phase rados bench's own bandwidth."""
    out = work / f"bare-{round_}"
    out.mkdir()
    script = out / "bare.sh"
    script.write_text(
        bare_script(cluster, seconds, cap, f"overhead-bare-{round_}-{time.monotonic_ns()}", osd_dirs, out)
    )
    started = time.monotonic()
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True)
    wall = time.monotonic() - started
    if done.returncode != 0:
        sys.exit(f"the bare rados bench script failed (exit {done.returncode}): {done.stderr.strip()[-300:]}")
    bw = {}
    for phase in PHASES:
        summary = rados_output.parse_bench((out / f"{phase}.txt").read_text()).summary
        if summary.get("bw_mibps") is None:
            sys.exit(f"the bare rados bench {phase} printed no bandwidth (see {out / phase}.txt)")
        bw[phase] = summary["bw_mibps"] * rados_output.MIB_TO_MB
    return {"wall": wall, "bw": bw}


def main() -> int:
    p = parser(__doc__)
    p.add_argument(
        "--seconds", type=int, default=None, help="seconds per phase (rados-004 --scale; default 5, --quick 1)"
    )
    p.add_argument("--conf", help="an existing cluster's ceph.conf (its hosts' page caches are left alone)")
    p.add_argument("--pool", default=None, help="the pool (default: the service's, or storbench)")
    args = p.parse_args()
    if args.conf and args.service_home:
        p.error("--conf and --service-home name two clusters; give one")
    seconds = args.seconds or (1 if args.quick else 5)
    work = Path(tempfile.mkdtemp(prefix="rados-overhead-", dir="/var/tmp"))
    own_home = work / "home"
    cluster_cm = nullcontext(None) if args.conf else service("ceph", own_home, args.service_home)
    try:
        with cluster_cm as state:
            if state is None:  # a foreign cluster: its conf in the URL, no OSD files of ours to evict
                home, conf, pool, osd_dirs = own_home, args.conf, args.pool or "storbench", []
                target = f"rados://{pool}?conf={conf}"
            else:
                home = args.service_home or own_home
                conf, pool, osd_dirs = state["conf"], args.pool or state["pool"], list(state.get("osd_dirs", []))
                target = f"rados://{pool}"
            cluster = rados.Cluster(conf, pool)
            avail = cluster.max_avail()
            cap = int(avail * FILL_SHARE) // OBJECT_SIZE if avail else None  # the write's cap, as storbench's
            scope(
                f"storbench run rados-004 (rados bench write, seq, rand, {seconds} s each, then cleanup) vs the "
                f"same rados bench commands in a bare bash script"
                + ("" if args.quick else "; and storbench driver=fio vs driver=rados")
                + f" (pool {pool})",
                peer=f"rados bench alone ({rados.rados_version()})" + ("" if args.quick else "; fio's rados engine"),
                parallelism=f"{THREADS} concurrent operations of 4 MB on every side, one client process at a time",
                startup="whole process: inside for both (spawn to exit: storbench's Python CLI with its checks, "
                "telemetry, results; bash and each rados start); per phase: outside for both (the "
                "tool's own clock)",
                cache="writes durable on RADOS ack; before each read phase both sides drop the OSD caches"
                + (" and evict the OSD files from the page cache" if osd_dirs else ""),
                clock="time.monotonic from spawn to exit for the whole process; rados bench's 'Total time "
                "run' and fio's runtime per phase",
            )
            sides = {
                "storbench": lambda k: storbench_side(home, target, seconds, "rados"),
                "bare": lambda k: bare_side(cluster, seconds, cap, osd_dirs, work, k),
            }
            if not args.quick:  # a third side would take the smoke run past its minute
                sides["fio"] = lambda k: storbench_side(home, target, seconds, "fio")
            results = rotated(sides, args.rounds)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    ours, bare, fio = results["storbench"], results["bare"], results.get("fio")
    for k in range(args.rounds):
        print(
            f"round {k + 1}: whole process storbench {ours[k]['wall']:.2f} s, bare {bare[k]['wall']:.2f} s; "
            + "; ".join(
                f"{mode} MB/s storbench {ours[k]['bw'][ph]:.0f} bare {bare[k]['bw'][ph]:.0f}"
                + (f" fio {fio[k]['bw'][ph]:.0f}" if fio else "")
                for ph, mode in PHASES.items()
            ),
            flush=True,
        )
    walls = ([r["wall"] for r in ours], [r["wall"] for r in bare])
    verdict("whole process, storbench run / bare rados bench script (time)", ratios(*walls), goal=None)
    verdict("whole process, seconds storbench adds", spread([o - b for o, b in zip(*walls)]), goal=None, unit="s")
    for phase in PHASES:
        verdict(
            f"{phase} bandwidth on rados bench's own clock, storbench / bare",
            ratios([r["bw"][phase] for r in ours], [r["bw"][phase] for r in bare]),
            goal=None,
        )
    for phase in PHASES if fio else ():
        verdict(
            f"{phase} bandwidth, fio's rados engine / rados bench (each tool's own clock)",
            ratios([r["bw"][phase] for r in fio], [r["bw"][phase] for r in ours]),
            goal=None,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
