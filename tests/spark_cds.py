"""A class-data-sharing archive (AppCDS) for the tests' Spark drivers.

The full lane starts well over a hundred Spark drivers (each CLI run, each benchmark smoke run, each module's own
session), and the suite is CPU-bound. Most of a driver's start-up is loading and verifying the same few thousand
classes from Spark's jars. JDK 17 can map them from an archive instead: a bare session took 8.1 CPU-s and 7.3 s
without it, 4.3 CPU-s and 3.5 s with it (same machine, same flags).

``python -m tests.spark_cds`` (run by ``scripts/setup.sh --test``) builds the archive once per JDK, PySpark and
JVM flags: a short warm-up session (CSV and Parquet written and read, a group-by and a join) runs with
``-XX:ArchiveClassesAtExit``, and the archive is renamed into place only once complete. ``driver_opts()`` is the
drivers' SPARK_SUBMIT_OPTS (tests/conftest.py): the short-job flags, plus the archive when it exists. A driver
whose class path differs from the warm-up's (extra jars before Spark's) gets no sharing and runs as before: the
JVM checks the archive and falls back silently. The archive lives in the clone's .venv, never in a shared /tmp.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.cli.helpers import QUICK_JVM  # short jobs: C1 and the serial GC

REPO = Path(__file__).resolve().parents[1]
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"  # a driver that cannot use the archive says nothing about it
# Spark's memory page for a driver of 2 GB is 64 MB (spark.buffer.pageSize: the execution memory over the cores,
# over 16, at most 64 MB), and every hash relation a broadcast join builds takes at least one page: the 104
# TPC-DS queries allocated and zeroed a 64 MB long[] per broadcast, a gigabyte of them was live at once, and
# the driver ran 184 full collections (41 CPU-s in the VM thread, 18% of the run). With 2 MB pages the same run
# took 166 CPU-s instead of 239; the pyspark-benchmark job, which broadcasts nothing, took the same 30 CPU-s.
# A system property: SparkConf reads spark.* from them, so the manifest records it like any other setting.
SMALL_PAGES = "-Dspark.buffer.pageSize=2m"

WARM_UP = r"""
import os, sys, tempfile
from pyspark.sql import SparkSession
spark = SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
print(spark._jvm.java.lang.ProcessHandle.current().pid(), flush=True)
with tempfile.TemporaryDirectory() as scratch:
    df = spark.range(20000).selectExpr("id", "id % 97 as k", "cast(id as string) as s")
    for fmt in ("parquet", "csv"):
        df.write.format(fmt).option("header", "true").save(os.path.join(scratch, fmt))
        back = spark.read.format(fmt).option("header", "true").load(os.path.join(scratch, fmt))
        back.groupBy("k").count().join(back.select("k").distinct(), "k").collect()
    spark.sql("select k, sum(id) from values (1, 2), (1, 3) as t(k, id) group by k").collect()
spark.stop()
"""


def archive_path() -> Path:
    """The archive for this JDK, this PySpark and these flags (a new one when any of them changes)."""
    from importlib.metadata import version  # not `import pyspark`: each test worker calls this at start-up

    java = Path(os.environ.get("JAVA_HOME", "/nonexistent"), "bin", "java")
    if not java.exists():
        from shutil import which

        java = Path(which("java") or "java").resolve()
    key = f"{java}:{java.stat().st_mtime if java.exists() else 0}:{version('pyspark')}:{QUICK_JVM}"
    return REPO / ".venv" / "storbench-test-cache" / f"spark-{hashlib.sha256(key.encode()).hexdigest()[:16]}.jsa"


def driver_opts() -> str:
    try:
        archive = archive_path()
    except (ImportError, OSError):  # no PySpark or no java: no drivers to speed up
        return f"{QUICK_JVM} {SMALL_PAGES}"
    sharing = f" -XX:SharedArchiveFile={archive} {QUIET}" if archive.is_file() else ""
    return f"{QUICK_JVM} {SMALL_PAGES}{sharing}"


def _gone(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while Path(f"/proc/{pid}").exists():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def build() -> str:
    """Builds the archive if it is missing; one line saying what happened. A failure leaves no archive (the tests
    then run without one) and is said, not raised."""
    archive = archive_path()
    if archive.is_file():
        return f"spark-cds: {archive.name} is there"
    archive.parent.mkdir(mode=0o700, exist_ok=True)
    fd, partial = tempfile.mkstemp(prefix=".building-", suffix=".jsa", dir=archive.parent)
    os.close(fd)
    os.unlink(partial)  # the JVM writes it at exit
    env = {
        **os.environ,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_SUBMIT_OPTS": f"{QUICK_JVM} -XX:ArchiveClassesAtExit={partial}",
    }
    started = time.monotonic()
    try:
        try:
            done = subprocess.run([sys.executable, "-c", WARM_UP], capture_output=True, text=True, env=env, timeout=300)
        except subprocess.TimeoutExpired:
            return "spark-cds: no archive (the warm-up session took over 300 s)"
        pid = int(done.stdout.split()[0]) if done.returncode == 0 and done.stdout.split() else 0
        # the JVM dumps the archive as it exits, after its Python has gone
        if not pid or not _gone(pid, 120) or not Path(partial).is_file():
            return f"spark-cds: no archive (warm-up exit {done.returncode}: {done.stderr.strip()[-300:]})"
        os.replace(partial, archive)
    finally:
        Path(partial).unlink(missing_ok=True)
    return f"spark-cds: built {archive.name} ({archive.stat().st_size >> 20} MB) in {time.monotonic() - started:.0f} s"


if __name__ == "__main__":
    print(build(), file=sys.stderr)
