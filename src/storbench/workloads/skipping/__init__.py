"""Data skipping on and off (paper 001's xskipper measurement, with Spark's own skipping): skipping-gen writes a
fact table laid out so that skipping can work (:mod:`storbench.workloads.skipping.data`) and four selective
queries read it, each timed on its own:

- ``skipping-point``: equality on the sorted ``id`` (row-group min/max statistics);
- ``skipping-range``: a range of 1% of the ids (the same statistics);
- ``skipping-lookup``: equality on ``item_sk``, spread over every row group (Parquet's bloom filters);
- ``skipping-join``: the fact table joined to the date dimension filtered on a date range, TPC-DS style (dynamic
  partition pruning: the dimension's filter selects the fact's date folders at run time).

``skipping=on`` is Spark's defaults (Parquet filter pushdown, partition pruning, DPP); ``off`` turns them off
(``spark.sql.parquet.filterPushdown`` and ``spark.sql.optimizer.dynamicPartitionPruning.enabled`` false, and the
fact files read with no partition discovery: :func:`~storbench.workloads.skipping.data.fact_frame` says why).
Both modes run the same SQL on the same files and must give the same answer (checked when both ran in one run,
and against the generator's arithmetic). Per query: time, bytes read from the target, rows scanned, files and
partition folders read; the engine adds S3A's GETs on s3:// and Spark's task input, the telemetry the devices.
``storbench compare OFF ON`` says it in the paper's words: "skipping-join read 14× fewer bytes and ran 6.0×
faster" (analysis.wording.read_and_ran).
"""

from __future__ import annotations

import re
from typing import Any

from storbench.context import RunContext
from storbench.engines.spark import SparkEngine
from storbench.errors import InputError, WorkloadError
from storbench.results.metrics import metric_table
from storbench.results.model import Sample
from storbench.targets import Target
from storbench.workloads.skipping import data
from storbench.workloads.base import Workload, register, variant
from storbench.workloads.on_spark import spark_session
from storbench.workloads.params import FLUSH, Param
from storbench.workloads.skipping.plan import bytes_read, scan_totals
from storbench.workloads.tpcds.check import summarize

MODES = ("on", "off")
WITH_STATISTICS = ("parquet",)  # formats whose files carry what skipping needs (row-group statistics)
DATA_PARAMS = (
    Param("rows", int, 400_000, "rows in the fact table (ids 0 … rows-1)", minimum=100),
    Param("dates", int, 20, "dates (partition folders, one file each) the rows are spread over", minimum=2),
    Param(
        "row_group_kb",
        int,
        128,
        "Parquet row group size in KiB (Parquet's default: 131072; small at the tiny "
        "scale, so that a file holds several)",
        minimum=1,
    ),
    Param(
        "format",
        str,
        "parquet",
        "storage format of both tables: parquet, or csv (no statistics: skipping=off only, a baseline)",
        choices=("parquet", "csv"),
    ),
    Param("bloom", bool, True, "write a Parquet bloom filter per row group on item_sk (skipping-lookup uses it)"),
    Param("seed", int, 11, "seed of item_sk's spread", minimum=0),
)
SKIPPING = Param(
    "skipping",
    str,
    "on",
    "on: Spark's defaults (Parquet filter pushdown, partition pruning, dynamic partition pruning); off: none of them",
    choices=MODES,
)
COLD_CACHE = Param("cold_cache", bool, True, "evict both tables' files from the page cache before each query")
QUERY_PARAMS = DATA_PARAMS + (SKIPPING, COLD_CACHE)
OFF_CONF = {"spark.sql.parquet.filterPushdown": "false", "spark.sql.optimizer.dynamicPartitionPruning.enabled": "false"}
ON_CONF = {key: "true" for key in OFF_CONF}  # Spark's defaults, set again: a sweep point of off came before

# the dataset's size and rows are declared alike by spark_transforms and tpcds
METRICS = metric_table("""
    target_read_mb  | Bytes read from the target  | MB         | mean | fewer/more | factor words-first
    rows_scanned    | Rows scanned                | rows       | mean | fewer/more | factor words-first
    files_read      | Files read                  | files      | mean | fewer/more
    files_mb        | Size of the files read      | MB         | mean | less/more
    partitions_read | Partition folders read      | folders    | mean | fewer/more
    answer_rows     | Rows in the answer          | rows       | max  | more/fewer
    rows            | Rows                        | rows       | max  | more/fewer
    dataset_mb      | Dataset size                | MB         | max  | larger/smaller
""")
HADOOP_SCHEME = {"s3": "s3a"}
# Hadoop 3.5's default S3A read stream (analytics) fetches an object of a few MB whole and keeps it in the JVM:
# measured here, the first query GETs every file whole in either mode and the next queries GET nothing. The
# classic stream GETs the ranges Parquet asks for, uncached, as paper 001's S3A did.
S3A_CONF = {"spark.hadoop.fs.s3a.input.stream.type": "classic"}


