"""The TPC-DS family's shared parameters (scale factor, data location, the DuckDB check, the catalog) and its
metrics, beside the workloads that take and report them."""

from __future__ import annotations


from storbench.results.metrics import metric_table
from storbench.engines import spark_catalog
from storbench.workloads.params import Param


SF = Param("sf", float, 1.0, "TPC-DS scale factor (1 ≈ 1 GB of raw data; tiny: 0.01)", minimum=0.01)
DATA = Param(
    "data",
    str,
    "",
    "an existing generated dataset (URI of the directory holding one folder per table); "
    "empty: the one tpcds-gen wrote in this run",
)
CHECK_MAX_SF = Param("check_max_sf", float, 1.0, "check results against DuckDB up to this scale factor", minimum=0)
CHECK_QUERIES = Param(
    "check_queries",
    list,
    ["all"],
    "the queries whose results are checked against DuckDB's answer "
    "(all, io or names, as queries): at a scale where DuckDB's answer to every query costs too "
    "much, check some; the others are reported unchecked",
)
CATALOG = Param(
    "catalog",
    str,
    "embedded",
    "where the tables are registered: embedded (Spark's in-memory catalog) "
    "or hive (a Hive metastore: `storbench services up metastore`, or metastore=URI)",
    choices=spark_catalog.CATALOGS,
)
METASTORE = Param(
    "metastore",
    str,
    "",
    "catalog=hive: the metastore's thrift://HOST:PORT (empty: the one `storbench services up metastore` runs)",
)
CATALOG_DATABASE = Param(
    "catalog_database",
    str,
    "",
    "catalog=hive: read the tables another run registered in this "
    "existing database (kept by its --keep-data), read-only: nothing registered, nothing "
    "dropped; empty: the run's own database",
)


# Per-query rows carry the labels query and streams (paper 001). tpcds-gen also reports the
# dataset's size and write rate, declared alike by spark_transforms and terasort.
METRICS = metric_table("""
    query_time             | Query time                             | s          | median | faster/slower
    query_ok               | Query ran and matched DuckDB's answer  | ok         | min    | better/worse
    queries_ran            | Queries run                            | queries    | max    | more/fewer
    queries_checked_equal  | Queries checked equal to DuckDB's      | queries    | min    | more/fewer
    queries_mismatched     | Queries whose result differs           | queries    | max    | fewer/more
    queries_failed         | Queries failed (an error)              | queries    | max    | fewer/more
    queries_unchecked      | Queries unchecked (no reference)       | queries    | max    | fewer/more
    total_time             | Total time of the streams              | s          | mean   | faster/slower
    stream_time            | Stream time                            | s          | mean   | faster/slower
    geomean_query_time     | Geometric mean of query times          | s          | mean   | faster/slower
    stream_degradation_pct | Multi-stream degradation vs one stream | %          | mean   | lower/higher
    generate_s             | Generator time (overlaps layout write) | s          | mean   | faster/slower
    layout_s               | Layout write and row check time        | s          | mean   | faster/slower
    files                  | Parquet files written                  | files      | max    | fewer/more
    partition_folders      | Partition folders written              | folders    | max    | fewer/more
    max_files_per_folder   | Most files in one folder               | files      | max    | fewer/more
    register_s             | Catalog registration time              | s          | mean   | faster/slower
    planning_time          | Query planning time (parse to plan)    | s          | median | faster/slower
    metastore_calls        | Metastore calls per query              | calls      | median | fewer/more
    analyze_s              | Statistics collection time             | s          | mean   | faster/slower
    partitions             | Catalog partitions                     | partitions | max    | fewer/more
    dataset_mb             | Dataset size                           | MB         | max    | larger/smaller
    data_mbps              | Data rate (size / time)                | MB/s       | mean   | higher/lower
""")
