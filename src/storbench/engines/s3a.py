"""Spark on ``s3://`` targets through Hadoop's S3A connector: its settings, output committers and statistics.

Inside Spark an ``s3://BUCKET/KEY`` of the target is ``s3a://BUCKET/KEY`` (``spark_uri``). The jars
(hadoop-aws matching PySpark's Hadoop client, the AWS SDK v2 modules S3A loads, Spark's cloud
committer bindings) are built by scripts/setup.sh into ``jvm/s3a/target/jars``.

Committers (``committer=``): ``file`` is Spark's classic FileOutputCommitter (rename on job commit:
a copy and delete of every object on S3); ``directory``, ``partitioned`` (S3A's staging committers:
multipart uploads completed at job commit) and ``magic`` (uploads written straight to their final
keys, made visible at job commit) go through Spark's PathOutputCommitProtocol.

Servers: on Ceph RGW (the target's ``server``, targets/s3.py) S3A signs empty bodies whole rather than aws-chunked
(``RGW_CONF``: storbench.s3a.EmptyBodySigner in jvm/s3a/src): over plain HTTP the AWS SDK v2 sends every PUT as
``x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD``, and Ceph 16's RGW answers that for a 0-byte object
(S3A's directory markers, _SUCCESS) with ``400 XAmzContentSHA256Mismatch``. The settings are Hadoop's, so they reach
the executors with the job's configuration; Spark records them with its settings (``spark_settings``).

Statistics: S3A counts every request by type in one JVM-wide ``S3AStorageStatistics`` per JVM; the
difference across a workload's timed window (read just outside its marks), summed over the JVMs, is stored as
its samples (``METRICS``): its prepare and its checks after the window are not its requests. The driver's
JVM is read through py4j; on a cluster (any master but ``local``) each executor's too, by a tiny Spark
job whose tasks call ``storbench.s3a.ExecutorStats`` (jvm/s3a/src) through Spark SQL's ``java_method``.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from storbench.results.metrics import metric_table
from storbench.buildparts import build
from storbench.errors import EngineError
from storbench.fetch import classpath
from storbench.results.model import Sample

METRIC_SECTION = 40  # where this section comes in reports (storbench.analysis.metrics)

JARS_DIR = Path(__file__).resolve().parents[3] / "jvm" / "s3a" / "target" / "jars"

COMMITTERS = ("file", "directory", "partitioned", "magic")
DEFAULT_COMMITTER = "file"
_PROTOCOL = "org.apache.spark.internal.io.cloud.PathOutputCommitProtocol"
_PARQUET = "org.apache.spark.internal.io.cloud.BindingParquetOutputCommitter"

# S3A's counter → sample. Hadoop 3.5 reads through its analytics stream by default: what it fetched
# from the server is stream_read_prefetched_bytes, what the reader consumed stream_read_bytes.
_COUNTERS = {
    "action_http_get_request": "s3a_get_requests",
    "object_put_request": "s3a_put_requests",
    "object_list_request": "s3a_list_requests",
    "action_http_head_request": "s3a_head_requests",
    "object_delete_request": "s3a_delete_requests",
    "object_copy_requests": "s3a_copy_requests",
    "object_multipart_initiated": "s3a_multipart_initiated",
    "stream_read_bytes": "s3a_read_mb",
    "stream_read_prefetched_bytes": "s3a_fetched_mb",
    "object_put_bytes": "s3a_write_mb",
    "store_io_retry": "s3a_retries",
    "store_io_throttled": "s3a_throttled",
}
# S3A's request durations (IOStatistics means of its filesystems, in ms) → sample. The analytics read
# stream's GETs are counted but not timed.
_DURATIONS = {
    "action_http_get_request.mean": "s3a_get_ms",
    "action_http_head_request.mean": "s3a_head_ms",
    "object_list_request.mean": "s3a_list_ms",
    "object_put_request.mean": "s3a_put_ms",
    "object_delete_request.mean": "s3a_delete_ms",
    "object_bulk_delete_request.mean": "s3a_bulk_delete_ms",
}
_BYTES = {"s3a_read_mb", "s3a_fetched_mb", "s3a_write_mb"}

METRICS = metric_table("""
    s3a_get_requests        | S3A GET requests                | requests | mean | fewer/more
    s3a_put_requests        | S3A PUT requests                | requests | mean | fewer/more
    s3a_list_requests       | S3A LIST requests               | requests | mean | fewer/more
    s3a_head_requests       | S3A HEAD requests               | requests | mean | fewer/more
    s3a_delete_requests     | S3A DELETE requests             | requests | mean | fewer/more
    s3a_copy_requests       | S3A COPY requests               | requests | mean | fewer/more
    s3a_multipart_initiated | S3A multipart uploads initiated | uploads  | mean | fewer/more
    s3a_read_mb             | S3A bytes read by Spark         | MB       | mean | less/more
    s3a_fetched_mb          | S3A bytes fetched (prefetch)    | MB       | mean | less/more
    s3a_write_mb            | S3A bytes PUT                   | MB       | mean | less/more
    s3a_retries             | S3A retries                     | retries  | mean | fewer/more
    s3a_throttled           | S3A throttled requests          | requests | mean | fewer/more
    s3a_get_ms              | S3A GET request latency         | ms       | mean | less/more
    s3a_head_ms             | S3A HEAD request latency        | ms       | mean | less/more
    s3a_list_ms             | S3A LIST request latency        | ms       | mean | less/more
    s3a_put_ms              | S3A PUT request latency         | ms       | mean | less/more
    s3a_delete_ms           | S3A DELETE request latency      | ms       | mean | less/more
    s3a_bulk_delete_ms      | S3A bulk DELETE request latency | ms       | mean | less/more
    s3a_jvms                | JVMs whose S3A requests counted | JVMs     | mean | fewer/more
