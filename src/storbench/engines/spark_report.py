"""What a report shows of Spark, read from any stored manifest: its version, master and memory settings.

Every run's manifest records ``config.spark_master`` (the engine options' record, whichever engines ran) and,
when Spark ran, ``spark_settings`` (its effective settings, secrets masked); runs stored before these rows moved
here recorded the same keys, so their reports read the same.
"""

from __future__ import annotations

from typing import Any

from storbench.engines.capabilities import ReportedSettings


class SparkReport(ReportedSettings):
    """The Spark engine's rows in a report's configuration table."""

    @classmethod
    def report_settings(cls, manifest: dict[str, Any]) -> dict[str, Any]:
        # only the settings a report shows: spark_settings can hold credentials (s3a keys)
        settings = manifest.get("spark_settings") or {}
        config = manifest.get("config") or {}
        return {
            "master": config.get("spark_master") or settings.get("spark.master"),
            "driver_memory": settings.get("spark.driver.memory"),
            "executor_memory": settings.get("spark.executor.memory"),
        }

    @classmethod
    def software_rows(cls, software: dict[str, Any]) -> dict[str, Any]:
        return {"Spark": software.get("spark")}

    @classmethod
    def settings_rows(cls, settings: dict[str, Any]) -> dict[str, Any]:
        return {
            "Spark master": settings.get("master"),
            "Spark driver memory": settings.get("driver_memory") or "default",
            "Spark executor memory": settings.get("executor_memory") or "default",
        }
