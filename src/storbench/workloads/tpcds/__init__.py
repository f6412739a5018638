"""TPC-DS on Spark SQL (paper 001): tpcds-gen → tpcds-analyze → tpcds (single and multi-stream).

- ``tpcds-gen`` generates the tables at a scale factor (tpcgen-cli, one Spark task per table part on the
  executors, each laying its part out and writing it to the target from its own node) in the paper's layout
  (:mod:`storbench.workloads.tpcds.pipeline`); files, partition folders and bytes per table go to
  artifacts.json (``tpcds.generation.tables``) and the totals to the samples.
- ``tpcds-analyze`` registers them in Spark's catalog (external tables, partitions recovered)
  and collects table and column statistics, timed on its own as the paper did up front. The
  tables live in a database the run creates and drops (``storbench_<run id>``), never the user's.
- ``tpcds`` runs the 104 queries (:mod:`storbench.workloads.tpcds.queries`): for each stream
  count N in ``streams`` (e.g. ``1,2,5``), N concurrent streams in one Spark application with
  the FAIR scheduler, one Python thread per stream (PySpark's pinned threads: each stream has
  its own scheduler pool and job groups); stream 1 of N=1 runs the queries in order, every
  stream of N>1 a random permutation seeded by (seed, N, stream), recorded in artifacts.json.

Each query's outcome is one of four: checked equal (its result matched DuckDB's answer on the same
files), mismatched, failed (an error), or unchecked (no reference answer: the scale factor is above
``check_max_sf``, the data is not on this machine, the query is not in ``check_queries``, or DuckDB
failed on it). Only checked equal is OK. Per query: ``query_time`` (labels query, streams; the median
over the N streams; None unless checked equal or unchecked) and ``query_ok``: 1 checked equal, 0
mismatched or failed, None (n/a) unchecked, so an unchecked query never reads as OK, nor as a failure.
Per stream count the four counts and the total (``queries_ran``, ``queries_checked_equal``,
``queries_mismatched``, ``queries_failed``, ``queries_unchecked``) make the reports' line "104 ran: 86
checked equal, 18 unchecked". A query that fails or mismatches keeps the others running: its error goes
to the run's notes and to artifacts.json, and compare flags it; unchecked queries are noted with why.
Per-query Spark metrics come from the event log through job groups ``<workload group>@query=…,streams=…``.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from pathlib import Path
from typing import Any

from storbench.context import RunContext
from storbench.engines import spark_catalog
from storbench.engines.spark import SparkEngine
from storbench.errors import InputError, WorkloadError
from storbench.results.model import Sample
from storbench.targets.file import FileTarget
from storbench.workloads.base import Workload, register
from storbench.workloads.params import FLUSH, Param
from storbench.workloads.tpcds.check import duckdb_answers
from storbench.workloads.tpcds.data import (
    FACT_DATE_KEYS,
    PARQUET_BYTES_PER_SF,
    analyze_tables,
    duckdb_views,
    missing_tables,
    register_tables,
    tpcgen_version,
)
from storbench.workloads.tpcds.outcomes import checked, references, run_samples
from storbench.workloads.tpcds.pipeline import fetch_local, generate
from storbench.workloads.tpcds.queries import SESSION_CONF, all_texts, duckdb_connect, select_queries, to_spark
from storbench.workloads.tpcds.run_state import (
    TpcdsData,
    TpcdsState,
    check_data_param,
    dataset_of,
    drop_run_database,
    use_database,
)
from storbench.workloads.tpcds.streams import permutation, run_streams, stream_counts
from storbench.workloads.on_spark import spark_session
from storbench.workloads.tpcds.vocabulary import (
    CATALOG,
    CATALOG_DATABASE,
    CHECK_MAX_SF,
    CHECK_QUERIES,
    DATA,
    METASTORE,
    METRICS,
    SF,
)

METRIC_SECTION = 60  # where this section comes in reports (storbench.analysis.metrics)


@register
class TpcdsGen(Workload):
    engine = "spark"
    name = "tpcds-gen"
    description = (
        "generate TPC-DS at a scale factor (tpcgen-cli, a task per table part on the executors) and write "
        "it as Parquet to the target from each executor, fact "
        "tables Hive-partitioned by date key (about one file per date) or flat, files of about file_mb"
    )
    params = (
        SF,
        Param(
            "layout",
            str,
            "partitioned",
            "partitioned: the six fact tables in Hive partitions on their date key (paper 001); flat: no partitions",
            choices=("partitioned", "flat"),
        ),
        Param("file_mb", int, 32, "target Parquet file size in MB (paper 001: 32)", minimum=1),
        CHECK_MAX_SF,
        FLUSH,
    )
    metrics = METRICS
    headline = ("completion_time", "dataset_mb", "data_mbps")

    def check(self, ctx: RunContext, params: dict[str, Any]) -> None:
        super().check(ctx, params)
        ctx.state(TpcdsState).gen_planned = True

    def estimated_bytes(self, params: dict[str, Any]) -> int:
        return int(params["sf"] * PARQUET_BYTES_PER_SF * 2)  # the dataset, the parts being staged, the sort's spill

    def run(self, ctx: RunContext, params: dict[str, Any]) -> list[Sample]:
        remote = not isinstance(ctx.target, FileTarget)
        keep = remote and params["sf"] <= params["check_max_sf"]  # DuckDB's answers need a local copy
        # file://: the executors stage on the target's own file system (a rename puts a file in place)
        staging = (
            Path(ctx.root_uri.removeprefix("file://")) / "tpcds-staging"
            if not remote
            else Path(tempfile.mkdtemp(prefix=f"storbench-{ctx.run_id}-tpcds-"))
        )
        state = ctx.state(TpcdsState)
        state.staging = staging
        state.registered, state.answers = None, {}  # a new data set (a sweep point) starts afresh
        data_uri = ctx.data_uri("tpcds")
        spark = spark_session(ctx)
        threads = int(spark.sparkContext.getConf().get("spark.task.cpus", "1"))
        with ctx.measure():
            info = generate(
                spark, params["sf"], params["layout"], params["file_mb"], data_uri, None if remote else staging, threads
            )
        if keep:  # untimed: the reference's copy, not the benchmark's
            fetch_local(spark, data_uri, staging / "layout")
        else:
            shutil.rmtree(staging, ignore_errors=True)
        seconds = ctx.window.span.end - ctx.window.span.start if ctx.window.span else None
        size = ctx.target.size_bytes(data_uri)
        rows = sum(t["rows"] for t in info["tables"].values())
        state.generated = TpcdsData(
            data_uri,
            params["sf"],
            staging / "layout" if keep else Path(data_uri.removeprefix("file://")),
            not remote or keep,
        )
        ctx.artifacts.setdefault("tpcds", {})["generation"] = {"generator": f"tpcgen-cli {tpcgen_version()}", **info}
        return [
            Sample(self.name, "dataset_mb", size / 1e6, "MB"),
            Sample(self.name, "rows", float(rows), "rows"),
            Sample(self.name, "generate_s", info["generate_s"], "s"),
            Sample(self.name, "layout_s", info["layout_s"], "s"),
            Sample(self.name, "data_mbps", size / 1e6 / seconds if seconds else None, "MB/s"),
            *layout_samples(self.name, info["tables"]),
        ]

    def cleanup(self, ctx: RunContext, params: dict[str, Any]) -> None:
        staging = ctx.state(TpcdsState).staging
        if staging:  # a remote target's local copy, or a file:// target's staging left by a failed run
            shutil.rmtree(staging, ignore_errors=True)


def layout_samples(workload: str, tables: dict[str, Any]) -> list[Sample]:
    """The layout as written: totals, and files per fact table (where a small-file explosion would show)."""
    out = [
        Sample(workload, "files", float(sum(t["files"] for t in tables.values())), "files"),
        Sample(workload, "partition_folders", float(sum(t["partitions"] for t in tables.values())), "folders"),
        Sample(
            workload, "max_files_per_folder", float(max(t["max_files_per_folder"] for t in tables.values())), "files"
        ),
    ]
    for table in FACT_DATE_KEYS:
        if table in tables:
            out.append(Sample(workload, "files", float(tables[table]["files"]), "files", labels={"table": table}))
    return out


@register
class TpcdsAnalyze(Workload):
    engine = "spark"
    name = "tpcds-analyze"
    after = ("tpcds-gen",)
    description = (
        "register the TPC-DS tables in Spark's catalog (partitions recovered) and collect table and "
        "column statistics (ANALYZE TABLE … FOR ALL COLUMNS)"
    )
    params = (SF, DATA, CATALOG, METASTORE, CATALOG_DATABASE)
    metrics = METRICS

    def check_params(self, params: dict[str, Any], target: Any) -> None:
        super().check_params(params, target)
        if params["catalog_database"]:
            raise InputError(
                f"workload {self.name}: catalog_database={params['catalog_database']} is read-only "
                f"and {self.name} registers tables; run tpcds alone to read that database"
            )

    def check(self, ctx: RunContext, params: dict[str, Any]) -> None:
        super().check(ctx, params)
        check_data_param(ctx, params, self.name)

    def run(self, ctx: RunContext, params: dict[str, Any]) -> list[Sample]:
        dataset = dataset_of(ctx, params, self.name)
        spark = spark_session(ctx)
        for key, value in SESSION_CONF.items():
            spark.conf.set(key, value)
        database = use_database(ctx)
        with ctx.measure():
            t0 = ctx.mark()
            partitions = register_tables(spark, dataset.data_uri, database)
            t1 = ctx.mark()
            analyze_tables(spark, database)
            t2 = ctx.mark()
        ctx.state(TpcdsState).registered = dataset.data_uri
        ctx.artifacts.setdefault("tpcds", {})["partitions"] = partitions
        return [
            Sample(self.name, "register_s", t1 - t0, "s"),
            Sample(self.name, "analyze_s", t2 - t1, "s"),
            Sample(self.name, "partitions", float(sum(partitions.values())), "partitions"),
        ]

    def cleanup(self, ctx: RunContext, params: dict[str, Any]) -> None:
        drop_run_database(ctx)


@register
class Tpcds(Workload):
    engine = "spark"
    name = "tpcds"
    after = ("tpcds-gen", "tpcds-analyze")
    description = (
        "the 104 TPC-DS queries on Spark SQL, single stream and N concurrent streams (FAIR scheduler), "
        "each result checked against DuckDB's answer on the same files"
    )
    params = (
        Param(
            "queries",
            list,
            ["all"],
            "all, io (paper 001's 54 I/O-intensive templates) or names: q3,q14a,ss_max (q14 = q14a and q14b)",
        ),
        Param(
            "streams",
            list,
            ["1"],
            "stream counts to run one after another, e.g. 1,2,5 (1: the queries in "
            "order; N: N concurrent streams, each a seeded random order)",
        ),
        Param("seed", int, 20260101, "seed of the streams' query orders"),
        Param("shuffle_partitions", int, 200, "spark.sql.shuffle.partitions (Spark's default: 200)", minimum=1),
        SF,
        DATA,
        CHECK_MAX_SF,
        CHECK_QUERIES,
        CATALOG,
        METASTORE,
        CATALOG_DATABASE,
    )
    metrics = METRICS
    # the papers' total and per-query times (each query's own rows: the reports' per-query section), and the checks
    headline = (
        "total_time",
        "query_time",
        "geomean_query_time",
        "queries_checked_equal",
        "queries_mismatched",
        "queries_failed",
    )

    def engine_conf(self, params: dict[str, Any]) -> dict[str, str]:
        return {
            "spark.scheduler.mode": "FAIR",
            **SESSION_CONF,
            "spark.sql.shuffle.partitions": str(params["shuffle_partitions"]),
        }

    def check_params(self, params: dict[str, Any], target: Any) -> None:
        super().check_params(params, target)
        if params["catalog_database"] and params["catalog"] != "hive":
            raise InputError(
                f"--set catalog_database={params['catalog_database']} reads a database of a Hive "
                f"metastore: add --set catalog=hive"
            )

    def check(self, ctx: RunContext, params: dict[str, Any]) -> None:
        super().check(ctx, params)
        select_queries(params["queries"])
        select_queries(params["check_queries"])
        stream_counts(params)
        check_data_param(ctx, params, self.name)

    def estimated_bytes(self, params: dict[str, Any]) -> int:
        return int(params["sf"] * PARQUET_BYTES_PER_SF)  # shuffle and spill

    def prepare(self, ctx: RunContext, params: dict[str, Any]) -> None:
        dataset = dataset_of(ctx, params, self.name)
        spark = spark_session(ctx)
        spark.conf.set("spark.sql.shuffle.partitions", str(params["shuffle_partitions"]))  # a sweep may change it
        state = ctx.state(TpcdsState)
        if state.registered != dataset.data_uri and not params["catalog_database"]:
            missing = missing_tables(spark, dataset.data_uri)
            if missing:
                raise WorkloadError(
                    f"{self.name}: missing TPC-DS tables under {dataset.data_uri}: {', '.join(missing)}"
                )
            # no statistics: the suite has no tpcds-analyze
            register_tables(spark, dataset.data_uri, use_database(ctx))
            state.registered = dataset.data_uri
            ctx.notes.append(f"{self.name}: tables registered without statistics (no tpcds-analyze step)")
        names = checked(params)
        cache = state.answers
        wanted = [n for n in names if n not in cache]
        if wanted and dataset.sf <= params["check_max_sf"]:
            if dataset.local:
                con = duckdb_connect()
                try:
                    duckdb_views(con, dataset.answers_root)
                    cache.update(duckdb_answers(con, {n: all_texts()[n] for n in wanted}))
                finally:
                    con.close()

    def run(self, ctx: RunContext, params: dict[str, Any]) -> list[Sample]:
        names = select_queries(params["queries"])
        texts = {name: to_spark(all_texts()[name]) for name in names}
        dataset = dataset_of(ctx, params, self.name)
        answers = references(
            ctx.state(TpcdsState).answers,
            names,
            checked(params),
            dataset.sf,
            dataset.local,
            dataset.data_uri,
            params["check_max_sf"],
        )
        parent = spark_session(ctx).sparkContext.getLocalProperty("spark.jobGroup.id") or self.name
        use_database(ctx, params["catalog_database"])  # current for the queries, whatever ran in between
        counts = stream_counts(params)
        catalog = ctx.engine(SparkEngine).catalog
        calls = spark_catalog.CallCounter(catalog["audit_log"]) if catalog and catalog["audit_log"] else None
        results: dict[int, dict[str, Any]] = {}
        total, done = sum(counts) * len(names), itertools.count(1)  # queries over all streams: the ETA
        with ctx.measure():
            for n in counts:
                orders = [names] if n == 1 else [permutation(names, params["seed"], n, k) for k in range(1, n + 1)]
                results[n] = run_streams(
                    spark_session(ctx),
                    texts,
                    answers,
                    orders,
                    parent,
                    n,
                    lambda: ctx.progress(next(done), total, "queries"),
                    calls if n == 1 else None,
                )  # N streams' calls interleave
        record = ctx.artifacts.setdefault("tpcds", {}).setdefault("runs", [])
        record.append(
            {
                "seed": params["seed"],
                "streams": {
                    str(n): {
                        "orders": [s["order"] for s in r["streams"]],
                        "queries": {q: [s["results"][q] for s in r["streams"]] for q in names},
                    }
                    for n, r in results.items()
                },
            }
        )
        cores = ctx.engine(SparkEngine).default_parallelism()
        samples: list[Sample] = []
        for n, result in results.items():
            samples += run_samples(self.name, ctx.notes, names, n, result, dataset.sf, cores, results.get(1))
        return samples

    def cleanup(self, ctx: RunContext, params: dict[str, Any]) -> None:
        drop_run_database(ctx)
