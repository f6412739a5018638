"""The cross-check driver: Hadoop's own TestDFSIO (hadoop-mapreduce-client-jobclient tests jar),
run as a MapReduce job against the same target (local mode, or on the YARN the run's Spark uses), its result
file parsed into the same samples.
"""

from __future__ import annotations

import math
import re
import subprocess
from typing import Any

from storbench.context import RunContext
from storbench.engines.tool import io_timeout
from storbench.engines.hadoop import HadoopEngine, HadoopJob
from storbench.engines.spark import SparkEngine
from storbench.errors import WorkloadError
from storbench.results.model import Sample

MIB = 1024 * 1024
_FIELDS = {
    "Number of files": "files",
    "Total MBytes processed": "total_mib",
    "Throughput mb/sec": "throughput",
    "Average IO rate mb/sec": "avg_io_rate",
    "IO rate std deviation": "io_rate_stddev",
    "Test exec time sec": "exec_s",
}


def parse_result(text: str) -> dict[str, float]:
    """The last TestDFSIO block of a result file (values in TestDFSIO's MiB units)."""
    values: dict[str, float] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        name = _FIELDS.get(key.strip())
        if sep and name:
            # A file read in under a millisecond gives TestDFSIO an infinite rate, which Java's
            # DecimalFormat prints as "∞" (and NaN as "\ufffd"); Double.toString says Infinity/NaN.
            text = value.strip().replace("\u221e", "inf").replace("Infinity", "inf").replace("\ufffd", "nan")
            number = re.match(r"([-+]?(?:inf|nan|NaN|[0-9.eE+-]+))", text)
            if number:
                values[name] = float(number.group(1))
    missing = set(_FIELDS.values()) - set(values)
    if missing:
        raise WorkloadError(f"TestDFSIO result is missing {', '.join(sorted(missing))}")
    return values


_SAMPLES = (
    ("dfsio_throughput_mbps", "throughput", "MB/s"),
    ("dfsio_avg_io_rate_mbps", "avg_io_rate", "MB/s"),
    ("dfsio_io_rate_stddev_mbps", "io_rate_stddev", "MB/s"),
    ("dfsio_total_mb", "total_mib", "MB"),
)


def to_samples(workload: str, values: dict[str, float], labels: dict[str, str] | None = None) -> list[Sample]:
    """TestDFSIO's MiB/s converted to storbench's MB/s (10^6 bytes); a rate it could not measure is None."""
    scale = MIB / 1e6
    return [
        Sample(
            workload,
            metric,
            values[key] * scale if math.isfinite(values[key]) else None,
            unit,
            labels={"driver": "testdfsio", **(labels or {})},
        )
        for metric, key, unit in _SAMPLES
    ]


def time_limit(params: dict[str, Any]) -> float:
    """Every file's bytes at the floor rate, plus the margin (storbench.engines.tool.io_timeout)."""
    return io_timeout(params["files"] * params["file_size"])


def run_testdfsio(
    ctx: RunContext, workload: str, mode: str, params: dict[str, Any], labels: dict[str, str]
) -> list[Sample]:
    hadoop = ctx.engine(HadoopEngine)
    result_file = hadoop.scratch() / f"testdfsio-{mode}.txt"
    # As many files at once as storbench's driver has Spark tasks at once: the local runner's default is one
    # map at a time, which gives each file the whole machine and is not what the other driver measures.
    spark = ctx.engine(SparkEngine)
    slots = min(params["files"], spark.default_parallelism())
    args = [
        "-D",
        f"fs.defaultFS={ctx.root_uri}",
        *hadoop.framework(
            spark.master, slots, ctx.data_uri("mapreduce-staging"), spark.effective_conf().get("spark.yarn.queue")
        ),
        "-D",
        f"test.build.data={ctx.data_uri('testdfsio')}",
        "-D",
        f"test.io.file.buffer.size={params['buffer_size']}",
        *(["-D", f"dfs.replication={params['replication']}"] if params["replication"] else []),
        f"-{mode}",
        "-nrFiles",
        str(params["files"]),
        "-size",
        f"{params['file_size']}B",
        "-resFile",
        str(result_file),
    ]
    timeout = time_limit(params)
    with ctx.measure():
        try:
            done = hadoop.run(HadoopJob("org.apache.hadoop.fs.TestDFSIO", args, timeout))
        except subprocess.TimeoutExpired:
            raise WorkloadError(
                f"{workload}: TestDFSIO did not finish within its {timeout:.0f} s timeout; "
                f"killed it (a stalled target?)"
            ) from None
    if done.returncode != 0:
        last = [line for line in done.stderr.splitlines() if line.strip()][-1:] or ["(no output)"]
        raise WorkloadError(f"{workload}: TestDFSIO exited with {done.returncode}: {last[0][:300]}")
    return to_samples(workload, parse_result(result_file.read_text()), labels)
