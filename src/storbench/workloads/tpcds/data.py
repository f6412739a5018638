"""TPC-DS data: generation of one table with tpcgen-cli, the Spark catalog, and DuckDB's views over
the same files (the reference answers).

Generation runs one Spark task per table part on the executors: tpcgen-cli (a Rust port of dsdgen, PyPI
``tpcgen-cli``) writes the part as Parquet into the task's own staging directory (bounded memory: it writes
7 MiB row groups as it generates), the task lays it out and writes it to the target
(:mod:`storbench.workloads.tpcds.pipeline`, :mod:`storbench.workloads.tpcds.tasks`,
:mod:`storbench.workloads.tpcds.layout`).

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
from pathlib import Path
from typing import Any

from storbench.errors import EngineError, WorkloadError

TABLES = (
    "call_center",
    "catalog_page",
    "catalog_returns",
    "catalog_sales",
    "customer",
    "customer_address",
    "customer_demographics",
    "date_dim",
    "household_demographics",
    "income_band",
    "inventory",
    "item",
    "promotion",
    "reason",
    "ship_mode",
    "store",
    "store_returns",
    "store_sales",
    "time_dim",
    "warehouse",
    "web_page",
    "web_returns",
    "web_sales",
    "web_site",
)
FACT_DATE_KEYS = {
    "store_sales": "ss_sold_date_sk",
    "store_returns": "sr_returned_date_sk",
    "catalog_sales": "cs_sold_date_sk",
    "catalog_returns": "cr_returned_date_sk",
    "web_sales": "ws_sold_date_sk",
    "web_returns": "wr_returned_date_sk",
}
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


def table_parts(sf: float) -> int:
    """Parts (tasks) per splittable table: one per 2 units of scale. tpcgen-cli, like dsdgen, splits a table only
    from 1M source rows (sales: tickets or orders, not lines): below that its part 1 has every row."""
    return max(1, math.ceil(sf / 2))


def generate_table(
    table: str,
    sf: float,
    staging: Path,
    threads: int | None = None,
    part: int | None = None,
    parts: int | None = None,
    binary: str | None = None,
) -> Path:
    """One table (or its ``part`` of ``parts``, 1-based) as Parquet under ``staging/<table>/``
    (``<table>.<part>.parquet``; a part with no rows writes nothing)."""
    parts = parts or table_parts(sf)
    command = [
        binary or tpcgen_binary(),
        "tpcds",
        "parquet",
        "-s",
        f"{sf:g}",
        "-T",
        table,
        "--parts",
        str(parts),
        "--output-dir",
        str(staging),
        "--overwrite",
        "-q",
    ]
    if part:
        command += ["--part", str(part)]
    if threads:
        command += ["-n", str(threads)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or [f"exit status {result.returncode}"])[-1]
        which = f" part {part} of {parts}" if parts > 1 else ""
        raise WorkloadError(f"tpcgen-cli failed for table {table}{which} at SF {sf:g}: {last}")
    return staging / table


def parquet_rows(directory: Path) -> int:
    """Rows of the Parquet files under ``directory`` (from their footers); 0 when there are none."""
    if not directory.is_dir() or not any(directory.rglob("*.parquet")):
        return 0
    import duckdb

    con = duckdb.connect()
    try:
        return int(
            con.execute(
                f"SELECT coalesce(sum(num_rows), 0) FROM parquet_file_metadata('{directory}/**/*.parquet')"
            ).fetchone()[0]
        )
    finally:
        con.close()


def local_bytes(directory: Path) -> int:
    return sum(f.stat().st_size for f in directory.rglob("*") if f.is_file())


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


def create_database(spark: Any, name: str, location: str | None) -> None:
    """Creates the run's database at ``location`` (in the run root, not a spark-warehouse in the working
    directory; None: the catalog's own warehouse), refusing one that exists: it may hold someone's tables."""
    if spark.catalog.databaseExists(name):
        raise WorkloadError(
            f"tpcds: the database {name} already exists; storbench creates and drops a "
            f"database of its own per run and does not reuse one"
        )
    where = f" LOCATION '{location}'" if location else ""
    spark.sql(f"CREATE DATABASE `{name}`{where}")  # no IF NOT EXISTS: a concurrent one fails


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
        con.execute(
            f"CREATE OR REPLACE VIEW {table} AS SELECT * FROM read_parquet('{files}', hive_partitioning = {hive})"
        )
