"""Paper 000's Spark transforms (pyspark-benchmark semantics): datagen, group-by, repartition, joins.

Default mode keeps Python out of the data path: the dataset is generated in the JVM
and every timed operation ends with Spark's ``noop`` write, so no row is pickled to a
Python worker. ``compat`` mode reproduces the reference tool (a Python UDF for the
value column, CSV read without a schema, ``rdd.count()`` as the action) so results
can be set beside it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from storbench.results.metrics import DEVICE_HEADLINE, metric_table
from storbench.context import RunContext
from storbench.errors import WorkloadError
from storbench.results.model import Sample
from storbench.workloads.base import Workload, register
from storbench.workloads.params import FLUSH, Param
from storbench.workloads.on_spark import spark_session

METRIC_SECTION = 20  # where this section comes in reports (storbench.analysis.metrics)

# Shared by every workload of the family: they all read the one dataset datagen wrote.
DATASET_PARAMS = (
    Param("rows", int, 200_000, "rows in the generated dataset", minimum=1),
    Param("partitions", int, 4, "partitions (files) of the generated dataset", minimum=1),
    Param("format", str, "csv", "storage format of the dataset", choices=("csv", "parquet")),
    Param("seed", int, 8675309, "seed of the deterministic generator"),
    Param("cold_cache", bool, True, "evict the dataset's own files from the page cache before each timed operation"),
)
METRICS = metric_table("""  # reported by datagen
    rows       | Rows         | rows | max | more/fewer
    dataset_mb | Dataset size | MB   | max | larger/smaller
""")
REPARTITION_PARAMS = (Param("repartition_partitions", int, 200, "N in repartition(N, prefix4)", minimum=1),)

# Bytes per row on disk, for the free-space check (CSV rows are ~75 bytes, per the reference).
BYTES_PER_ROW = {"csv": 80, "parquet": 60}
SCHEMA_DDL = "value STRING, prefix2 STRING, prefix4 STRING, prefix8 STRING, float_val DOUBLE, integer_val BIGINT"


@dataclass
class DatasetState:
    """The dataset datagen wrote, which every timed transform (and the scan) reads: its URI and format."""

    uri: str | None = None
    format: str = "csv"


def dataset(ctx: RunContext) -> DatasetState:
    """The run's dataset; a clear error when no datagen ran before."""
    state = ctx.state(DatasetState)
    if state.uri is None:
        raise WorkloadError("no dataset: the suite must run 'datagen' before the timed operations")
    return state


@register
class Datagen(Workload):
    engine = "spark"
    name = "datagen"
    version = "1"
    description = "Generate the dataset (value, prefix2/4/8, float_val, integer_val) and write it to the target"
    params = DATASET_PARAMS + (FLUSH,)
    metrics = METRICS

    def estimated_bytes(self, params: dict[str, Any]) -> int:
        """Dataset plus shuffle space (repartition writes the whole dataset once more)."""
        return int(params["rows"] * BYTES_PER_ROW[params["format"]] * 2.2)

    def frame(self, spark: Any, mode: str, params: dict[str, Any]) -> Any:
        """The dataset's DataFrame; in compat mode the reference's calls (tests/data/compat/pyspark-benchmark.json)."""
        from pyspark.sql import functions as F

        rows = spark.range(0, params["rows"], 1, params["partitions"])
        if mode == "compat":

            def getUUID() -> str:  # noqa: N802 - the reference's UDF, name and body; nested: pickled by value,
                return uuid.uuid4().hex  # so the workers need nothing of storbench

            value = F.udf(getUUID, "string")()
        else:
            # md5 of (seed, id) gives 32 hex chars, deterministic and generated in the JVM.
            value = F.md5(F.concat_ws(":", F.lit(str(params["seed"])), F.col("id").cast("string")))
        return (
            rows.withColumn("value", value)
            .withColumn("prefix2", F.substring("value", 1, 2))
            .withColumn("prefix4", F.substring("value", 1, 4))
            .withColumn("prefix8", F.substring("value", 1, 8))
            .withColumn("float_val", F.rand(seed=params["seed"]) * 1_000_000)
            .withColumn("integer_val", F.col("float_val").cast("long"))
            .drop("id")
        )

    def prepare(self, ctx: RunContext, params: dict[str, Any]) -> None:
        """A sweep point (or repetition) regenerates the dataset: the previous one goes here, untimed, through the
        target's own client, not inside the window (issue 26)."""
        ctx.state(DatasetState).uri = None
        ctx.target.delete(ctx.data_uri("dataset"))

    def run(self, ctx: RunContext, params: dict[str, Any]) -> list[Sample]:
        frame = self.frame(spark_session(ctx), ctx.mode, params)
        uri = ctx.data_uri("dataset")
        writer = frame.write.mode("errorifexists")  # inside the run root, removed by prepare
        with ctx.measure():
            if params["format"] == "csv":
                writer.option("header", True).csv(uri)
            else:
                writer.parquet(uri)
        state = ctx.state(DatasetState)
        state.uri, state.format = uri, params["format"]
        return [
            Sample(self.name, "rows", float(params["rows"]), "rows", 0),
            Sample(self.name, "dataset_mb", ctx.target.size_bytes(uri) / 1e6, "MB", 0),
        ]


