"""storbench's teragen+terasort vs Hadoop's own TeraGen/TeraSort example jobs, like for like.

Named peer, measured in this run on the same machine, filesystem, size and output format:
hadoop-mapreduce-examples 3.4.2 TeraGen + TeraSort in MapReduce local mode with N map and N
reduce slots; storbench on Spark local[N] (N = the cores here, or --slots). Both write Hadoop's
100-byte record files (storbench's format=tera; --format parquet for storbench's Parquet), and
TeraSort gets as many reducers as storbench's terasort has partitions (equal output files).

Scope, the same on both sides: in-window, from job submission to the committed output (TeraSort:
from its "starting", so its key sampling counts, as storbench's does); JVM and Spark start-up,
classpath resolution and validation are outside. Hadoop's window comes from its own log lines
(log4j timestamps, ms). Hadoop's local mode runs TeraGen as one map whatever the slots
(LocalClientProtocolProvider sets mapreduce.job.maps=1): said in the output, not corrected.
Whole-process times (JVM start-up included) are printed beside, for reference.

    .venv/bin/python benchmarks/terasort_vs_hadoop.py [--size 500M] [--dir /var/tmp] [--slots N]
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import tempfile
import time
from datetime import datetime
from pathlib import Path

from peers import drop_written, run_suite  # noqa: E402  (benchmarks/ is on sys.path when run as a script)
from storbench.units import parse_count  # noqa: E402

PEER_POM = Path(__file__).resolve().parent / "hadoop-examples" / "pom.xml"
PARTITION_MB = 128
# Job submission, completion and TeraSort's own start/end, with millisecond timestamps
LOG4J = """log4j.rootLogger=WARN, out
log4j.logger.org.apache.hadoop.mapreduce.Job=INFO
log4j.logger.org.apache.hadoop.mapreduce.JobSubmitter=INFO
log4j.logger.org.apache.hadoop.examples.terasort.TeraSort=INFO
log4j.appender.out=org.apache.log4j.ConsoleAppender
log4j.appender.out.layout=org.apache.log4j.PatternLayout
log4j.appender.out.layout.ConversionPattern=%d{yyyy-MM-dd HH:mm:ss,SSS} %c{1}: %m%n
"""


def hadoop_classpath(work: Path) -> str:
    out = work / "hadoop.cp"
    subprocess.run(["mvn", "-q", "-B", "-f", str(PEER_POM), "dependency:build-classpath",
                    f"-Dmdep.outputFile={out}"], check=True, stdout=subprocess.DEVNULL)
    return out.read_text().strip()


def window_s(log: Path) -> float:
    """Seconds from the first submission/start line to the last completion line of a Hadoop job's log."""
    stamps = [datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f") for line in log.read_text().splitlines()
              if line[:4].isdigit() and any(mark in line for mark in (
                  "number of splits", "starting", "completed successfully", "TeraSort: done"))]
    if len(stamps) < 2:
        raise SystemExit(f"{log}: no job submission/completion lines to time Hadoop's window from")
    return (max(stamps) - min(stamps)).total_seconds()


