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
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from storbench import api  # noqa: E402
from storbench.results.store import ResultStore  # noqa: E402
from storbench.runner import RunOptions  # noqa: E402
from storbench.suites.model import parse_count  # noqa: E402

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


def storbench_run(work: Path, size: int) -> tuple[dict[str, float], float]:
    store = ResultStore(work / "home")
    target = work / "storbench-target"
    target.mkdir()
    started = time.monotonic()
    outcome = api.run(RunOptions(suite="terasort", label="bench", target=str(target), scale=str(size), repeat=1,
                                 overrides={"partition_mb": 128}), store)
    wall = time.monotonic() - started
    if outcome.status != "succeeded":
        raise SystemExit(f"storbench run {outcome.status}: {outcome.errors}")
    samples = store.resolve(outcome.run_id).samples
    times = {s.workload: s.value for s in samples if s.metric == "completion_time"}
    return times, wall


def fio_write_mbps(work: Path, size: int) -> float:
    result = subprocess.run(["fio", "--name=seqwrite", f"--directory={work}", "--rw=write", "--bs=1M",
                             f"--size={min(size, 2 * 10**9)}", "--direct=1", "--ioengine=libaio", "--iodepth=16",
                             "--end_fsync=1", "--output-format=json"], check=True, capture_output=True, text=True)
    job = json.loads(result.stdout)["jobs"][0]
    for name in os.listdir(work):
        if name.startswith("seqwrite"):
            os.unlink(work / name)
    return job["write"]["bw_bytes"] / 1e6


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
        ours, wall = storbench_run(work, size)
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
