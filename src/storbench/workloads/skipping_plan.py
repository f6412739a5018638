"""What a query read, from the JVM: its file scans' SQL metrics and the Hadoop client's bytes read.

- Scans: after the query ran, its executed plan (the final one under adaptive execution) is walked and the
  metrics of every file scan node summed: ``numOutputRows`` (the rows the reader returned: with filter pushdown
  only those of the row groups it kept, as Spark's vectorized Parquet reader filters row groups, not rows),
  ``numFiles`` (files read), ``filesSize`` (their size) and ``numPartitions`` (partition folders read).
  SQL metrics are updated in the driver before a job ends, so they are complete when ``collect`` returns.
- Bytes: Hadoop's FileSystem statistics for the target's scheme (``file``, ``hdfs``, ``s3a``), JVM-wide: read
  before and after the query, in the driver's JVM, which runs the tasks too on a ``local`` master.
"""

from __future__ import annotations

from typing import Any

SCAN_METRICS = {"numOutputRows": "rows_scanned", "numFiles": "files_read", "filesSize": "files_bytes",
                "numPartitions": "partitions_read"}
_WRAPPERS = {"AdaptiveSparkPlanExec": "executedPlan", "ShuffleQueryStageExec": "plan",
             "BroadcastQueryStageExec": "plan", "TableCacheQueryStageExec": "plan"}


def scan_totals(frame: Any) -> dict[str, int]:
    """The file scans' metrics of ``frame``'s last execution, summed by name (SCAN_METRICS' values)."""
    totals = {name: 0 for name in SCAN_METRICS.values()}
    _walk(frame._jdf.queryExecution().executedPlan(), totals)
    return totals


def _walk(node: Any, totals: dict[str, int]) -> None:
    kind = str(node.getClass().getSimpleName())
    if kind in _WRAPPERS:
        _walk(getattr(node, _WRAPPERS[kind])(), totals)
        return
    if kind == "ReusedExchangeExec":  # its scans ran once, counted where they are
        return
    if kind == "FileSourceScanExec":
        metrics = node.metrics()
        for key, name in SCAN_METRICS.items():
            if metrics.contains(key):
                totals[name] += int(metrics.apply(key).value())
    children = node.children()
    for i in range(children.size()):
        _walk(children.apply(i), totals)


def fs_bytes_read(spark: Any, scheme: str) -> int:
    """Bytes read so far through Hadoop's FileSystem clients of ``scheme`` in this JVM."""
    stats = spark._jvm.org.apache.hadoop.fs.FileSystem.getAllStatistics()
    return sum(int(s.getBytesRead()) for s in stats if str(s.getScheme()) == scheme)
