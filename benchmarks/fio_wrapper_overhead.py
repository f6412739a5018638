"""fio wrapper overhead: storbench's fio workloads vs the same job files run by fio alone.

Named peer: fio itself, on the same filesystem, with the very job files storbench wrote (taken
from storbench's latest run's artifacts.json, paths moved to a fresh directory). Both sides do
the same work in the same order: per workload, lay its files out (untimed: fio ``create_only=1``,
as storbench's prepare does for reads and writes alike), then run the job; at the end the data
files go. The two sides alternate, the order rotated round by round. Three figures per round:

1. inside the timed window: the workloads' ``completion_time`` (their ``ctx.measure()`` windows)
   over the wall time of the fio processes they ran (spawn to exit, same run): what storbench adds
   to a timed measurement, its flush (a syncfs after write jobs) included; goal (issue 4): wrapper
   overhead under 2%;
2. timed window vs fio alone: the same windows over the same job files' fio processes (spawn to
   exit) run bare, files laid out just before as storbench does, and where storbench's window ended
   with a syncfs of the target's filesystem (its ``flush`` parameter, on by default for writes), the
   bare timer ends after the same syncfs; goal: under 2% too;
3. whole run: the ``storbench run`` CLI (interpreter start, imports, probes, layouts, telemetry,
   results, data removal) over fio alone doing the same layouts, jobs and removal back to back.
   Reported, no goal: this is what a user waits for beyond fio.

    .venv/bin/python benchmarks/fio_wrapper_overhead.py [--target DIR] [--rounds 3] [--suite fio-basic]
        [--scale tiny] [--quick]
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import parser, ratios, rotated, scope, verdict  # noqa: E402
from peers import run_cli  # noqa: E402

from storbench.targets.base import syncfs  # noqa: E402

STORBENCH, FIO = "storbench", "fio alone"
# --quick: fio-basic's sequential pair only, each job moving 4 MiB (not time based)
QUICK_SUITE = """name: fio-wrapper-quick
description: fio-basic's sequential write and read at 4 MiB per job, for a smoke run.
repetitions: 1
default_scale: tiny
scale_parameter: size
scales:
  tiny: {size: 4m, runtime_s: 0, ramp_time_s: 0}
params: {numjobs: 1, iodepth: 16, ioengine: libaio, direct: true}
workloads:
  - {workload: fio-write, params: {bs: 1m}}
  - {workload: fio-read, params: {bs: 1m}}
"""


@dataclass
class Round:
    whole_s: float  # the storbench CLI, or fio alone's layouts + jobs + removal
    jobs_s: dict[str, float]  # per workload: storbench's window, or the bare fio process's wall
    fio_in_storbench_s: dict[str, float] | None = None  # the fio process walls inside storbench's windows


class Bench:
    """Both sides of a round; the peer replays the job files of storbench's latest run."""

    def __init__(self, base: Path, home: Path, suite: str, scale: str):
        self.base, self.home, self.suite, self.scale = base, home, suite, scale
        self.jobs: dict[str, str] = {}  # workload -> job file text, in run order
        self.flushed: set[str] = set()  # workloads whose window ended with a syncfs (the flush parameter)
        self.old_root = ""
        self.version = ""

    def storbench(self, k: int) -> Round:
        target = self.base / f"sb-{k}"
        outcome, wall = run_cli(self.home, "run", self.suite, "--scale", self.scale, "--target", str(target))
        run_dir = Path(outcome["path"])
        samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines() if line.strip()]
        manifest = json.loads((run_dir / "manifest.json").read_text())
        artifacts = json.loads((run_dir / "artifacts.json").read_text())["fio"]
        self.version, self.old_root = artifacts["version"], manifest["config"]["run_root"].removeprefix("file://")
        rules = manifest.get("window_rules") or {}
        self.flushed = {name for name, rule in rules.items() if rule.get("flush") == "syncfs"}
        windows, walls = {}, {}
        for name, record in artifacts["workloads"].items():
            self.jobs[name] = record["job_file"]
            windows[name] = next(
                s["value"] for s in samples if s["workload"] == name and s["metric"] == "completion_time"
            )
            walls[name] = record["runs"][0]["fio_wall_s"]
        shutil.rmtree(target, ignore_errors=True)
        return Round(wall, windows, walls)

    def fio_alone(self, k: int) -> Round:
        if not self.jobs:
            raise RuntimeError("fio alone needs storbench's job files: storbench runs first in round 1")
        root = self.base / f"alone-{k}"
        jobs = {}
        started = time.monotonic()
        for name, text in self.jobs.items():
            workdir = root / name
            (workdir / "logs-1").mkdir(parents=True)
            text = text.replace(self.old_root, str(root))
            layout, job = workdir / f"{name}-layout.fio", workdir / f"{name}.fio"
            layout.write_text(text.replace("[global]", "[global]\ncreate_only=1", 1))
            job.write_text(text)
            fio(layout, workdir / f"{name}-layout.json")  # untimed, as storbench's prepare
            began = time.monotonic()
            fio(job, workdir / f"{name}-1.json")
            if name in self.flushed:  # storbench's window ended with this syncfs: so does this one
                syncfs(workdir)
            jobs[name] = time.monotonic() - began
        shutil.rmtree(root)
        return Round(time.monotonic() - started, jobs)


