"""The skipping family's data: a fact table laid out so that a selective query can skip, and a date dimension.

The fact table (``fact``) has one row per ``id`` (0 … rows-1). Its date key grows with the id (``dates`` dates,
``rows / dates`` ids each), so the table is at once sorted on ``id`` and partitioned on the date: Hive folders
``date_part=<date key>``, one Parquet file per date written in id order, cut into row groups of about
``row_group_kb`` (several per file at the tiny scale) whose min/max statistics let a filter on ``id`` skip
most of them. ``item_sk`` is a bijection of the id (multiplication by an odd constant modulo 2^31): spread
over every row group, so min/max cannot skip on it, but a Parquet bloom filter per row group can (``bloom``).
The date key is written twice: as the partition folder and as the column ``date_sk`` inside each file, so that
skipping=off can read the files with no partition discovery and still have the date (see :func:`fact_frame`).
The dimension (``date_dim``) has one row per date, one file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

FIRST_DATE_SK = 2451545  # 2000-01-01 as TPC-DS numbers dates (d_date_sk)
FIRST_DATE = "2000-01-01"
_SPREAD = 2654435761  # odd: id → (id × _SPREAD + seed) mod 2^31 is a bijection on 0 … 2^31-1
COLUMNS = ("id", "date_sk", "item_sk", "quantity", "price", "payload")
FILE_DDL = "id BIGINT, date_sk INT, item_sk BIGINT, quantity INT, price DOUBLE, payload STRING"
PARTITION = "date_part"
BYTES_PER_ROW = 60  # on storage, for the free-space check (the payload is 32 hex characters)


@dataclass
class SkippingData:
    """What skipping-gen wrote, which every query reads (``ctx.state``), and each query's answers by mode."""

    fact_uri: str | None = None
    dim_uri: str | None = None
    format: str = "parquet"
    rows: int = 0
    dates: int = 0
    seed: int = 0
    # "query rows dates seed" → mode → the answer's checksum: the same data set answers alike in every mode
    answers: dict[str, dict[str, str]] = field(default_factory=dict)


def item_of(row_id: int, seed: int) -> int:
    return (row_id * _SPREAD + seed) % 2**31


def date_index(row_id: int, rows: int, dates: int) -> int:
    return row_id * dates // rows


def first_id_of(index: int, rows: int, dates: int) -> int:
    """The first id whose date index is ``index`` (ceil(index × rows / dates))."""
    return -(-index * rows // dates)


def write(
    spark: Any, rows: int, dates: int, seed: int, fmt: str, row_group_kb: int, bloom: bool, fact_uri: str, dim_uri: str
) -> None:
    """Both tables, generated in the JVM: one task per date, each writing its ids in order."""
    from pyspark.sql import functions as F

    fact = (
        spark.range(0, rows, 1, dates)
        .withColumn("date_sk", F.expr(f"CAST(id * {dates} DIV {rows} + {FIRST_DATE_SK} AS INT)"))
        .withColumn("item_sk", F.expr(f"pmod(id * {_SPREAD} + {seed}, {2**31})"))
        .withColumn("quantity", F.expr("CAST(id % 100 AS INT)"))
        .withColumn("price", F.expr("CAST((id % 10000) / 100.0 AS DOUBLE)"))
        .withColumn("payload", F.md5(F.col("id").cast("string")))
        .withColumn(PARTITION, F.col("date_sk"))
        # the write's own ordering (by partition) is then met: each file keeps its ids in order
        .sortWithinPartitions(PARTITION, "id")
    )
    writer = fact.write.mode("errorifexists").partitionBy(PARTITION)
    if fmt == "parquet":
        writer = writer.option("parquet.block.size", str(row_group_kb * 1024))
        if bloom:
            writer = writer.option("parquet.bloom.filter.enabled#item_sk", "true").option(
                "parquet.bloom.filter.expected.ndv#item_sk", str(row_group_kb * 1024 // 40)
            )  # rows per group
    else:
        writer = writer.option("header", True)
    writer.format(fmt).save(fact_uri)
    dim = (
        spark.range(0, dates, 1, 1)
        .select(
            (F.col("id") + FIRST_DATE_SK).cast("int").alias("d_date_sk"),
            F.expr(f"date_add(DATE'{FIRST_DATE}', CAST(id AS INT))").alias("d_date"),
        )
        .withColumn("d_year", F.year("d_date"))
        .withColumn("d_moy", F.month("d_date"))
        .withColumn("d_dom", F.dayofmonth("d_date"))
    )
    dim_writer = dim.write.mode("errorifexists")
    (dim_writer.option("header", True) if fmt == "csv" else dim_writer).format(fmt).save(dim_uri)


def fact_frame(spark: Any, data: SkippingData, skipping: bool) -> Any:
    """The fact table as the queries see it: the same columns either way.

    on: read as a partitioned table (partition discovery on the ``date_part=`` folders), its in-file copy of the
    date dropped and the partition column named ``date_sk``: a filter or a join on ``date_sk`` reaches the
    partition column through that alias, so static partition pruning and dynamic partition pruning (DPP) apply.

    off: read as plain files (``recursiveFileLookup``: Spark infers no partition column and lists every file),
    ``date_sk`` from the files themselves. No partition column exists, so neither static pruning nor DPP can
    select folders, whatever the settings; with ``filterPushdown`` off no row group is skipped either. Turning
    DPP's setting off alone would leave static pruning on, and Spark has no setting for that (its pruning of a
    path-based table happens at planning, not in an optimizer rule that could be excluded).
    """
    reader = spark.read.format(data.format)
    if data.format == "csv":
        reader = reader.option("header", True)
    if skipping:
        frame = (
            reader.schema(f"{FILE_DDL}, {PARTITION} INT")
            .load(data.fact_uri)
            .drop("date_sk")
            .withColumnRenamed(PARTITION, "date_sk")
        )
    else:
        frame = reader.schema(FILE_DDL).option("recursiveFileLookup", "true").load(data.fact_uri)
    return frame.select(*COLUMNS)


def dim_frame(spark: Any, data: SkippingData) -> Any:
    reader = spark.read.format(data.format).schema("d_date_sk INT, d_date DATE, d_year INT, d_moy INT, d_dom INT")
    return (reader.option("header", True) if data.format == "csv" else reader).load(data.dim_uri)