def hadoop_run(work: Path, size: int, slots: int, reduces: int) -> dict[str, tuple[float, float]]:
    """Each phase's (in-window, whole-process) seconds."""
    cp = hadoop_classpath(work)
    (work / "log4j.properties").write_text(LOG4J)
    driver = ["java", "-Xmx2g", f"-Dlog4j.configuration=file:{work}/log4j.properties", "-cp", cp,
              "org.apache.hadoop.examples.ExampleDriver"]
    local = ["-D", "mapreduce.framework.name=local", "-D", "fs.defaultFS=file:///",
             "-D", f"mapreduce.job.maps={slots}", "-D", f"mapreduce.local.map.tasks.maximum={slots}",
             "-D", f"mapreduce.job.reduces={reduces}", "-D", f"mapreduce.local.reduce.tasks.maximum={slots}"]
    times = {}
    for phase, args in (("teragen", [str(size // 100), f"file://{work}/hadoop-in"]),
                        ("terasort", [f"file://{work}/hadoop-in", f"file://{work}/hadoop-out"])):
        drop_written(work)
        log = work / f"{phase}.log"
        started = time.monotonic()
        with open(log, "w") as handle:
            subprocess.run([*driver, phase, *local, *args], check=True, stdout=handle, stderr=subprocess.STDOUT)
        times[phase] = (window_s(log), time.monotonic() - started)
    shutil.rmtree(work / "hadoop-in")
    shutil.rmtree(work / "hadoop-out")
    return times


def storbench_times(work: Path, size: int, slots: int, fmt: str) -> tuple[dict[str, float], float]:
    drop_written(work)
    started = time.monotonic()
    samples = run_suite(work, "terasort", str(size), {"partition_mb": PARTITION_MB, "format": fmt, "flush": False},
                        master=f"local[{slots}]")
    return {s.workload: s.value for s in samples if s.metric == "completion_time"}, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="500M", help="data set size in bytes (default 500M)")
    parser.add_argument("--dir", default="/var/tmp", help="filesystem to run on (default /var/tmp)")
    parser.add_argument("--slots", type=int, default=os.cpu_count() or 1,
                        help="map and reduce slots of Hadoop = cores of storbench's local[N] (default: the cores)")
    parser.add_argument("--format", default="tera", choices=("tera", "parquet"),
                        help="storbench's storage format (default tera: Hadoop's record files, as Hadoop writes)")
    args = parser.parse_args()
    size = parse_count(args.size)
    if not size:
        raise SystemExit(f"--size {args.size!r}: expected a byte count such as 500M")
    reduces = max(1, math.ceil(size / (PARTITION_MB * 1_000_000)))  # storbench terasort's partitions
    work = Path(tempfile.mkdtemp(prefix="storbench-terasort-bench-", dir=args.dir))
    try:
        hadoop = hadoop_run(work, size, args.slots, reduces)
        ours, wall = storbench_times(work, size, args.slots, args.format)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"size {size / 1e6:.0f} MB ({size // 100} records), filesystem of {args.dir}; storbench format={args.format}")
    print(f"scope: in-window on both sides (job submission to committed output; JVM/Spark start-up outside; "
          f"neither side syncs: storbench flush=false, as Hadoop writes; both through the checksummed local "
          f"file system); "
          f"slots: Hadoop local mode {args.slots} map + {args.slots} reduce, {reduces} reducers "
          f"(TeraGen: 1 map, local mode's limit) | storbench Spark local[{args.slots}], {reduces} partitions")
    print(f"{'phase':<18}{'hadoop s':>10}{'storbench s':>13}{'hadoop/storbench':>18}{'goal':>7}")
    goals = {"teragen": 1.3, "teragen+terasort": 1.5}
    rows = [("teragen", hadoop["teragen"][0], ours["teragen"]), ("terasort", hadoop["terasort"][0], ours["terasort"]),
            ("teragen+terasort", hadoop["teragen"][0] + hadoop["terasort"][0], ours["teragen"] + ours["terasort"])]
    for phase, theirs, mine in rows:
        goal = f"{goals[phase]:.1f}x" if phase in goals else ""
        verdict = "" if not goal else (" met" if theirs / mine >= goals[phase] else " MISSED")
        print(f"{phase:<18}{theirs:>10.2f}{mine:>13.2f}{theirs / mine:>17.2f}x{goal:>7}{verdict}")
    whole = hadoop["teragen"][1] + hadoop["terasort"][1]
    print(f"for reference, whole processes (JVM start-up in): hadoop teragen+terasort {whole:.2f} s; storbench's "
          f"whole run {wall:.2f} s, which also starts Spark, verifies teragen and runs teravalidate")


if __name__ == "__main__":
    main()
