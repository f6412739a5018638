"""TeraGen → TeraSort → TeraValidate (papers 001, 002), and TPCx-HS's HSGen/HSSort/HSValidate.

Records are Hadoop TeraGen's own 100-byte rows (GenSort's 10-byte keys from its 128-bit
random sequence, the row id in hex, filler), generated in the JVM (storbench.jvm.tera, see
``terasort.records``) with no Python or per-row SQL in the path. ``format`` chooses how they are
stored, in files of ``partition_mb``: ``parquet`` (uncompressed, key and value binary columns)
or ``tera`` (Hadoop's raw 100-byte record files, which Hadoop's own TeraSort and TeraValidate
read, and which storbench reads from Hadoop's TeraGen). Bytes on storage ≈ 100 × records.
The checksum is TeraValidate's: the sum of every record's CRC32, order-independent,
so TeraValidate can prove that the sort lost, duplicated or altered nothing; for the
same row count it equals the one Hadoop's TeraValidate prints (in hex).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from storbench.results.metrics import metric_table
from storbench.context import RunContext
from storbench.engines import s3a
from storbench.engines.spark import SparkEngine
from storbench.errors import InputError, WorkloadError
from storbench.results.model import Sample
from storbench.services.jvm import ensure_launcher_jar
from storbench.workloads.terasort import records as tera_records
from storbench.workloads.base import Workload, register, variant
from storbench.workloads.params import FLUSH, Param
from storbench.workloads.on_spark import spark_session

METRIC_SECTION = 50  # where this section comes in reports (storbench.analysis.metrics)

RECORD_BYTES = 100
TERA_PARAMS = (
    Param("size_bytes", int, 100_000_000, "data set size in bytes (records = size / 100), e.g. 1G", minimum=100),
    Param(
        "partition_mb", int, 128, "size of each generated and sorted file in MB (paper 001: 128, 512, 1024)", minimum=1
    ),
    Param(
        "seed",
        int,
        0,
        "first row of TeraGen's sequence: 0 gives exactly Hadoop TeraGen's rows; another value "
        "gives rows seed … seed+N-1, a different data set of the same distribution",
        minimum=0,
    ),
    Param(
        "format",
        str,
        "parquet",
        "how records are stored: parquet (key/value binary columns) or tera "
        "(Hadoop's 100-byte record files, readable by Hadoop's TeraSort and TeraValidate)",
        choices=("parquet", "tera"),
    ),
    Param(
        "checksum",
        bool,
        True,
        "format=tera on file://: write through Hadoop's checksummed local file system "
        "(a CRC per 512 bytes and .crc side files, as Hadoop's TeraGen writes there) or, false, through the raw "
        "one (the drive's rate without the CPU's CRC rate); hdfs:// always checksums, s3:// never",
    ),
    Param(
        "committer",
        str,
        s3a.DEFAULT_COMMITTER,
        "output committer on s3:// targets: file (Spark's classic, "
        "rename on commit), directory, partitioned or magic (S3A's)",
        choices=s3a.COMMITTERS,
    ),
)
# TeraGen/TeraSort/TeraValidate and TPCx-HS (papers 001, 002)
METRICS = metric_table("""
    records          | Records                      | records   | max  | more/fewer
    records_per_s    | Records per second           | records/s | mean | higher/lower
    data_mbps        | Data rate (size / time)      | MB/s      | mean | higher/lower
    gb_per_core_hour | Data processed per core-hour | GB/core-h | mean | higher/lower
    hs_elapsed_s     | TPCx-HS elapsed time         | s         | mean | faster/slower
    hsph             | HSph@SF                      | HSph@SF   | mean | higher/lower
