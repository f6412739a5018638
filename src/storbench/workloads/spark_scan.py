"""A full scan of the spark-transforms dataset: every row read from the target, no shuffle, no join.

The read baseline beside paper 000's transforms: how fast Spark alone reads the dataset
off this storage configuration, so that a transform's time can be set against a pure
read of the same files (the gap is its shuffle and compute). Same dataset, same cold
cache and the same ``noop`` action as the transforms (``rdd.count()`` in compat mode).
"""

from __future__ import annotations

from typing import Any

from storbench.results.metrics import metric_table
from storbench.context import RunContext
from storbench.results.model import Sample
from storbench.workloads.base import register
from storbench.workloads.spark_transforms import _TimedTransform, dataset

METRICS = metric_table("""
    scan_rows_per_s | Rows scanned per second      | rows/s | mean | higher/lower
    scan_mbps       | Dataset scan rate (size / time) | MB/s   | mean | higher/lower
""")


@register
class Scan(_TimedTransform):
    name = "scan"
    description = "read every row of the dataset with no shuffle: the read baseline of the transforms"
    metrics = METRICS

    def transform(self, frame: Any, params: dict[str, Any]) -> Any:
        return frame

    def run(self, ctx: RunContext, params: dict[str, Any]) -> list[Sample]:
        samples = super().run(ctx, params)
        window = ctx.window.span
        seconds = window.end - window.start if window else 0.0
        if seconds <= 0:
            return samples
        size_mb = ctx.target.size_bytes(dataset(ctx).uri) / 1e6
        return samples + [
            Sample(self.name, "scan_rows_per_s", params["rows"] / seconds, "rows/s"),
            Sample(self.name, "scan_mbps", size_mb / seconds, "MB/s"),
        ]
