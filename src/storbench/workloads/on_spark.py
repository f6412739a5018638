"""What a workload on the Spark engine reaches through the run's context: its one SparkSession."""

from __future__ import annotations

from typing import Any

from storbench.context import RunContext
from storbench.engines.spark import SparkEngine


def spark_session(ctx: RunContext) -> Any:
    """The run's SparkSession, started on first use (the workload must name "spark" in its engines)."""
    return ctx.engine(SparkEngine).start()