""")


def s3a_jars() -> list[str]:
    if (fetched := classpath("s3a")) is not None:  # a wheel install: its own jar and the cached ones
        return fetched.split(":")
    jars = sorted(str(p) for p in JARS_DIR.glob("*.jar"))
    if not any("hadoop-aws" in Path(j).name for j in jars):
        build("s3a")
        jars = sorted(str(p) for p in JARS_DIR.glob("*.jar"))
    if not any("hadoop-aws" in Path(j).name for j in jars):
        raise EngineError(f"the S3A jars are not built ({JARS_DIR}); run scripts/setup.sh")
    return jars


def spark_uri(uri: str) -> str:
    """An ``s3://`` URI as Spark's Hadoop client names it (through S3A)."""
    return "s3a://" + uri.removeprefix("s3://") if uri.startswith("s3://") else uri


# What a server kind needs beyond the common settings (issue 27).
SERVER_CONF = {
    "rgw": {
        "spark.hadoop.fs.s3a.http.signer.enabled": "true",
        "spark.hadoop.fs.s3a.http.signer.class": "storbench.s3a.EmptyBodySigner",
    },
}


def spark_conf(url: str, access_key: str, secret_key: str, region: str, server: str | None = None) -> dict[str, str]:
    """The Spark settings that point S3A at an endpoint (the keys reach Hadoop's configuration only), with what
    the server's kind needs (``SERVER_CONF``)."""
    return {
        "spark.jars": ",".join(s3a_jars()),
        "spark.hadoop.fs.s3a.endpoint": url,
        "spark.hadoop.fs.s3a.endpoint.region": region,
        "spark.hadoop.fs.s3a.access.key": access_key,
        "spark.hadoop.fs.s3a.secret.key": secret_key,
        "spark.hadoop.fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",  # only these keys, never the machine's
        "spark.hadoop.fs.s3a.path.style.access": "true",  # local servers: no bucket.host DNS names
        "spark.hadoop.fs.s3a.connection.ssl.enabled": str(url.startswith("https")).lower(),
        "spark.hadoop.fs.s3a.retry.limit": "3",  # an endpoint that went away fails in seconds, not minutes
        "spark.hadoop.fs.s3a.attempts.maximum": "3",
        "spark.hadoop.fs.s3a.connection.establish.timeout": "5s",
        **SERVER_CONF.get(server or "", {}),
    }


def committer_conf(committer: str) -> dict[str, str]:
    """Session (SQL) settings for one committer; Spark copies them into each write job's Hadoop conf."""
    if committer == "file":
        return {
            "spark.sql.sources.commitProtocolClass": "org.apache.spark.sql.execution.datasources.SQLHadoopMapReduceCommitProtocol",
            "spark.sql.parquet.output.committer.class": "org.apache.parquet.hadoop.ParquetOutputCommitter",
            "fs.s3a.committer.name": "file",
        }
    return {
        "spark.sql.sources.commitProtocolClass": _PROTOCOL,
        "spark.sql.parquet.output.committer.class": _PARQUET,
        "fs.s3a.committer.name": committer,
        "fs.s3a.committer.magic.enabled": "true",
        "fs.s3a.committer.staging.conflict-mode": "replace",
    }


