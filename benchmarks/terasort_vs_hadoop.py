"""storbench's teragen+terasort vs Hadoop's own TeraGen/TeraSort example jobs; teragen vs fio.

Named peers, measured in this run on the same machine, filesystem and size:
  1. hadoop-mapreduce-examples 3.4.2 TeraGen + TeraSort in MapReduce local mode (2 map and
     2 reduce slots, as many as the cores here), each job its own JVM, as users run them;
  2. fio sequential write (1 MiB blocks, direct I/O, libaio, iodepth 16) on the same filesystem,
     the device's ceiling for teragen's write.

    .venv/bin/python benchmarks/terasort_vs_hadoop.py [--size 500M] [--dir /var/tmp]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from peers import fio_write_mbps, run_suite  # noqa: E402  (benchmarks/ is on sys.path when run as a script)
from storbench.units import parse_count  # noqa: E402

PEER_POM = Path(__file__).resolve().parent / "hadoop-examples" / "pom.xml"
LOCAL_MR = ["-D", "mapreduce.framework.name=local", "-D", "fs.defaultFS=file:///",
            "-D", "mapreduce.job.maps=2", "-D", "mapreduce.local.map.tasks.maximum=2",
            "-D", "mapreduce.job.reduces=2", "-D", "mapreduce.local.reduce.tasks.maximum=2"]


def hadoop_classpath(work: Path) -> str:
    out = work / "hadoop.cp"
    subprocess.run(["mvn", "-q", "-B", "-f", str(PEER_POM), "dependency:build-classpath",
                    f"-Dmdep.outputFile={out}"], check=True, stdout=subprocess.DEVNULL)
    return out.read_text().strip()


def timed(argv: list[str], log: Path) -> float:
    started = time.monotonic()
    with open(log, "w") as handle:
        subprocess.run(argv, check=True, stdout=handle, stderr=subprocess.STDOUT)
    return time.monotonic() - started


def hadoop_run(work: Path, size: int) -> dict[str, float]:
    cp = hadoop_classpath(work)
    driver = ["java", "-Xmx2g", "-cp", cp, "org.apache.hadoop.examples.ExampleDriver"]
    gen = timed([*driver, "teragen", *LOCAL_MR, str(size // 100), f"file://{work}/hadoop-in"], work / "teragen.log")
    sort = timed([*driver, "terasort", *LOCAL_MR, f"file://{work}/hadoop-in", f"file://{work}/hadoop-out"],
                 work / "terasort.log")
    shutil.rmtree(work / "hadoop-in")
    shutil.rmtree(work / "hadoop-out")
    return {"teragen": gen, "terasort": sort}


def storbench_times(work: Path, size: int) -> tuple[dict[str, float], float]:
    started = time.monotonic()
    samples = run_suite(work, "terasort", str(size), {"partition_mb": 128})
    return {s.workload: s.value for s in samples if s.metric == "completion_time"}, time.monotonic() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="500M", help="data set size in bytes (default 500M)")
    parser.add_argument("--dir", default="/var/tmp", help="filesystem to run on (default /var/tmp)")
    args = parser.parse_args()
    size = parse_count(args.size)
    if not size:
        raise SystemExit(f"--size {args.size!r}: expected a byte count such as 500M")
    work = Path(tempfile.mkdtemp(prefix="storbench-terasort-bench-", dir=args.dir))
    try:
        hadoop = hadoop_run(work, size)
        ours, wall = storbench_times(work, size)
        fio = fio_write_mbps(work, size)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    hadoop_total = hadoop["teragen"] + hadoop["terasort"]
    ours_total = ours["teragen"] + ours["terasort"]
    print(f"size {size / 1e6:.0f} MB ({size // 100} records), filesystem of {args.dir}")
    print(f"{'phase':<10}{'hadoop s':>10}{'storbench s':>13}{'hadoop/storbench':>18}")
    for phase in ("teragen", "terasort"):
        print(f"{phase:<10}{hadoop[phase]:>10.2f}{ours[phase]:>13.2f}{hadoop[phase] / ours[phase]:>17.2f}x")
    print(f"{'total':<10}{hadoop_total:>10.2f}{ours_total:>13.2f}{hadoop_total / ours_total:>17.2f}x")
    print(f"storbench whole run incl. Spark start and teravalidate: {wall:.2f} s "
          f"(hadoop gen+sort jobs incl. their JVM starts / storbench gen+sort+validate+start: "
          f"{hadoop_total / wall:.2f}x)")
    teragen_mbps = size / 1e6 / ours["teragen"]
    print(f"teragen write {teragen_mbps:.0f} MB/s vs fio sequential write {fio:.0f} MB/s: "
          f"{teragen_mbps / fio * 100:.0f}% of fio (goal: 70%)")


if __name__ == "__main__":
    main()