def fio(job: Path, output: Path) -> None:
    """fio as storbench's engine runs it: JSON to a file, in the job file's directory."""
    subprocess.run(
        ["fio", "--output-format=json", f"--output={output}", str(job)],
        check=True,
        capture_output=True,
        cwd=str(job.parent),
    )


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--target", help="directory on the filesystem to test (default: a temp dir under /var/tmp)")
    p.add_argument("--suite", default="fio-basic")
    p.add_argument("--scale", default="tiny")
    args = p.parse_args()
    base = Path(tempfile.mkdtemp(prefix="fio-overhead-", dir=args.target or "/var/tmp"))
    home = Path(tempfile.mkdtemp(prefix="fio-overhead-home-"))
    suite, shown = args.suite, args.suite
    if args.quick:
        (home / "quick.yaml").write_text(QUICK_SUITE)
        suite, shown = str(home / "quick.yaml"), "fio-write + fio-read of fio-basic, 4 MiB per job"
    bench = Bench(base, home, suite, "tiny" if args.quick else args.scale)
    scope(
        f"storbench run {shown} --scale {bench.scale} vs the "
        f"same job files run by fio alone, on {base}; per workload: untimed create_only layout, then the job; "
        f"data removed at the end (both sides)",
        peer="fio alone (the same binary and job files, JSON output to a file, cwd the job's directory)",
        parallelism="the suite's jobs one after another on both sides (their numjobs/iodepth as written)",
        startup="windows and bare jobs: fio's own process start inside both, storbench's outside; whole: "
        "each side from nothing to done (storbench's interpreter start, probes, results inside)",
        cache="fresh files laid out just before each job on both sides; the suite's direct=1; after each "
        "write job, a syncfs of the target's filesystem inside both timers (storbench's flush)",
        clock="time.monotonic: storbench's ctx.measure() window and its fio spawn-to-exit; here, the bare "
        "fio's spawn-to-exit and the whole CLI / whole bare sequence",
    )
    try:
        results = rotated({STORBENCH: bench.storbench, FIO: bench.fio_alone}, args.rounds)
    finally:
        shutil.rmtree(home, ignore_errors=True)
        shutil.rmtree(base, ignore_errors=True)

    ours, alone = results[STORBENCH], results[FIO]
    print(
        f"{bench.version}; a syncfs ended the windows of: {', '.join(sorted(bench.flushed)) or 'none'}; "
        f"per round, seconds (window | fio inside storbench | fio alone):"
    )
    for k, (sb, bare) in enumerate(zip(ours, alone)):
        cells = [
            f"{name} {sb.jobs_s[name]:.3f} | {sb.fio_in_storbench_s[name]:.3f} | {bare.jobs_s[name]:.3f}"
            for name in sb.jobs_s
        ]
        print(f"  round {k + 1}: {'; '.join(cells)}; whole {sb.whole_s:.2f} vs {bare.whole_s:.2f}")
    windows = [sum(r.jobs_s.values()) for r in ours]
    verdict(
        "timed windows / fio processes inside them (same run)",
        ratios(windows, [sum(r.fio_in_storbench_s.values()) for r in ours]),
        goal=1.02,
        at_least=False,
    )
    verdict(
        "timed windows / fio alone on the same job files",
        ratios(windows, [sum(r.jobs_s.values()) for r in alone]),
        goal=1.02,
        at_least=False,
    )
    verdict(
        "whole storbench run / fio alone doing the same layouts, jobs and removal",
        ratios([r.whole_s for r in ours], [r.whole_s for r in alone]),
        goal=None,
    )


if __name__ == "__main__":
    main()