@contextmanager
def committer(spark: Any, name: str, uri: str) -> Iterator[None]:
    """Writes to ``uri`` inside use ``name``'s committer (on s3a:// only; elsewhere Spark's own)."""
    if not uri.startswith("s3a://"):
        yield
        return
    conf = committer_conf(name)
    before = {key: spark.conf.get(key, None) for key in conf}
    for key, value in conf.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


_STATS_CLASS = "storbench.s3a.ExecutorStats"  # jvm/s3a/src: one JVM's S3A counters as "JVM name=value ..."
STATS_GROUP = "storbench-s3a-statistics"  # the job group of the reading job (no workload's: not in its metrics)


def _parse(line: str) -> tuple[str, dict[str, int]]:
    """ExecutorStats' line: the JVM's name, its counters, and each duration ``X.mean=samples:sum`` as the
    counters ``X.mean#samples`` and ``X.mean#sum`` (so that they subtract and add like the others)."""
    jvm, *pairs = line.split(" ")
    out: dict[str, int] = {}
    for name, _, value in (pair.partition("=") for pair in pairs):
        samples, sep, total = value.partition(":")
        if sep:
            out[name + "#samples"], out[name + "#sum"] = int(samples), int(total)
        else:
            out[name] = int(value)
    return jvm, out


def _driver_counters(spark: Any) -> tuple[str, dict[str, int]]:
    return _parse(str(spark._jvm.storbench.s3a.ExecutorStats.counters()))


def _executor_counters(spark: Any) -> dict[str, dict[str, int]]:
    """Each executor JVM's counters: a job of a few tasks per core, each calling ExecutorStats through Spark
    SQL's ``java_method`` in whichever executor runs it (JVMs seen twice are read twice: kept once)."""
    context = spark.sparkContext
    executors = max(1, int(context._jsc.sc().getExecutorIds().size()))
    tasks = max(2 * int(context.defaultParallelism), 2 * executors)
    seen: dict[str, dict[str, int]] = {}
    for _ in range(3):  # the scheduler may leave an executor without a task: try again, with more tasks
        rows = spark.range(0, tasks, 1, tasks).selectExpr(f"java_method('{_STATS_CLASS}', 'counters') AS c").collect()
        seen.update(_parse(row.c) for row in rows)
        if len(seen) >= executors:
            break
        tasks *= 2
    return seen


def read_counters(spark: Any, executors: bool) -> dict[str, dict[str, int]]:
    """S3A's JVM-wide request counters of each JVM by its name: the driver's (through py4j: it lists, plans and
    commits jobs) and, with ``executors`` (any master but local: there the tasks run in the driver's JVM), every
    executor's, read by a tiny Spark job in its own job group."""
    name, driver = _driver_counters(spark)
    jvms = {name: driver}
    if executors:
        context = spark.sparkContext
        group = context.getLocalProperty("spark.jobGroup.id")
        context.setJobGroup(STATS_GROUP, STATS_GROUP)
        try:
            jvms.update({jvm: counts for jvm, counts in _executor_counters(spark).items() if jvm != name})
        finally:
            if group:
                context.setJobGroup(group, group)
            else:
                context.setLocalProperty("spark.jobGroup.id", None)
    return jvms


def samples_between(
    workload: str, before: dict[str, dict[str, int]] | None, after: dict[str, dict[str, int]]
) -> list[Sample]:
    """The requests a workload made in every JVM: ``after - before`` per JVM (an executor that started during
    the workload counts from 0), summed, for each counter of ``_COUNTERS``; none when S3A was never used."""
    before = before or {}
    totals: dict[str, int] = {}
    for jvm, counts in after.items():
        for counter, value in counts.items():
            totals[counter] = totals.get(counter, 0) + value - before.get(jvm, {}).get(counter, 0)
    samples = []
    for counter, metric in _COUNTERS.items():
        if counter not in totals:
            continue
        if metric in _BYTES:
            samples.append(Sample(workload, metric, totals[counter] / 1e6, "MB"))
        else:
            unit = next(s.unit for s in METRICS if s.name == metric)
            samples.append(Sample(workload, metric, float(totals[counter]), unit))
    for duration, metric in _DURATIONS.items():
        count = totals.get(duration + "#samples", 0)
        if count > 0:
            samples.append(Sample(workload, metric, totals[duration + "#sum"] / count, "ms"))
    if len(after) > 1:
        samples.append(Sample(workload, "s3a_jvms", float(len(after)), "JVMs"))
    return samples