@register
class SkippingGen(Workload):
    engine = "spark"
    name = "skipping-gen"
    description = (
        "write the skipping family's fact table (sorted on id, one Parquet file per date folder, small row "
        "groups, bloom filters on item_sk) and its date dimension"
    )
    params = DATA_PARAMS + (FLUSH,)
    metrics = METRICS

    def estimated_bytes(self, params: dict[str, Any]) -> int:
        return params["rows"] * data.BYTES_PER_ROW * 2

    def prepare(self, ctx: RunContext, params: dict[str, Any]) -> None:
        """A new data set (a repetition, a sweep point): the previous one goes, untimed, through the target."""
        state = ctx.state(data.SkippingData)
        state.fact_uri = state.dim_uri = None
        ctx.target.delete(ctx.data_uri("skipping"))

    def run(self, ctx: RunContext, params: dict[str, Any]) -> list[Sample]:
        fact, dim = ctx.data_uri("skipping/fact"), ctx.data_uri("skipping/date_dim")
        spark = spark_session(ctx)
        with ctx.measure():
            data.write(
                spark,
                params["rows"],
                params["dates"],
                params["seed"],
                params["format"],
                params["row_group_kb"],
                params["bloom"],
                fact,
                dim,
            )
        state = ctx.state(data.SkippingData)
        state.fact_uri, state.dim_uri, state.format = fact, dim, params["format"]
        state.rows, state.dates, state.seed = params["rows"], params["dates"], params["seed"]
        return [
            Sample(self.name, "rows", float(params["rows"]), "rows"),
            Sample(self.name, "dataset_mb", ctx.target.size_bytes(ctx.data_uri("skipping")) / 1e6, "MB"),
        ]


class _Query(Workload):
    engine = "spark"
    after = ("skipping-gen",)
    params = QUERY_PARAMS
    metrics = METRICS
    headline = ("completion_time", "target_read_mb", "rows_scanned", "files_read")  # paper 001: less read, faster
    # reading less is the point: a lower device read rate is what skipping does, not a loss
    directions = {"max_read_mbps": "lower/higher", "cluster_read_mbps": "lower/higher"}
    query = ""
    mode: str | None = None  # the -off variants' fixed mode (a suite runs both of the pair: spark-s3-001)

    def _mode(self, params: dict[str, Any]) -> str:
        return self.mode or params["skipping"]

    def engine_conf(self, params: dict[str, Any]) -> dict[str, str]:
        return dict(S3A_CONF)

    def check_params(self, params: dict[str, Any], target: Target) -> None:
        if self._mode(params) == "on" and params["format"] not in WITH_STATISTICS:
            raise InputError(
                f"workload {self.name}: skipping=on needs a format with statistics "
                f"({', '.join(WITH_STATISTICS)}); format={params['format']} has none "
                f"(use --set skipping=off for a {params['format']} baseline)"
            )

    def sql(self, d: data.SkippingData) -> str:
        raise NotImplementedError

    def expected_rows(self, d: data.SkippingData) -> int:
        raise NotImplementedError

    def counted(self, rows: list[Any]) -> int:
        """The fact rows the answer counts (a row per match, unless the query counts them itself)."""
        return len(rows)

    def prepare(self, ctx: RunContext, params: dict[str, Any]) -> None:
        d = ctx.state(data.SkippingData)
        if d.fact_uri is None:
            raise WorkloadError(f"{self.name}: no data; the suite must run skipping-gen first")
        if params["cold_cache"]:
            ctx.target.evict(d.fact_uri)
            ctx.target.evict(d.dim_uri)

    def run(self, ctx: RunContext, params: dict[str, Any]) -> list[Sample]:
        spark, d, on = spark_session(ctx), ctx.state(data.SkippingData), self._mode(params) == "on"
        for key, value in (ON_CONF if on else OFF_CONF).items():
            spark.conf.set(key, value)
        data.fact_frame(spark, d, on).createOrReplaceTempView("fact")
        data.dim_frame(spark, d).createOrReplaceTempView("date_dim")
        frame = spark.sql(self.sql(d))
        local = re.fullmatch(r"local(\[.*\])?", ctx.engine(SparkEngine).master) is not None
        scheme = HADOOP_SCHEME.get(ctx.target.scheme, ctx.target.scheme)
        before = bytes_read(spark, scheme)
        with ctx.measure():
            rows = frame.collect()
        read = bytes_read(spark, scheme) - before
        self._check_answer(ctx, d, self._mode(params), rows)
        scans = scan_totals(frame)
        return [
            Sample(self.name, "target_read_mb", read / 1e6 if local else None, "MB"),
            Sample(self.name, "rows_scanned", float(scans["rows_scanned"]), "rows"),
            Sample(self.name, "files_read", float(scans["files_read"]), "files"),
            Sample(self.name, "files_mb", scans["files_bytes"] / 1e6, "MB"),
            Sample(self.name, "partitions_read", float(scans["partitions_read"]), "folders"),
            Sample(self.name, "answer_rows", float(len(rows)), "rows"),
        ]

    def _check_answer(self, ctx: RunContext, d: data.SkippingData, mode: str, rows: list[Any]) -> None:
        """The generator's arithmetic, and the other mode's answer when it ran in this run on the same data."""
        count = self.counted(rows)
        expected = self.expected_rows(d)
        if count != expected:
            raise WorkloadError(f"{self.name}: skipping={mode} counted {count} rows, expected {expected}")
        answers = d.answers.setdefault(f"{self.query} {d.rows} {d.dates} {d.seed}", {})  # same data, any format
        answers[mode] = summarize(rows).checksum
        other = answers.get("off" if mode == "on" else "on")
        if other is not None and other != answers[mode]:
            raise WorkloadError(
                f"{self.name}: skipping={mode} answered differently from the other mode "
                f"(checksums {answers[mode]} and {other})"
            )
        ctx.artifacts.setdefault("skipping", {})[self.query] = dict(answers)


