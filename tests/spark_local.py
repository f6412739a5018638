"""A test's own local Spark session, started the one way: this machine's loopback, no web UI."""

from __future__ import annotations

import os
from typing import Any


def local_session(app: str, master: str = "local[2]", **conf: str) -> Any:
    """A SparkSession named ``app`` on ``master``, bound to 127.0.0.1, with ``conf`` (dotted keys) added."""
    from pyspark.sql import SparkSession

    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (
        SparkSession.builder.master(master)
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
    )
    for key, value in conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
