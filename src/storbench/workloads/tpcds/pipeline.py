"""TPC-DS generation overlapped table by table: while table k is laid out and checked, tpcgen-cli
generates table k+1 in a background thread.

At most ``STAGED`` tables are staged at any time (a slot is taken before a table is generated and
given back once its staged copy is gone), so the disk holds the dataset plus at most two staged
tables, never the whole raw dataset. Every table's row count on the target is checked against the
generator's before the next one is taken.

On a file target the staging directory sits on the target's file system, so the layout is written
straight into the table's folder. On any other target (hdfs://, s3a://) it is written to a local
folder and copied through the session's Hadoop client.
"""

from __future__ import annotations

import queue
import shutil
import threading
import time
from pathlib import Path
from typing import Any, Callable

from storbench.errors import WorkloadError
from storbench.workloads.tpcds.data import TABLES, generate_table, local_bytes
from storbench.workloads.tpcds.layout import lay_out, layout_stats

STAGED = 2  # tables staged at once: the one being laid out and the next one


def generate(spark: Any, sf: float, layout: str, file_mb: int, data_uri: str, staging: Path, remote: bool,
             keep_local: bool, parallelism: int, mark: Callable[[], float] = time.monotonic,
             on_table: Callable[[str], None] | None = None, tables: tuple[str, ...] = TABLES) -> dict[str, Any]:
    """Every table into ``data_uri/<table>``; per table rows, layout (files, partitions, bytes) and when
    it was generated and placed (seconds from the start).

    ``keep_local``: a remote target's local copy of the layout stays under ``staging/layout`` (DuckDB's
    answers read it). Generator and layout seconds overlap: their sum exceeds the wall time.
    """
    staging.mkdir(parents=True, exist_ok=True)
    slots = threading.Semaphore(STAGED)
    ready: queue.Queue = queue.Queue()
    stop = threading.Event()

    def produce() -> None:
        for table in tables:
            slots.acquire()
            if stop.is_set():
                return
            try:
                t0 = mark()
                staged = generate_table(table, sf, staging / "staged", threads=parallelism)
                ready.put((table, staged, staged_rows(staged), local_bytes(staged), t0, mark()))
            except BaseException as exc:  # the consumer raises it in the workload's thread
                ready.put(exc)
                return

    start = mark()
    producer = threading.Thread(target=produce, name="tpcgen", daemon=True)
    producer.start()
    done: dict[str, Any] = {}
    gen_s = layout_s = 0.0
    try:
        for _ in tables:
            item = ready.get()
            if isinstance(item, BaseException):
                raise item
            table, staged, rows, size, began, generated = item
            if on_table:
                on_table(table)
            t1 = mark()
            info = _place(spark, staged, table, layout, file_mb, size, data_uri, staging, remote, parallelism)
            local = info.pop("local")
            written = _target_rows(spark, data_uri, table, local, remote)
            if written != rows:
                raise WorkloadError(f"tpcds-gen: table {table} has {written} rows on the target, the generator "
                                    f"wrote {rows}")
            shutil.rmtree(staged, ignore_errors=True)
            if remote and not keep_local:  # copied: this host keeps no copy of the dataset
                shutil.rmtree(local, ignore_errors=True)
            slots.release()
            placed = mark()
            gen_s += generated - began
            layout_s += placed - t1
            done[table] = {"rows": rows, "staged_bytes": size, **info,  # seconds from the first table's start
                           "generated": [round(began - start, 3), round(generated - start, 3)],
                           "placed": [round(t1 - start, 3), round(placed - start, 3)]}
    finally:
        stop.set()
        slots.release()  # a producer waiting for a slot sees the stop
        producer.join()
        shutil.rmtree(staging / "staged", ignore_errors=True)
        shutil.rmtree(staging / "scratch", ignore_errors=True)
    if remote and not keep_local:
        shutil.rmtree(staging / "layout", ignore_errors=True)
    return {"tables": done, "generate_s": gen_s, "layout_s": layout_s, "staged_at_once": STAGED,
            "writer": "duckdb"}


def _place(spark: Any, staged: Path, table: str, layout: str, file_mb: int, size: int, data_uri: str,
           staging: Path, remote: bool, threads: int) -> dict[str, Any]:
    local = staging / "layout" / table if remote else Path(data_uri.removeprefix("file://")) / table
    if local.exists():
        shutil.rmtree(local)
    how = lay_out(staged, local, table, layout, file_mb, size, threads, staging / "scratch")
    if remote:
        copy_to_target(spark, local, f"{data_uri}/{table}")
    return {"how": how, **layout_stats(local), "local": local}


def _target_rows(spark: Any, data_uri: str, table: str, local: Path, remote: bool) -> int:
    """Rows on the target: Spark reads the remote copy back; a local one is read in place by DuckDB."""
    if remote:
        return spark.read.parquet(f"{data_uri}/{table}").count()
    return staged_rows(local)


def staged_rows(directory: Path) -> int:
    """Rows of the Parquet files under ``directory`` (from their footers)."""
    import duckdb

    con = duckdb.connect()
    try:
        return int(con.execute(f"SELECT coalesce(sum(num_rows), 0) FROM parquet_file_metadata("
                               f"'{directory}/**/*.parquet')").fetchone()[0])
    finally:
        con.close()


def copy_to_target(spark: Any, local: Path, uri: str) -> None:
    """A local folder onto a Hadoop file system (hdfs://, s3a://), through the session's own client."""
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    dest = jvm.org.apache.hadoop.fs.Path(uri)
    dest.getFileSystem(conf).copyFromLocalFile(False, True, jvm.org.apache.hadoop.fs.Path(f"file://{local}"), dest)