class _TimedTransform(Workload):
    engine = "spark"
    after = ("datagen",)
    """Re-reads the dataset from storage (never cached) and times one transform."""

    params = DATASET_PARAMS
    headline = DEVICE_HEADLINE  # paper 000's figures: time to complete and the device ones (the default, said here)

    def ops_per_s(self, params: dict[str, Any], samples: list[Sample], seconds: float) -> float | None:
        """Rows transformed per second: each transform reads every row of the dataset once."""
        return params["rows"] / seconds if seconds > 0 else None

    def prepare(self, ctx: RunContext, params: dict[str, Any]) -> None:
        if params["cold_cache"]:
            ctx.target.evict(dataset(ctx).uri)

    def read(self, ctx: RunContext) -> Any:
        written = dataset(ctx)
        reader = spark_session(ctx).read
        if written.format == "parquet":
            return reader.parquet(written.uri)
        if ctx.mode == "compat":
            return reader.csv(written.uri, header=True)  # all strings, as the reference reads it
        return reader.csv(written.uri, header=True, schema=SCHEMA_DDL)

    def transform(self, frame: Any, params: dict[str, Any]) -> Any:
        raise NotImplementedError

    def run(self, ctx: RunContext, params: dict[str, Any]) -> list[Sample]:
        # Read before the window, as the reference makes its DataFrame before its timers: a CSV read without
        # a schema (compat) runs a job for the header here, which the reference does not time.
        frame = self.read(ctx)
        with ctx.measure():
            result = self.transform(frame, params)
            if ctx.mode == "compat":
                result.rdd.count()  # the reference's action: rows travel through Python
            else:
                result.write.format("noop").mode("overwrite").save()
        return []


def _group_counts(frame: Any) -> Any:
    from pyspark.sql import functions as F

    return frame.groupBy("prefix2").agg(F.count("*").alias("total_count"))


@register
class GroupBy(_TimedTransform):
    name = "groupby"
    description = "groupBy(prefix2) with count, countDistinct(prefix4/prefix8), sum(float_val/integer_val)"

    def transform(self, frame: Any, params: dict[str, Any]) -> Any:
        from pyspark.sql import functions as F

        return frame.groupBy("prefix2").agg(
            F.count("*").alias("total_count"),
            F.countDistinct("prefix4").alias("prefix4_count"),
            F.countDistinct("prefix8").alias("prefix8_count"),
            F.sum("float_val").alias("float_val_sum"),
            F.sum("integer_val").alias("integer_val_sum"),
        )


@register
class Repartition(_TimedTransform):
    name = "repartition"
    description = "repartition(N, prefix4): a full shuffle of the dataset"
    params = DATASET_PARAMS + REPARTITION_PARAMS

    def transform(self, frame: Any, params: dict[str, Any]) -> Any:
        return frame.repartition(params["repartition_partitions"], "prefix4")


@register
class InnerJoin(_TimedTransform):
    name = "join"
    description = "inner join of the dataset with groupBy(prefix2).count() on prefix2"

    def transform(self, frame: Any, params: dict[str, Any]) -> Any:
        return frame.join(_group_counts(frame), on="prefix2", how="inner")


@register
class BroadcastJoin(_TimedTransform):
    name = "broadcast-join"
    description = "the same inner join with the grouped side broadcast"

    def transform(self, frame: Any, params: dict[str, Any]) -> Any:
        from pyspark.sql import functions as F

        return frame.join(F.broadcast(_group_counts(frame)), on="prefix2", how="inner")
