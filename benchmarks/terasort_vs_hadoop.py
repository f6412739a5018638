"""storbench's teragen+terasort vs Hadoop's own TeraGen/TeraSort example jobs, like for like.

Named peer, measured in this run on the same machine, filesystem, size and output format:
hadoop-mapreduce-examples 3.4.2 TeraGen + TeraSort in MapReduce local mode; storbench on Spark
local[N] (N = the cores here, or --slots). The same parallelism and files on both sides: Hadoop
runs N maps and N reduces at once (``mapreduce.local.{map,reduce}.tasks.maximum``) and TeraGen
writes N files (local mode's provider pins TeraGen to 1 map; hadoop-examples/HadoopRounds.java
provides local mode without that pin); storbench writes N part files (``partition_mb`` = size/N)
and sorts into N partitions. Both write Hadoop's 100-byte record files (storbench's format=tera;
--format parquet for storbench's Parquet) through the checksummed local file system; neither syncs
(storbench flush=false, as Hadoop writes).

Scope, the same on both sides: in-window, from job submission to the committed output (TeraSort:
from its "starting", so its key sampling counts, as storbench's does). Start-up is outside for both:
each side keeps ONE JVM for all rounds (a Spark session; a Hadoop JVM running job after job) and
warms it with one unrecorded teragen+terasort. Hadoop's window comes from its own log lines (log4j
timestamps, ms), its progress poll set to 10 ms (default 1 s, which made the completion line up to
1 s late); storbench's from its window (time.monotonic). Rounds rotate which side goes first; the
output files are synced and evicted from the page cache before each job. Goals (Hadoop's time over
storbench's): teragen ≥ 1.3×, teragen+terasort ≥ 1.5×.

--yarn: both sides distributed, on storbench's services (``services up hdfs`` and ``services up yarn --nodes 2``
under --service-home, else this benchmark's own, stopped after): Hadoop's TeraGen/TeraSort as MapReduce jobs
on that YARN (HadoopEngine.framework's settings, the service's conf dir first on the Hadoop JVM's classpath)
with as many maps and reduces at once as Spark's executors have slots, storbench on Spark on the same YARN
(--spark-master yarn); both sides' files on that HDFS under this benchmark's own directory, removed after.
Each MapReduce job's ApplicationMaster and task containers start inside Hadoop's window (MapReduce on YARN
always pays them; the Spark session holds its executors for all rounds), so the local goals, set for two
sides with no scheduler in the way, do not carry over: on YARN the ratios are reported, without a goal.

    .venv/bin/python benchmarks/terasort_vs_hadoop.py [--size 500M] [--dir /var/tmp] [--slots N] [--rounds 3]
    .venv/bin/python benchmarks/terasort_vs_hadoop.py --yarn [--size 64M] [--service-home HOME]
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Iterator

from harness import parser, ratios, rotated, scope, service, spread, verdict
from peers import SparkWorkloads, drop_written  # noqa: E402  (benchmarks/ is on sys.path when run as a script)
from storbench.units import parse_count  # noqa: E402

PEER = Path(__file__).resolve().parent / "hadoop-examples"
GOALS = {"teragen": 1.3, "teragen+terasort": 1.5}
POLL_MS = 10  # Job.waitForCompletion's progress poll: the completion line is at most this late
# Job submission, completion and TeraSort's own start/end, with millisecond timestamps
LOG4J = """log4j.rootLogger=WARN, out
log4j.logger.org.apache.hadoop.mapreduce.Job=INFO
log4j.logger.org.apache.hadoop.mapreduce.JobSubmitter=INFO
log4j.logger.org.apache.hadoop.examples.terasort.TeraSort=INFO
log4j.appender.out=org.apache.log4j.ConsoleAppender
log4j.appender.out.layout=org.apache.log4j.PatternLayout
log4j.appender.out.layout.ConversionPattern=%d{yyyy-MM-dd HH:mm:ss,SSS} %c{1}: %m%n
"""


class Hadoop:
    """One JVM running Hadoop's TeraGen/TeraSort job after job (HadoopRounds.java), N maps and N reduces."""

    def __init__(self, work: Path, options: list[str], conf_dir: Path | None = None):
        """``options``: every job's -D settings; ``conf_dir``: a cluster's Hadoop conf dir, first on the classpath."""
        cp_file, classes = work / "hadoop.cp", work / "peer-classes"
        subprocess.run(
            [
                "mvn",
                "-q",
                "-B",
                "-f",
                str(PEER / "pom.xml"),
                "dependency:build-classpath",
                f"-Dmdep.outputFile={cp_file}",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        cp = cp_file.read_text().strip()
        subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", str(classes), str(PEER / "HadoopRounds.java")], check=True)
        services = classes / "META-INF" / "services"
        services.mkdir(parents=True)
        (services / "org.apache.hadoop.mapreduce.protocol.ClientProtocolProvider").write_text("HadoopRounds$Provider\n")
        (work / "log4j.properties").write_text(LOG4J)
        self.options = options
        classpath = f"{conf_dir}:{classes}:{cp}" if conf_dir else f"{classes}:{cp}"
        self.process = subprocess.Popen(
            ["java", "-Xmx2g", f"-Dlog4j.configuration=file:{work}/log4j.properties", "-cp", classpath, "HadoopRounds"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )

    def job(self, program: str, *args: str) -> tuple[float, list[str]]:
        """One job: its window (s) from its own log lines, and those lines."""
        assert self.process.stdin and self.process.stdout
        options = self.options if program != "rm" else []
        self.process.stdin.write(" ".join([program, *options, *args]) + "\n")
        self.process.stdin.flush()
        lines = []
        for line in self.process.stdout:
            if line.startswith("ROUND-DONE "):
                if line.split()[1] != "0":
                    raise SystemExit(f"Hadoop {program} exited {line.split()[1]}:\n" + "".join(lines[-20:]))
                return (window_s(lines, program) if program != "rm" else 0.0), lines
            lines.append(line)
        raise SystemExit(f"the Hadoop JVM ended during {program}:\n" + "".join(lines[-20:]))

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=60)


def window_s(lines: list[str], program: str) -> float:
    """Seconds from the first submission/start line to the last completion line of one Hadoop job's log."""
    stamps = [
        datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f")
        for line in lines
        if line[:4].isdigit()
        and any(mark in line for mark in ("number of splits", "starting", "completed successfully", "TeraSort: done"))
    ]
    if len(stamps) < 2:
        raise SystemExit(f"Hadoop {program}: no job submission/completion lines to time its window from")
    return (max(stamps) - min(stamps)).total_seconds()


def splits(lines: list[str]) -> str:
    return next((line.split("number of splits:")[1].strip() for line in lines if "number of splits:" in line), "?")


@dataclass
class Place:
    """Where both sides run: the file system of their files, Spark's master and settings, Hadoop's job settings."""

    root: str  # this benchmark's own directory (a URI) on the file system both sides use
    master: str
    slots: int
    hadoop_options: list[str]
    spark_conf: dict[str, str] = field(default_factory=dict)
    conf_dir: Path | None = None  # the YARN's Hadoop conf dir (--yarn)
    cached: list[Path] = field(default_factory=list)  # local dirs holding the files: evicted before each job


def local_place(work: Path, slots: int) -> Place:
    return Place(
        f"file://{work}",
        f"local[{slots}]",
        slots,
        [
            "-D",
            "mapreduce.framework.name=local",
            "-D",
            "fs.defaultFS=file:///",
            "-D",
            f"mapreduce.job.maps={slots}",
            "-D",
            f"mapreduce.local.map.tasks.maximum={slots}",
            "-D",
            f"mapreduce.job.reduces={slots}",
            "-D",
            f"mapreduce.local.reduce.tasks.maximum={slots}",
            "-D",
            f"mapreduce.client.progressmonitor.pollinterval={POLL_MS}",
        ],
        cached=[work],
    )


@contextmanager
def yarn_place(work: Path, service_home: Path | None) -> Iterator[Place]:
    """--yarn: storbench's HDFS and 2-NodeManager YARN (those up under --service-home, else this benchmark's own);
    Hadoop's jobs on that YARN with HadoopEngine.framework's settings, as many maps and reduces at once as Spark's
    executors have slots, and both sides' files on that HDFS under this benchmark's own directory."""
    from storbench.engines.hadoop import HadoopEngine
    from storbench.services import yarn_client

    home = service_home or work / "services"
    with (
        service("hdfs", home, service_home, datanodes=2) as hdfs,
        service("yarn", home, service_home, nodes=2, allow_root_containers=True) as yarn,
    ):
        spark_conf = yarn_client.use(home)  # HADOOP_CONF_DIR and the Hadoop user for Spark's client and Hadoop's
        if not spark_conf:
            raise SystemExit(
                "--yarn runs on storbench's YARN service: unset HADOOP_CONF_DIR/YARN_CONF_DIR, which "
                "name another cluster"
            )
        slots = yarn["nodemanagers"] * yarn["cores"]  # Spark: one executor per NodeManager with all its cores
        root = f"{hdfs['uri']}/{work.name}"
        options = [
            "-D",
            f"fs.defaultFS={hdfs['uri']}",
            *HadoopEngine().framework("yarn", slots, f"{root}/mapreduce-staging", spark_conf["spark.yarn.queue"]),
            "-D",
            f"mapreduce.job.maps={slots}",
            "-D",
            f"mapreduce.job.reduces={slots}",
            "-D",
            f"mapreduce.job.running.reduce.limit={slots}",
            "-D",
            f"mapreduce.client.progressmonitor.pollinterval={POLL_MS}",
        ]
        yield Place(
            root,
            "yarn",
            slots,
            options,
            spark_conf,
            yarn_client.conf_dir(home),
            [work, *(Path(d) for d in hdfs["datanode_dirs"])],
        )


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--size", default=None, help="data set size in bytes (default 500M; --quick: 4M)")
    p.add_argument("--dir", default="/var/tmp", help="filesystem to run on (default /var/tmp)")
    p.add_argument(
        "--slots",
        type=int,
        default=None,
        help="Hadoop's maps and reduces = Spark's local[N] slots = files (default: the cores; not with "
        "--yarn, where they are Spark's executor slots)",
    )
    p.add_argument(
        "--format",
        default="tera",
        choices=("tera", "parquet"),
        help="storbench's storage format (default tera: Hadoop's record files, as Hadoop writes)",
    )
    p.add_argument(
        "--yarn",
        action="store_true",
        help="both sides distributed: Hadoop's jobs as MapReduce on YARN, storbench on Spark on the same "
        "YARN (--spark-master yarn), files on HDFS (services up hdfs + yarn --nodes 2: those under "
        "--service-home, else started and stopped here)",
    )
    args = p.parse_args()
    size = parse_count(args.size or ("4M" if args.quick else "500M"))
    if not size or (args.slots is not None and args.slots < 1) or (args.yarn and args.slots is not None):
        raise SystemExit(
            f"--size {args.size!r} / --slots {args.slots}: expected a byte count such as 500M and "
            f"≥ 1 slot (no --slots with --yarn: Spark's executor slots there)"
        )
    work = Path(tempfile.mkdtemp(prefix="storbench-terasort-bench-", dir=args.dir))
    times: dict[str, list[dict[str, float]]] = {}
    try:
        with (
            yarn_place(work, args.service_home)
            if args.yarn
            else nullcontext(local_place(work, args.slots or os.cpu_count() or 1))
        ) as place:
            print_scope(args, size, place)
            times = rounds(args, size, work, place)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report(times, args.yarn)


def print_scope(args: argparse.Namespace, size: int, place: Place) -> None:
    slots = place.slots
    if args.yarn:
        fs = f"on HDFS ({place.root}, storbench's services up hdfs, 2 DataNodes)"
        peer = (
            f"hadoop-mapreduce-examples 3.4.2 TeraGen/TeraSort, MapReduce on YARN (services up yarn, 2 "
            f"NodeManagers), {slots} maps + {slots} reduces at once"
        )
        parallelism = (
            f"Spark on the same YARN (--spark-master yarn), {slots} executor slots, {slots} partitions vs "
            f"Hadoop {slots} map + {slots} reduce containers at once"
        )
        startup = (
            "outside the timer on both for the JVMs kept for all rounds (a Spark session holding its "
            "executors; the Hadoop client JVM), each warmed by one unrecorded teragen+terasort; inside "
            "Hadoop's window, as MapReduce on YARN always pays them: each job's ApplicationMaster and task "
            "containers"
        )
    else:
        fs = f"on the filesystem of {args.dir}, checksummed local file system"
        peer = (
            f"hadoop-mapreduce-examples 3.4.2 TeraGen/TeraSort, MapReduce local mode, {slots} maps + {slots} "
            f"reduces (TeraGen's 1-map pin lifted)"
        )
        parallelism = f"Spark local[{slots}], {slots} partitions vs Hadoop {slots} map + {slots} reduce slots"
        startup = (
            "outside the timer on both (one JVM per side for all rounds, each warmed by one unrecorded "
            "teragen+terasort)"
        )
    scope(
        f"storbench teragen+terasort (format={args.format}, flush=false) vs Hadoop TeraGen+TeraSort, "
        f"{size / 1e6:.0f} MB ({size // 100} records) {fs}, {slots} files each",
        peer=peer,
        parallelism=parallelism,
        startup=startup,
        cache="neither syncs; the previous outputs removed, everything synced and this benchmark's files "
        "evicted from the page cache before each job",
        clock=f"storbench: its window (time.monotonic, job submission to committed output); Hadoop: its own "
        f"log4j lines (ms; submission to completion, progress poll {POLL_MS} ms)",
    )


def rounds(args: argparse.Namespace, size: int, work: Path, place: Place) -> dict[str, list[dict[str, float]]]:
    """The warm-ups, then the rotated rounds: each side's teragen and terasort windows per round."""
    slots = place.slots
    file_mb = max(1, math.ceil(size / slots / 1_000_000))  # N part files, N sort partitions: Hadoop's N maps/reduces

    def evict() -> None:
        for folder in place.cached:
            drop_written(folder)

    with ThreadPoolExecutor(1) as pool:  # the peer's classpath and build while Spark starts
        starting = pool.submit(Hadoop, work, place.hadoop_options, place.conf_dir)
        spark = SparkWorkloads(place.root, work / "home", place.master, conf=place.spark_conf)
        try:
            spark.__enter__()
            hadoop = starting.result()
        except BaseException:
            spark.__exit__(None, None, None)
            raise
    try:
        with spark:
            params = {"size_bytes": size, "partition_mb": file_mb, "format": args.format, "flush": False}

            def ours(_round: int, record: bool = True) -> dict[str, float]:
                phases = {}
                for phase in ("teragen", "terasort"):
                    evict()
                    phases[phase], _ = spark.run(phase, params, warmup=not record)
                if not record or _round == args.rounds - 1:  # outside every window: the sort is right
                    spark.run("teravalidate", params, warmup=True)
                return phases

            def theirs(_round: int) -> dict[str, float]:
                for old in ("hadoop-in", "hadoop-out"):
                    hadoop.job("rm", f"{place.root}/{old}")
                evict()
                gen, lines = hadoop.job("teragen", str(size // 100), f"{place.root}/hadoop-in")
                if splits(lines) != str(slots):
                    raise SystemExit(f"Hadoop TeraGen ran {splits(lines)} maps, not {slots}")
                evict()
                sort, _ = hadoop.job("terasort", f"{place.root}/hadoop-in", f"{place.root}/hadoop-out")
                return {"teragen": gen, "terasort": sort}

            ours(0, record=False)
            theirs(0)  # the warm-ups, unrecorded
            return rotated({"hadoop": theirs, "storbench": ours}, args.rounds)
    finally:
        try:
            if place.conf_dir:  # on HDFS: the benchmark's own directory, Hadoop's files and Spark's released
                hadoop.job("rm", place.root)
        finally:
            hadoop.close()


def report(times: dict[str, list[dict[str, float]]], yarn: bool) -> None:
    def phase(side: str, name: str) -> list[float]:
        return [r["teragen"] + r["terasort"] if name == "teragen+terasort" else r[name] for r in times[side]]

    for k, (h, s) in enumerate(zip(times["hadoop"], times["storbench"])):
        print(
            f"  round {k + 1}: hadoop teragen {h['teragen']:.2f} s, terasort {h['terasort']:.2f} s | "
            f"storbench teragen {s['teragen']:.2f} s, terasort {s['terasort']:.2f} s"
        )
    for name in ("teragen", "terasort", "teragen+terasort"):
        print(
            f"  {name}: hadoop {spread(phase('hadoop', name)).text('.2f', ' s')}, "
            f"storbench {spread(phase('storbench', name)).text('.2f', ' s')}"
        )
    for name in ("teragen", "terasort", "teragen+terasort"):
        verdict(
            f"hadoop/storbench {name} time",
            ratios(phase("hadoop", name), phase("storbench", name)),
            goal=None if yarn else GOALS.get(name),
        )


if __name__ == "__main__":
    main()
