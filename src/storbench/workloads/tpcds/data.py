"""TPC-DS data: generation with tpcgen-cli, the paper's Parquet layout written through Spark, the
Spark catalog, and DuckDB's reference answers over the same files.

Generation runs table by table so that a large scale factor streams: tpcgen-cli (a Rust port of
dsdgen, PyPI ``tpcgen-cli``) writes one table as Parquet into a storbench-owned staging
directory (bounded memory: it writes 7 MiB row groups as it generates), Spark rewrites it to
the target in the chosen layout, the row count on the target is checked against the
generator's, and the staging copy is deleted before the next table. Only the largest table is
ever staged twice.

Layouts (paper 001): ``partitioned`` puts the six fact tables into Hive-style partitions on their
date key (``ss_sold_date_sk=2451000/``), files of about ``file_mb``; ``flat`` writes every table
as files of about ``file_mb`` without partitions.
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from storbench.errors import EngineError, WorkloadError

TABLES = ("call_center", "catalog_page", "catalog_returns", "catalog_sales", "customer", "customer_address",
          "customer_demographics", "date_dim", "household_demographics", "income_band", "inventory", "item",
          "promotion", "reason", "ship_mode", "store", "store_returns", "store_sales", "time_dim", "warehouse",
          "web_page", "web_returns", "web_sales", "web_site")
FACT_DATE_KEYS = {"store_sales": "ss_sold_date_sk", "store_returns": "sr_returned_date_sk",
                  "catalog_sales": "cs_sold_date_sk", "catalog_returns": "cr_returned_date_sk",
                  "web_sales": "ws_sold_date_sk", "web_returns": "wr_returned_date_sk"}
PARQUET_BYTES_PER_SF = 420_000_000  # tpcgen-cli's snappy Parquet: 399 MB at SF 1 (all 24 tables)


def tpcgen_binary() -> str:
    beside = Path(sys.executable).with_name("tpcgen-cli")  # the console script of the installed wheel
    found = str(beside) if beside.exists() else shutil.which("tpcgen-cli")
    if not found:
        raise EngineError("tpcgen-cli is not installed; run the set-up command from the README")
    return found


def tpcgen_version() -> str:
    out = subprocess.run([tpcgen_binary(), "--version"], capture_output=True, text=True, timeout=30)
    return out.stdout.strip().split()[-1] if out.returncode == 0 and out.stdout.strip() else "unknown"


def generate_table(table: str, sf: float, staging: Path, threads: int | None = None) -> Path:
    """One table as Parquet under ``staging/<table>/`` (several files from SF 2 up)."""
    parts = max(1, math.ceil(sf / 2))
    command = [tpcgen_binary(), "tpcds", "parquet", "-s", f"{sf:g}", "-T", table, "--parts", str(parts),
               "--output-dir", str(staging), "--overwrite", "-q"]
    if threads:
        command += ["-n", str(threads)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or [f"exit status {result.returncode}"])[-1]
        raise WorkloadError(f"tpcgen-cli failed for table {table} at SF {sf:g}: {last}")
    return staging / table


def staged_rows(directory: Path) -> int:
    from storbench.workloads.tpcds.queries import duckdb_connect

    con = duckdb_connect()
    try:
        return int(con.execute(f"SELECT count(*) FROM read_parquet('{directory}/*.parquet')").fetchone()[0])
    finally:
        con.close()


def local_bytes(directory: Path) -> int:
    return sum(f.stat().st_size for f in directory.rglob("*") if f.is_file())


def write_layout(spark: Any, source_uri: str, dest_uri: str, table: str, layout: str, file_mb: int,
                 rows: int, source_bytes: int, parallelism: int) -> None:
    """Spark rewrites one staged table to the target: partitioned on its date key or flat.

    Partitioned: a shuffle on the date key puts each date in one task, which cuts it into files
    of ``file_mb``. Flat: no shuffle; Spark reads the staged files in splits of ``file_mb`` and
    writes each split as one file.
    """
    files = max(1, math.ceil(source_bytes / (file_mb * 1_000_000)))
    rows_per_file = max(1, math.ceil(rows / files))
    if layout == "partitioned" and table in FACT_DATE_KEYS:
        key = FACT_DATE_KEYS[table]
        (spark.read.parquet(source_uri).repartition(max(parallelism, files), key).write.partitionBy(key)
         .mode("overwrite").option("maxRecordsPerFile", rows_per_file).parquet(dest_uri))
        return
    split = "spark.sql.files.maxPartitionBytes"  # read when the write is planned: set around the write
    before = spark.conf.get(split)
    spark.conf.set(split, str(file_mb * 1_000_000))
    try:  # coalesce: a small table is one file, not one per split
        (spark.read.parquet(source_uri).coalesce(files).write.mode("overwrite")
         .option("maxRecordsPerFile", rows_per_file).parquet(dest_uri))
    finally:
        spark.conf.set(split, before)


def copy_to_target(spark: Any, local: Path, uri: str) -> None:
    """A staged table onto a Hadoop file system (hdfs://), through the session's own client."""
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    dest = jvm.org.apache.hadoop.fs.Path(uri)
    dest.getFileSystem(conf).copyFromLocalFile(False, True, jvm.org.apache.hadoop.fs.Path(f"file://{local}"), dest)


def generate(spark: Any, sf: float, layout: str, file_mb: int, data_uri: str, staging: Path, remote: bool,
             keep_staging: bool, parallelism: int, mark: Callable[[], float] = time.monotonic,
             on_table: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Generate every table into ``data_uri/<table>``; per table: staged rows and bytes, seconds."""
    staging.mkdir(parents=True, exist_ok=True)
    tables: dict[str, Any] = {}
    gen_s = layout_s = 0.0
    for table in TABLES:
        if on_table:
            on_table(table)
        t0 = mark()
        local = generate_table(table, sf, staging, threads=parallelism)
        t1 = mark()
        rows, size = staged_rows(local), local_bytes(local)
        source = f"file://{local}"
        if remote:  # executors read the staged copy from the target, not from this host's disk
            source = f"{data_uri}/_staging/{table}"
            copy_to_target(spark, local, source)
        write_layout(spark, source, f"{data_uri}/{table}", table, layout, file_mb, rows, size, parallelism)
        if remote:
            _delete(spark, source)
        t2 = mark()
        written = spark.read.parquet(f"{data_uri}/{table}").count()
        if written != rows:
            raise WorkloadError(f"tpcds-gen: table {table} has {written} rows on the target, the generator "
                                f"wrote {rows}")
        if not keep_staging:
            shutil.rmtree(local, ignore_errors=True)
        gen_s += t1 - t0
        layout_s += t2 - t1
        tables[table] = {"rows": rows, "staged_bytes": size}
    if remote:
        _delete(spark, f"{data_uri}/_staging")
    return {"tables": tables, "generate_s": gen_s, "layout_s": layout_s}


def _delete(spark: Any, uri: str) -> None:
    path = spark._jvm.org.apache.hadoop.fs.Path(uri)
    path.getFileSystem(spark._jsc.hadoopConfiguration()).delete(path, True)


def missing_tables(spark: Any, data_uri: str) -> list[str]:
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    missing = []
    for table in TABLES:
        path = jvm.org.apache.hadoop.fs.Path(f"{data_uri}/{table}")
        if not path.getFileSystem(conf).exists(path):
            missing.append(table)
    return missing


def run_database(run_id: str) -> str:
    """The database a run owns: its tables never touch the user's (a persistent metastore keeps them)."""
    return "storbench_" + re.sub(r"\W", "_", run_id, flags=re.ASCII)


def create_database(spark: Any, name: str, location: str) -> None:
    """Creates the run's database at ``location`` (in the run root, not a spark-warehouse in the working
    directory), refusing one that exists: it may hold someone's tables."""
    if spark.catalog.databaseExists(name):
        raise WorkloadError(f"tpcds: the database {name} already exists; storbench creates and drops a "
                            f"database of its own per run and does not reuse one")
    spark.sql(f"CREATE DATABASE `{name}` LOCATION '{location}'")  # no IF NOT EXISTS: a concurrent one fails


def drop_database(spark: Any, name: str, previous: str) -> None:
    """Drops the run's database (its external tables only: the files stay), back to ``previous``."""
    if spark.catalog.currentDatabase() == name:
        spark.sql(f"USE `{previous}`")
    spark.sql(f"DROP DATABASE IF EXISTS `{name}` CASCADE")


def register_tables(spark: Any, data_uri: str, database: str) -> dict[str, int]:
    """External catalog tables over the files (partitions recovered) in ``database``; table → partitions."""
    partitions = {}
    for table in TABLES:
        name = f"`{database}`.`{table}`"  # always qualified: never a table of the current database
        spark.sql(f"DROP TABLE IF EXISTS {name}")  # a new data set (a sweep point) in the run's own database
        spark.sql(f"CREATE TABLE {name} USING parquet LOCATION '{data_uri}/{table}'")
        if [c for c in spark.catalog.listColumns(f"{database}.{table}") if c.isPartition]:
            spark.sql(f"ALTER TABLE {name} RECOVER PARTITIONS")
            partitions[table] = spark.sql(f"SHOW PARTITIONS {name}").count()
        else:
            partitions[table] = 0
    return partitions


def analyze_tables(spark: Any, database: str) -> None:
    for table in TABLES:
        spark.sql(f"ANALYZE TABLE `{database}`.`{table}` COMPUTE STATISTICS FOR ALL COLUMNS")


def duckdb_views(con: Any, root: Path) -> None:
    """Views named like the tables over Parquet under ``root/<table>/`` (flat or Hive-partitioned)."""
    for table in TABLES:
        files = f"{root}/{table}/**/*.parquet"
        hive = "true" if table in FACT_DATE_KEYS and any((root / table).glob("*=*")) else "false"
        con.execute(f"CREATE OR REPLACE VIEW {table} AS SELECT * FROM read_parquet('{files}', "
                    f"hive_partitioning = {hive})")
