"""One staged TPC-DS table rewritten into the paper's layout on a local directory, and what that layout is.

DuckDB writes the layout (it is a dependency already: the reference answers). Spark's partitioned
write paid about 20 ms per file (task attempt directory, commit renames, a .crc beside each file)
and a shuffle: 0.17× DuckDB's own generator at SF 1 for about 11,000 files. Here:

- partitioned fact tables: the rows sorted on the date key stream into a partitioned COPY, so each
  date's rows arrive contiguously and one writer per partition value is open at a time: about one
  file per date (a thread boundary may add one; DuckDB cannot also cap their size, and a date holds
  about 80 kB of store_sales per SF, so ``file_mb`` is reached near SF 400). Rows
  without a date go to ``<key>=__HIVE_DEFAULT_PARTITION__`` as Spark and Hive name it (a literal
  ``NULL`` folder would make Spark infer the key as a string);
- any table of about ``file_mb`` or less: tpcgen-cli's own files are moved, not rewritten;
- a larger one: COPY in files of about ``file_mb``.

The sort spills to ``scratch`` beyond DuckDB's memory limit, so a large scale factor does not need
its largest table in memory.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from storbench.workloads.tpcds.data import FACT_DATE_KEYS

NULL_PARTITION = "__HIVE_DEFAULT_PARTITION__"


def lay_out(
    staged: Path,
    dest: Path,
    table: str,
    layout: str,
    file_mb: int,
    staged_bytes: int,
    threads: int,
    scratch: Path,
    tag: str = "0",
) -> str:
    """Writes ``staged``'s table under ``dest`` (created); returns how: partitioned, moved or split.

    ``tag`` is in every written file's name (``part-<tag>-<i>.parquet``): each part of a table, laid out by its
    own task, has names of its own in the partition folders the parts share."""
    dest.mkdir(parents=True, exist_ok=True)
    key = FACT_DATE_KEYS.get(table) if layout == "partitioned" else None
    if key is None and staged_bytes <= 1.5 * file_mb * 1_000_000:
        for part in sorted(staged.glob("*.parquet")):
            shutil.move(str(part), dest / part.name)
        return "moved"
    con = _connect(threads, scratch)
    source = f"read_parquet('{staged}/*.parquet')"
    size = f"FILE_SIZE_BYTES {file_mb * 1_000_000}"
    try:
        if key is None:  # the size is checked between row groups: several to a file
            rows = con.execute(f"SELECT sum(num_rows) FROM parquet_file_metadata('{staged}/*.parquet')").fetchone()[0]
            group = max(1024, min(122_880, int(rows * file_mb * 1_000_000 / max(1, staged_bytes) / 4)))
            con.execute(
                f"COPY (SELECT * FROM {source}) TO '{dest}' (FORMAT parquet, COMPRESSION snappy, {size}, "
                f"ROW_GROUP_SIZE {group}, FILENAME_PATTERN 'part-{tag}-{{i}}', OVERWRITE_OR_IGNORE)"
            )
            return "split"
        con.execute(
            f"COPY (SELECT * FROM {source} WHERE {key} IS NOT NULL ORDER BY {key}) TO '{dest}' "
            f"(FORMAT parquet, COMPRESSION snappy, PARTITION_BY ({key}), "
            f"FILENAME_PATTERN 'part-{tag}-{{i}}', OVERWRITE_OR_IGNORE)"
        )
        if con.execute(f"SELECT count(*) FROM {source} WHERE {key} IS NULL").fetchone()[0]:
            nulls = dest / f"{key}={NULL_PARTITION}"
            nulls.mkdir(exist_ok=True)
            con.execute(
                f"COPY (SELECT * EXCLUDE ({key}) FROM {source} WHERE {key} IS NULL) TO "
                f"'{nulls}/part-{tag}-0.parquet' (FORMAT parquet, COMPRESSION snappy)"
            )
        return "partitioned"
    finally:
        con.close()


def _connect(threads: int, scratch: Path) -> Any:
    import duckdb

    con = duckdb.connect()
    scratch.mkdir(parents=True, exist_ok=True)
    con.execute(f"SET temp_directory = '{scratch}'")
    con.execute(f"SET threads = {max(1, int(threads))}")
    con.execute("SET enable_progress_bar = false")
    return con


def layout_stats(root: Path) -> dict[str, int]:
    """Files, partition folders, bytes and the most files in one folder under one table's directory."""
    per_folder: dict[Path, int] = {}
    size = 0
    for f in root.rglob("*.parquet"):
        per_folder[f.parent] = per_folder.get(f.parent, 0) + 1
        size += f.stat().st_size
    partitions = sum(1 for folder in per_folder if folder != root)
    return {
        "files": sum(per_folder.values()),
        "partitions": partitions,
        "bytes": size,
        "max_files_per_folder": max(per_folder.values(), default=0),
    }
