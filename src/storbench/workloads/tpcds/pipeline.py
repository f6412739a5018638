"""TPC-DS generation as one Spark job over the executors: one task per table part, each writing its share to
the target from its own node (:mod:`storbench.workloads.tpcds.tasks`); no host copies another's files.

Tasks go largest first (by the tables' sizes at the scale factor), so whichever executor is free takes the
next largest and the nodes end with like shares. A table is split into parts only above SF 2
(:func:`storbench.workloads.tpcds.data.table_parts`, and only where the generator can split it); below that
the tables themselves are the tasks. On a cluster the generator binary is shipped with the job (``addFile``)
and the executors' Python needs DuckDB, as the driver's.

On hdfs:// and s3a:// the summary and file rows of the tasks become a DataFrame whose ``put`` column calls
``storbench.jvm.PutFile`` (SQL's java_method): evaluated in the same task as the Python that made the
files, on the same executor, through that executor's Hadoop client. Every table's rows are checked: in each
task, rows laid out = rows generated; on a remote target, bytes put = bytes laid out.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from pathlib import Path
from typing import Any

from storbench.errors import WorkloadError
from storbench.workloads.tpcds.data import TABLES, table_parts, tpcgen_binary
from storbench.workloads.tpcds.tasks import ROW_SCHEMA, run_part

# Rough Parquet MB of a table: per unit of scale, and fixed (dimension tables of constant size), for the order
SIZE_PER_SF_MB = {
    "store_sales": 144,
    "catalog_sales": 121,
    "web_sales": 57,
    "inventory": 37,
    "store_returns": 12,
    "catalog_returns": 11,
    "customer": 8,
    "web_returns": 5,
    "customer_address": 3,
    "item": 3,
}
FIXED_MB = {"customer_demographics": 9, "date_dim": 2.5, "time_dim": 1.6, "catalog_page": 0.8}
SPLITTABLE = tuple(SIZE_PER_SF_MB) + ("customer_demographics",)  # the generator can split these into parts
PUT = "CAST(java_method('storbench.jvm.PutFile', 'put', local, dest, root) AS BIGINT)"


def plan(sf: float, tables: tuple[str, ...] = TABLES) -> list[tuple[str, int, int]]:
    """(table, part, parts) per task, largest table first."""

    def size(table: str) -> float:
        return SIZE_PER_SF_MB.get(table, 0) * sf + FIXED_MB.get(table, 0)

    parts = table_parts(sf)
    chunks = [(t, p, n) for t in tables for n in [parts if t in SPLITTABLE else 1] for p in range(1, n + 1)]
    return sorted(chunks, key=lambda c: (-size(c[0]) / c[2], c[0], c[1]))


def generate(
    spark: Any,
    sf: float,
    layout: str,
    file_mb: int,
    data_uri: str,
    staging: Path | None,
    threads: int = 1,
    tables: tuple[str, ...] = TABLES,
) -> dict[str, Any]:
    """Every table into ``data_uri/<table>`` by the executors. ``staging``: on a file:// target a folder on its
    file system (the parts are renamed into place); None: a remote target (each task stages on its node's disk).

    Per table: rows, layout (files, partition folders, bytes, most files in a folder) and how it was laid out;
    per task: where it ran and its seconds. Generator and layout seconds are summed over tasks that overlap."""
    remote = staging is None
    chunks = plan(sf, tables)
    context = spark.sparkContext
    config = {
        "sf": sf,
        "layout": layout,
        "file_mb": file_mb,
        "data_uri": data_uri,
        "remote": remote,
        "threads": threads,
        "staging": None if remote else str(staging),
        "binary": tpcgen_binary(),
    }
    if not context.master.startswith("local") and not getattr(context, "_storbench_tpcgen_shipped", False):
        context.addFile(config["binary"])  # executors on other hosts run the generator shipped with the job
        context._storbench_tpcgen_shipped = True
    task = functools.partial(_task, config=config)
    rdd = context.parallelize(chunks, len(chunks)).mapPartitions(task)  # one chunk per task, in plan order
    if remote:
        frame = spark.createDataFrame(rdd, ROW_SCHEMA).selectExpr(
            "table", "summary", f"CASE WHEN local IS NULL THEN 0 ELSE {PUT} END AS put"
        )
        rows = [(r["table"], r["summary"], r["put"]) for r in frame.collect()]
    else:
        rows = [(r[0], r[5], 0) for r in rdd.collect()]
    return _totals(rows, tables, remote, len(chunks))


def _task(iterator: Any, config: dict[str, Any]) -> Any:
    for chunk in iterator:
        yield from run_part(chunk, config)


def _totals(
    rows: list[tuple[str, str | None, int]], tables: tuple[str, ...], remote: bool, count: int
) -> dict[str, Any]:
    import json

    put: Counter = Counter()
    per_table: dict[str, list[dict[str, Any]]] = {t: [] for t in tables}
    for table, summary, written in rows:
        put[table] += written or 0
        if summary:
            per_table[table].append(json.loads(summary))
    done = {}
    for table, parts in per_table.items():
        folders: Counter = Counter()
        for part in parts:
            folders.update(part["folders"])
        size = sum(p["bytes"] for p in parts)
        if remote and put[table] != size:
            raise WorkloadError(f"tpcds-gen: table {table}: {put[table]} bytes put on the target, {size} laid out")
        done[table] = {
            "rows": sum(p["rows"] for p in parts),
            "staged_bytes": sum(p["staged_bytes"] for p in parts),
            "how": "+".join(sorted({p["how"] for p in parts} - {"empty"})) or "empty",
            "files": sum(p["files"] for p in parts),
            "partitions": len(set(folders) - {"."}),
            "bytes": size,
            "max_files_per_folder": max(folders.values(), default=0),
            "tasks": [{k: p[k] for k in ("rows", "bytes", "generate_s", "layout_s", "host", "cwd")} for p in parts],
        }
    every = [t for info in done.values() for t in info["tasks"]]
    return {
        "tables": done,
        "tasks": count,
        "writer": "duckdb, in each task on its executor",
        "generate_s": math.fsum(t["generate_s"] for t in every),
        "layout_s": math.fsum(t["layout_s"] for t in every),
    }


def fetch_local(spark: Any, data_uri: str, dest: Path, tables: tuple[str, ...] = TABLES) -> None:
    """A remote data set copied to ``dest/<table>`` through the driver's Hadoop client: only for DuckDB's
    reference answers (small scale factors), after generation and outside its timed window."""
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    for table in tables:
        source = jvm.org.apache.hadoop.fs.Path(f"{data_uri}/{table}")
        (dest / table).parent.mkdir(parents=True, exist_ok=True)
        # the raw local file system: no .crc beside each file
        source.getFileSystem(conf).copyToLocalFile(
            False, source, jvm.org.apache.hadoop.fs.Path(f"file://{dest}/{table}"), True
        )