""")
TERA_BLOCK = 10_240  # records per generated block for format=tera: 1,024,000 bytes, 250 whole pages per write
PARQUET_OPTIONS = {"compression": "none", "parquet.enable.dictionary": "false"}


def records_of(params: dict[str, Any]) -> int:
    return params["size_bytes"] // RECORD_BYTES


def partitions_of(params: dict[str, Any]) -> int:
    return max(1, math.ceil(params["size_bytes"] / (params["partition_mb"] * 1_000_000)))


def _checksum_and_count(frame: Any) -> tuple[int, int]:
    from pyspark.sql import functions as F

    row = frame.agg(
        F.sum(F.crc32(F.concat("key", "value")).cast("decimal(38,0)")).alias("checksum"), F.count("*").alias("records")
    ).first()
    return int(row["checksum"] or 0), int(row["records"])


def _throughput(name: str, ctx: RunContext, params: dict[str, Any], repetition_samples: list[Sample]) -> list[Sample]:
    seconds = ctx.window.span.end - ctx.window.span.start if ctx.window.span else None
    if not seconds:
        return repetition_samples
    records, cores = records_of(params), ctx.engine(SparkEngine).default_parallelism()
    return repetition_samples + [
        Sample(name, "records_per_s", records / seconds, "records/s"),
        Sample(name, "data_mbps", records * RECORD_BYTES / 1e6 / seconds, "MB/s"),
        # paper 001's price/performance view: data processed per core-hour = size / cores / seconds × 3600
        Sample(
            name,
            "gb_per_core_hour",
            records * RECORD_BYTES / 1e9 / cores / seconds * 3600,
            "GB/core-h",
            labels={"cores": str(cores)},
        ),
    ]


class _TeraPhase(Workload):
    engine = "spark"
    params = TERA_PARAMS
    metrics = METRICS
    headline = ("completion_time", "hs_elapsed_s", "hsph", "data_mbps", "records_per_s")  # the papers' times, HSph
    phase = ""  # "gen" | "sort" | "validate": the shared state keys are per phase, not per name
    version = "2"  # 2: Hadoop TeraGen's rows from the JVM (1: md5 keys in Spark SQL), format=tera

    def estimated_bytes(self, params: dict[str, Any]) -> int:
        return 0

    def check(self, ctx: RunContext, params: dict[str, Any]) -> None:
        super().check(ctx, params)
        if params["committer"] != s3a.DEFAULT_COMMITTER and ctx.target.scheme != "s3":
            raise InputError(
                f"workload {self.name}: committer={params['committer']} is an S3A committer and "
                f"needs an s3:// target; on {ctx.target.kind} use committer=file"
            )
        if params["committer"] != s3a.DEFAULT_COMMITTER and params["format"] == "tera":
            raise InputError(
                f"workload {self.name}: format=tera writes through Hadoop's FileOutputCommitter; "
                f"committer={params['committer']} applies to format=parquet only (use committer=file)"
            )
        if not params["checksum"] and (params["format"] != "tera" or ctx.target.scheme == "hdfs"):
            raise InputError(
                f"workload {self.name}: checksum=false needs format=tera on file:// (Spark's Parquet "
                f"writer and HDFS always checksum); got format={params['format']} on "
                f"{ctx.target.scheme}://"
            )
        ensure_launcher_jar()  # the generator and the record formats are JVM classes: built before Spark starts

    def checksummed(self, ctx: RunContext, params: dict[str, Any]) -> bool:
        """Whether the written bytes pass through Hadoop's CRC layer, recorded as a window rule (compare calls
        runs that differ not comparable: the CRC rate is the CPU's, not the drive's)."""
        on = ctx.target.scheme != "s3" and bool(params["checksum"])
        ctx.window.rules["checksum"] = "true" if on else "false"
        return on

    def _record_phase_time(self, ctx: RunContext) -> None:
        if ctx.window.span:
            ctx.state(TeraState).phase_s[self.phase] = ctx.window.span.end - ctx.window.span.start

    def remove_previous(self, ctx: RunContext, uri: str) -> None:
        """Untimed set-up (``prepare``): an earlier repetition's, warm-up's or sweep point's output at ``uri`` is
        removed through the target's own client, outside the window and S3A's request counters, so that every
        repetition writes into the same empty place and its window holds its write alone (issue 26)."""
        ctx.target.delete(uri)

    def input(self, ctx: RunContext, field_name: str, missing: str) -> "TeraState":
        """The run's TeraState once the earlier phase left ``field_name`` (a URI), its files evicted from the
        page cache so the phase reads from the device; a phase run without it fails in one line."""
        tera = ctx.state(TeraState)
        uri = getattr(tera, field_name)
        if uri is None:
            raise WorkloadError(f"{self.name}: {missing}")
        ctx.target.evict(uri)
        return tera


@dataclass
class TeraState:
    """What the phases of a run share: the generated records (where, how many, their checksum: the sum of
    each record's CRC32), the sorted output's URI, and each phase's seconds (for HSph@SF)."""

    uri: str | None = None
    checksum: int = 0
    records: int = 0
    format: str = "parquet"
    sorted_uri: str | None = None
    phase_s: dict[str, float] = field(default_factory=dict)


class _Gen(_TeraPhase):
    phase = "gen"
    params = TERA_PARAMS + (FLUSH,)
    description = "generate N 100-byte records (10-byte key, 90-byte value) and verify count and checksum"

    def estimated_bytes(self, params: dict[str, Any]) -> int:
        return params["size_bytes"] * 3  # input, sorted output, shuffle space

    def prepare(self, ctx: RunContext, params: dict[str, Any]) -> None:
        state = ctx.state(TeraState)
        state.uri = state.sorted_uri = None  # the records, and their sort, are gone until this run writes anew
        self.remove_previous(ctx, ctx.data_uri("tera-in"))

    def run(self, ctx: RunContext, params: dict[str, Any]) -> list[Sample]:
        spark, records, uri = spark_session(ctx), records_of(params), ctx.data_uri("tera-in")
        tera = params["format"] == "tera"  # record files take blocks of records: no per-record step in Spark
        rows = tera_records.generated(spark, records, partitions_of(params), params["seed"], TERA_BLOCK if tera else 1)
        checksum = self.checksummed(ctx, params)
        with s3a.committer(spark, params["committer"], uri), ctx.measure():
            if tera:
                tera_records.write(spark, rows, uri, checksum)
            else:
                tera_records.frame(spark, rows).write.mode("errorifexists").options(**PARQUET_OPTIONS).parquet(uri)
        self._record_phase_time(ctx)
        if tera:  # TeraGen's verify stage
            per_file = tera_records.scan(spark, uri)
            checksum, count = sum(f["checksum"] for f in per_file), sum(f["records"] for f in per_file)
        else:
            checksum, count = _checksum_and_count(spark.read.parquet(uri))
        if count != records:
            raise WorkloadError(f"{self.name}: wrote {count} records, expected {records}")
        state = ctx.state(TeraState)  # a new input: a sorted output of an earlier one is no longer its sort
        state.uri, state.checksum, state.records, state.format, state.sorted_uri = (
            uri,
            checksum,
            records,
            params["format"],
            None,
        )
        return _throughput(self.name, ctx, params, [Sample(self.name, "records", float(records), "records")])


class _Sort(_TeraPhase):
    phase = "sort"
    params = TERA_PARAMS + (FLUSH,)
    description = "sort the generated records into a total order by key (sampled range partitioning)"

    def prepare(self, ctx: RunContext, params: dict[str, Any]) -> None:
        ctx.state(TeraState).sorted_uri = None
        self.remove_previous(ctx, ctx.data_uri("tera-out"))

    def run(self, ctx: RunContext, params: dict[str, Any]) -> list[Sample]:
        tera = self.input(ctx, "uri", "no generated data; the suite must run the generator first")
        out, spark, source = ctx.data_uri("tera-out"), spark_session(ctx), tera.uri
        # TeraSort's order: sampled key ranges (a total order across part files), sorted inside each
        checksum = self.checksummed(ctx, params)
        with s3a.committer(spark, params["committer"], out), ctx.measure():
            if tera.format == "tera":
                tera_records.write(
                    spark,
                    tera_records.sort(spark, tera_records.read(spark, source), partitions_of(params)),
                    out,
                    checksum,
                )
            else:
                (
                    spark.read.parquet(source)
                    .repartitionByRange(partitions_of(params), "key")
                    .sortWithinPartitions("key")
                    .write.mode("errorifexists")
                    .options(**PARQUET_OPTIONS)
                    .parquet(out)
                )
        self._record_phase_time(ctx)
        tera.sorted_uri = out
        return _throughput(self.name, ctx, params, [])


class _Validate(_TeraPhase):
    phase = "validate"
    description = "check global key order across files, the record count and the checksum against the generator's"

    def run(self, ctx: RunContext, params: dict[str, Any]) -> list[Sample]:
        tera = self.input(ctx, "sorted_uri", "no sorted output; the suite must run the sort first")
        validate = validate_records if tera.format == "tera" else validate_sorted
        with ctx.measure():
            problems = validate(spark_session(ctx), tera.sorted_uri, tera.records, tera.checksum)
        self._record_phase_time(ctx)
        if problems:
            raise WorkloadError(
                f"{self.name}: {problems[0]}"
                + (f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else "")
            )
        return _throughput(self.name, ctx, params, [])


def validate_sorted(spark: Any, uri: str, records: int, checksum: int) -> list[str]:
    """Problems found in a sorted output: order inside each file and across file boundaries, count, checksum.

    Files are the partitions, in name order (part-00000, part-00001, ...); a position
    inside a file is Parquet's own row index, so the message names partition and offset.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    frame = spark.read.parquet(uri).select(
        "key", "value", F.col("_metadata.file_name").alias("file"), F.col("_metadata.row_index").alias("offset")
    )
    in_file = Window.partitionBy("file").orderBy("offset")
    problems = []
    disorder = (
        frame.withColumn("previous", F.lag("key").over(in_file))
        .where(F.col("previous") > F.col("key"))
        .orderBy("file", "offset")
        .select("file", "offset")
        .first()
    )
    per_file = (
        frame.groupBy("file")
        .agg(
            F.min("key").alias("first"),
            F.max("key").alias("last"),
            F.count("*").alias("records"),
            F.sum(F.crc32(F.concat("key", "value")).cast("decimal(38,0)")).alias("checksum"),
        )
        .orderBy("file")
        .collect()
    )
    files = [row["file"] for row in per_file]
    if disorder is not None:
        problems.append(
            f"partition {files.index(disorder['file'])} ({disorder['file']}): the record at offset "
            f"{disorder['offset']} has a smaller key than the record before it"
        )
    return problems + _cross_file_problems(per_file, records, checksum)


def validate_records(spark: Any, uri: str, records: int, checksum: int) -> list[str]:
    """``validate_sorted`` for Hadoop's record files (format=tera): one JVM pass per file, offsets in records."""
    per_file = tera_records.scan(spark, uri)
    problems = [
        f"partition {index} ({entry['file']}): the record at offset {entry['misorder'] // RECORD_BYTES} "
        f"has a smaller key than the record before it"
        for index, entry in enumerate(per_file)
        if entry["misorder"] >= 0
    ]
    return problems + _cross_file_problems(per_file, records, checksum)


def _cross_file_problems(per_file: list[Any], records: int, checksum: int) -> list[str]:
    """TeraValidate's reduce side: file boundaries in order, the record count and the checksum."""
    problems = []
    filled = [(index, entry) for index, entry in enumerate(per_file) if entry["records"]]  # empty: no keys
    for (before, previous), (index, entry) in zip(filled, filled[1:]):
        if entry["first"] < previous["last"]:
            problems.append(
                f"partition {index} ({entry['file']}): its first key (offset 0) is smaller than the "
                f"last key of partition {before}"
            )
    total = sum(row["records"] for row in per_file)
    if total != records:
        problems.append(f"{total} records in the sorted output, the generator wrote {records}")
    found = int(sum((row["checksum"] or 0) for row in per_file))
    if found != checksum:
        problems.append(f"checksum {found:x} of the sorted output differs from the generator's {checksum:x}")
    return problems


TeraGen = variant(_Gen, "teragen", _Gen.description)
TeraSort = variant(_Sort, "terasort", _Sort.description, after=("teragen",))
TeraValidate = variant(_Validate, "teravalidate", _Validate.description, after=("teragen", "terasort"))
HSGen = variant(_Gen, "hsgen", "TPCx-HS HSGen: " + _Gen.description)
HSSort = variant(_Sort, "hssort", "TPCx-HS HSSort: " + _Sort.description, after=("hsgen",))


@register
class HSValidate(_Validate):
    name = "hsvalidate"
    after = ("hsgen", "hssort")
    description = "TPCx-HS HSValidate: " + _Validate.description + "; reports HSph@SF"
    params = TERA_PARAMS + (
        Param("scale_factor_bytes", int, 10**12, "bytes per TPCx-HS scale factor unit (1 TB)", minimum=1),
    )

    def run(self, ctx: RunContext, params: dict[str, Any]) -> list[Sample]:
        samples = super().run(ctx, params)
        phases = ctx.state(TeraState).phase_s
        if set(phases) >= {"gen", "sort", "validate"}:
            elapsed = sum(phases[p] for p in ("gen", "sort", "validate"))
            scale_factor = params["size_bytes"] / params["scale_factor_bytes"]
            samples += [
                Sample("tpcx-hs", "hs_elapsed_s", elapsed, "s"),
                Sample(
                    "tpcx-hs", "hsph", scale_factor / (elapsed / 3600), "HSph@SF", labels={"SF": f"{scale_factor:g}"}
                ),
            ]
        return samples