def _point_id(d: data.SkippingData) -> int:
    return d.rows * 37 // 100


def _range(d: data.SkippingData) -> tuple[int, int]:
    low = d.rows * 60 // 100
    return low, low + max(1, d.rows // 100) - 1


def _dates(d: data.SkippingData) -> tuple[int, int]:
    """The date indexes the join selects: a tenth of them, from the middle."""
    first = d.dates // 2
    return first, first + max(1, d.dates // 10) - 1


class _Point(_Query):
    query = "point"

    def sql(self, d: data.SkippingData) -> str:
        return f"SELECT {', '.join(data.COLUMNS)} FROM fact WHERE id = {_point_id(d)}"

    def expected_rows(self, d: data.SkippingData) -> int:
        return 1


class _Range(_Query):
    query = "range"

    def sql(self, d: data.SkippingData) -> str:
        low, high = _range(d)
        return f"SELECT count(*), sum(quantity), sum(price) FROM fact WHERE id BETWEEN {low} AND {high}"

    def expected_rows(self, d: data.SkippingData) -> int:
        low, high = _range(d)
        return high - low + 1

    def counted(self, rows: list[Any]) -> int:
        return int(rows[0][0])


class _Lookup(_Query):
    query = "lookup"

    def sql(self, d: data.SkippingData) -> str:
        item = data.item_of(d.rows * 83 // 100, d.seed)
        return f"SELECT {', '.join(data.COLUMNS)} FROM fact WHERE item_sk = {item}"

    def expected_rows(self, d: data.SkippingData) -> int:
        return 1


class _Join(_Query):
    query = "join"

    def sql(self, d: data.SkippingData) -> str:
        first, last = _dates(d)
        return (
            "SELECT d_year, d_moy, d_dom, count(*) AS n, sum(price) AS revenue FROM fact "
            "JOIN date_dim ON fact.date_sk = date_dim.d_date_sk "
            f"WHERE d_date BETWEEN date_add(DATE'{data.FIRST_DATE}', {first}) "
            f"AND date_add(DATE'{data.FIRST_DATE}', {last}) GROUP BY d_year, d_moy, d_dom ORDER BY d_year, d_moy, d_dom"
        )

    def expected_rows(self, d: data.SkippingData) -> int:
        first, last = _dates(d)
        return data.first_id_of(last + 1, d.rows, d.dates) - data.first_id_of(first, d.rows, d.dates)

    def counted(self, rows: list[Any]) -> int:
        return sum(int(row["n"]) for row in rows)


for _cls, _what in (
    (_Point, "equality on the sorted id (row-group min/max statistics)"),
    (_Range, "a range of 1% of the sorted ids (row-group min/max statistics)"),
    (_Lookup, "equality on item_sk, spread over every row group (Parquet bloom filters)"),
    (_Join, "the fact table joined to the date dimension filtered on a date range (dynamic partition pruning)"),
):
    variant(_cls, f"skipping-{_cls.query}", f"{_what}, with skipping=on or off")
    # the same query always with skipping off, beside the first in one suite (its samples, its row in reports)
    variant(
        _cls,
        f"skipping-{_cls.query}-off",
        f"{_what}, with skipping off",
        mode="off",
        params=DATA_PARAMS + (COLD_CACHE,),
    )
