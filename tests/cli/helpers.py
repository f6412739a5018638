import os
import re
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")
ANSI = re.compile(r"\x1b\[")
# what Spark, Hadoop and the JVM print on their own; a default run keeps it in spark.log
JVM_NOISE = (
    "WARNING: Using incubator modules",
    "NativeCodeLoader",
    "Setting default log level",
    "WARN SparkConf",
    "log4j",
    "WARN ",
    "INFO ",
)


# The CLI's Spark driver JVM (spark-submit reads SPARK_SUBMIT_OPTS): the client compiler only and the serial
# collector. A test's Spark run is short, so most of its CPU went to C2 compiling and to GC threads: this takes
# the Spark CLI test files from 224 to 125 s of CPU (test_end_to_end 101 -> 59 s wall); even TPC-DS's 104 queries
# took less CPU with C1 (tests/conftest.py). What the tests check is JIT-neutral.
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def storbench(
    home: Path, *args: str, timeout: float = 600, env_extra: dict[str, str] | None = None, **kwargs
) -> subprocess.CompletedProcess:
    """The real CLI in a child process, with its own results home (and ``env_extra`` in its environment)."""
    env = {
        **os.environ,
        "PYTHONPATH": SRC,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_SUBMIT_OPTS": os.environ.get("SPARK_SUBMIT_OPTS", QUICK_JVM),
        **(env_extra or {}),
    }
    return subprocess.run(
        [sys.executable, "-m", "storbench", "--results", str(home), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        **kwargs,
    )
