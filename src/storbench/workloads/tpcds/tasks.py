"""What one Spark task of TPC-DS generation does on its executor: one part of one table, from the generator to
the target, on that node alone.

The task runs tpcgen-cli for its part into a staging directory of its own, lays the part out with DuckDB
(:mod:`storbench.workloads.tpcds.layout`; file names tagged with the part, so parts share partition folders
without clashing), checks that the layout holds the rows generated, and places the files:

- file:// — staged on the target's own file system (``<run root>/tpcds-staging``), so each file is renamed
  into the table's folder: nothing is copied;
- hdfs://, s3a:// — staged on the executor's local disk (Spark's local directory), and each file is then put
  on the target by the executor's own Hadoop client (``storbench.jvm.PutFile`` through SQL's java_method, in
  the same task: see :mod:`storbench.workloads.tpcds.pipeline`), which deletes the local copy.

The task yields one summary row (``local`` None) and, on a remote target, one row per file to put.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

from storbench.errors import WorkloadError
from storbench.workloads.tpcds.data import generate_table, local_bytes, parquet_rows
from storbench.workloads.tpcds.layout import lay_out, layout_stats

# one row per yielded item: the file to put (None: the task's summary), where, its bytes, the task's summary
ROW_SCHEMA = "table string, part int, local string, dest string, root string, summary string"
BINARY = "tpcgen-cli"  # the name the binary is shipped under (SparkFiles)


def run_part(chunk: tuple[str, int, int], config: dict[str, Any]) -> Iterator[tuple]:
    """Generates, lays out and places ``chunk`` = (table, part, parts); ``config``: sf, layout, file_mb,
    data_uri, remote, threads, staging (file://: a folder on the target's file system), binary (the driver's)."""
    table, part, parts = chunk
    root = Path(tempfile.mkdtemp(prefix=f"tpcds-{table}-{part}-", dir=_staging_parent(config)))
    try:
        t0 = time.monotonic()
        staged = generate_table(
            table,
            config["sf"],
            root / "staged",
            threads=config["threads"],
            part=part,
            parts=parts,
            binary=_binary(config["binary"]),
        )
        rows = parquet_rows(staged)
        size = local_bytes(staged) if staged.is_dir() else 0
        t1 = time.monotonic()
        layout = root / "layout"
        how = "empty"
        if rows:
            how = lay_out(
                staged,
                layout,
                table,
                config["layout"],
                config["file_mb"],
                size,
                config["threads"],
                root / "scratch",
                tag=str(part),
            )
            written = parquet_rows(layout)
            if written != rows:
                raise WorkloadError(
                    f"tpcds-gen: table {table} part {part} has {written} rows laid out, the generator wrote {rows}"
                )
        folders = Counter(str(f.parent.relative_to(layout)) for f in layout.rglob("*.parquet"))  # "." : flat
        stats = layout_stats(layout) if rows else {"files": 0, "partitions": 0, "bytes": 0}
        shutil.rmtree(root / "staged", ignore_errors=True)
        shutil.rmtree(root / "scratch", ignore_errors=True)
        files = sorted(layout.rglob("*.parquet"))
        dest = f"{config['data_uri']}/{table}"
        if not config["remote"]:
            _move_into(files, layout, Path(dest.removeprefix("file://")))
        t2 = time.monotonic()
        summary = {
            "rows": rows,
            "staged_bytes": size,
            "how": how,
            "bytes": stats["bytes"],
            "files": stats["files"],
            "folders": folders,
            "generate_s": round(t1 - t0, 3),
            "layout_s": round(t2 - t1, 3),
            "host": socket.gethostname(),
            "cwd": os.getcwd(),
        }
        yield table, part, None, None, None, json.dumps(summary)
        if config["remote"]:
            for f in files:  # put (and deleted) by the executor's Hadoop client after this generator yields it
                yield table, part, str(f), f"{dest}/{f.relative_to(layout)}", str(root), None
    finally:
        if not config["remote"]:
            shutil.rmtree(root, ignore_errors=True)
        else:  # what the puts will not delete: everything but the laid-out files
            shutil.rmtree(root / "staged", ignore_errors=True)
            shutil.rmtree(root / "scratch", ignore_errors=True)


def _staging_parent(config: dict[str, Any]) -> str:
    """file://: the target's own file system; else the executor's local directory (its node's disk)."""
    if config["staging"]:
        os.makedirs(config["staging"], exist_ok=True)
        return config["staging"]
    local = os.environ.get("SPARK_LOCAL_DIRS", "").split(",")[0]  # Spark's block manager dir, set for Python
    return local if local and os.path.isdir(local) else tempfile.gettempdir()


def _binary(driver_binary: str) -> str:
    """The tpcgen-cli shipped with the job (a cluster), else the driver's own (local mode)."""
    try:
        from pyspark import SparkFiles

        shipped = SparkFiles.get(BINARY)
        if os.path.exists(shipped):
            os.chmod(shipped, 0o755)
            return shipped
    except Exception:  # no SparkContext files (a plain call, a test)
        pass
    return driver_binary


def _move_into(files: list[Path], layout: Path, dest: Path) -> None:
    for f in files:
        target = dest / f.relative_to(layout)
        target.parent.mkdir(parents=True, exist_ok=True)  # parts of a table share its partition folders
        os.replace(f, target)
