"""fio wrapper overhead: storbench's fio workloads vs the same job files run by fio alone.

Named peer: fio itself, on the same filesystem, with the very job files storbench wrote
(taken from the run's artifacts.json, paths moved to a fresh directory; read jobs get
their files laid out first, untimed, as storbench does). Three figures, per workload:

1. wrapper inside the timed window: the workload's ``completion_time`` (its
   ``ctx.measure()`` window) vs the wall time of the fio process it ran (spawn to exit,
   from the same run) — what storbench adds to a timed measurement;
2. timed window vs fio alone: the same job file run by fio from a bare script;
3. whole CLI (``storbench run fio-basic --scale tiny``: interpreter start, imports,
   probes, layout of read files, telemetry, results and report) vs the sum of the
   fio-alone runs — what a user waits for beyond fio.

    .venv/bin/python benchmarks/fio_wrapper_overhead.py [--target DIR] [--repeat 3] [--suite fio-basic]
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

from peers import run_cli  # benchmarks/ is on sys.path when run as a script

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))


def storbench_run(home: Path, target: Path, suite: str, scale: str) -> tuple[float, dict, list[dict], dict]:
    outcome, wall = run_cli(home, "run", suite, "--scale", scale, "--target", str(target))
    run_dir = Path(outcome["path"])
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines() if line.strip()]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    artifacts = json.loads((run_dir / "artifacts.json").read_text())["fio"]
    return wall, manifest, samples, artifacts


def fio_alone(job_text: str, old_root: str, new_root: Path, name: str) -> float:
    """Wall time of ``fio --output-format=json JOBFILE`` on the same job, moved to ``new_root``."""
    text = job_text.replace(old_root, str(new_root))
    (new_root / name / "logs-1").mkdir(parents=True, exist_ok=True)
    job = new_root / name / f"{name}.fio"
    job.write_text(text)
    if "rw=read" in text or "rw=randread" in text:  # lay the files out first, untimed, as storbench does
        layout = new_root / name / "layout.fio"
        layout.write_text(text.replace("[global]", "[global]\ncreate_only=1", 1))
        subprocess.run(["fio", "--output-format=json", f"--output={new_root / name / 'layout.json'}", str(layout)],
                       check=True, capture_output=True)
    started = time.monotonic()
    subprocess.run(["fio", "--output-format=json", f"--output={new_root / name / 'out.json'}", str(job)],
                   check=True, capture_output=True, cwd=str(job.parent))
    return time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", help="directory on the filesystem to test (default: a temp dir under /var/tmp)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--suite", default="fio-basic")
    parser.add_argument("--scale", default="tiny")
    args = parser.parse_args()
    base = Path(args.target) if args.target else Path(tempfile.mkdtemp(prefix="fio-overhead-", dir="/var/tmp"))
    base.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="fio-overhead-home-"))
    inside: dict[str, list[float]] = {}  # window - fio process wall, same run
    windows: dict[str, list[float]] = {}
    walls: dict[str, list[float]] = {}  # fio process wall inside storbench
    alone: dict[str, list[float]] = {}
    cli_walls, alone_totals = [], []
    version = ""
    try:
        for repetition in range(args.repeat):
            cli_wall, manifest, samples, artifacts = storbench_run(home, base / f"sb-{repetition}", args.suite,
                                                                   args.scale)
            version = artifacts["version"]
            old_root = f"{base / f'sb-{repetition}'}/storbench-{manifest['run_id']}"
            alone_root = base / f"alone-{repetition}"
            total_alone = 0.0
            for name, record in artifacts["workloads"].items():
                window = next(s["value"] for s in samples if s["workload"] == name and s["metric"] == "completion_time")
                fio_wall = record["runs"][0]["fio_wall_s"]
                windows.setdefault(name, []).append(window)
                walls.setdefault(name, []).append(fio_wall)
                inside.setdefault(name, []).append(window - fio_wall)
                seconds = fio_alone(record["job_file"], old_root, alone_root, name)
                alone.setdefault(name, []).append(seconds)
                total_alone += seconds
            cli_walls.append(cli_wall)
            alone_totals.append(total_alone)
            shutil.rmtree(alone_root, ignore_errors=True)
    finally:
        shutil.rmtree(home, ignore_errors=True)
        if not args.target:
            shutil.rmtree(base, ignore_errors=True)

    med = statistics.median
    print(f"{version}, suite {args.suite} --scale {args.scale}, {args.repeat} repetition(s), target on {base}")
    print("medians; 'added' is storbench's time beyond fio's\n")
    print(f"{'workload':<15}{'window s':>10}{'fio in sb s':>13}{'added ms':>10}{'added %':>9}"
          f"{'fio alone s':>13}{'window/alone':>14}")
    for name in windows:
        added = med(inside[name])
        print(f"{name:<15}{med(windows[name]):>10.3f}{med(walls[name]):>13.3f}{added * 1000:>10.2f}"
              f"{100 * added / med(walls[name]):>8.2f}%{med(alone[name]):>13.3f}"
              f"{med(windows[name]) / med(alone[name]):>14.4f}")
    cli, total = med(cli_walls), med(alone_totals)
    print(f"\nwhole CLI wall {cli:.2f} s vs fio alone (sum of the {len(windows)} jobs) {total:.2f} s: "
          f"ratio {cli / total:.3f} ({100 * (cli / total - 1):+.1f}%), i.e. {cli - total:.2f} s of start-up, "
          f"engine probes, untimed file layout (prepare), telemetry and results")
    print(f"CLI walls: {', '.join(f'{w:.2f}' for w in cli_walls)} s; fio-alone sums: "
          f"{', '.join(f'{t:.2f}' for t in alone_totals)} s")


if __name__ == "__main__":
    main()
