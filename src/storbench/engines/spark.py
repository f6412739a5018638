"""PySpark session management: local[*] by default, any master by --spark-master."""

from __future__ import annotations

import os
import platform
from typing import Any

from storbench.errors import EngineError, InputError
from storbench.services.jvm import launcher_jar

DEFAULT_MASTER = "local[*]"


def parse_conf(pairs: list[str]) -> dict[str, str]:
    """``k=v`` strings from --spark-conf into a dict; a pair without '=' is bad input."""
    conf: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--spark-conf {pair!r}: expected key=value, e.g. spark.executor.memory=4g")
        conf[key.strip()] = value.strip()
    return conf


class SparkEngine:
    """Starts one SparkSession for a run and records its settings and versions."""

    def __init__(self, master: str = DEFAULT_MASTER, conf: dict[str, str] | None = None,
                 local_dir: str | None = None, app_name: str = "storbench"):
        self.master = master
        self.user_conf = dict(conf or {})
        self.local_dir = local_dir
        self.app_name = app_name
        self.event_log_dir: str | None = None  # set by the runner: the run's own results directory
        self.session: Any = None

    def effective_conf(self) -> dict[str, str]:
        conf = {
            "spark.ui.enabled": "false",  # no web UI port to collide with; nothing reads it
            "spark.sql.adaptive.enabled": "true",
            "spark.ui.showConsoleProgress": "false",  # progress bars would garble our own lines
            "spark.sql.execution.pythonUDF.arrow.enabled": "false",  # compat UDFs run as the reference ran them
        }
        if self.master.startswith("local"):
            # The host name does not resolve to loopback on many machines: bind the driver there.
            conf["spark.driver.host"] = "127.0.0.1"
            conf["spark.driver.bindAddress"] = "127.0.0.1"
            conf["spark.driver.memory"] = "2g"
        if self.event_log_dir:
            # Spark's own per-task metrics (shuffle, spill, GC), read back after the session stops.
            conf["spark.eventLog.enabled"] = "true"
            conf["spark.eventLog.dir"] = f"file://{self.event_log_dir}"
            conf["spark.eventLog.compress"] = "false"  # Spark 4 defaults to zstd, which Python 3.11 cannot read
        if self.local_dir:
            # Shuffle and spill go to the target's device, as on the paper's cluster nodes.
            conf["spark.local.dir"] = self.local_dir
        conf.update(self.user_conf)
        jar = launcher_jar()
        if jar:  # storbench's JVM-side workload code (dfsio), beside any jars the user adds
            conf["spark.jars"] = ",".join(filter(None, [self.user_conf.get("spark.jars"), str(jar)]))
        return conf

    def start(self) -> Any:
        if self.session is not None:
            return self.session
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        try:
            from pyspark.sql import SparkSession
        except ImportError:
            raise EngineError("pyspark is not installed; run the set-up command from the README") from None
        builder = SparkSession.builder.master(self.master).appName(self.app_name)
        for key, value in self.effective_conf().items():
            builder = builder.config(key, value)
        try:
            self.session = builder.getOrCreate()
        except Exception as exc:  # py4j/JVM start failures arrive as many types
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise EngineError(f"Spark session for master {self.master!r} failed to start: {first}") from exc
        self.session.sparkContext.setLogLevel("ERROR")
        return self.session

    def versions(self) -> dict[str, str]:
        session = self.start()
        jvm = session.sparkContext._jvm
        return {
            "spark": session.version,
            "java": str(jvm.java.lang.System.getProperty("java.version")),
            "java_vendor": str(jvm.java.lang.System.getProperty("java.vendor")),
            "python": platform.python_version(),
        }

    def settings(self) -> dict[str, str]:
        """Spark's own view of its configuration, as recorded with the run."""
        session = self.start()
        return dict(sorted(session.sparkContext.getConf().getAll()))

    def set_job_group(self, group: str) -> None:
        """Tags the Spark jobs that follow, so the event log attributes them to one workload."""
        if self.session is not None:
            self.session.sparkContext.setJobGroup(group, group)

    def default_parallelism(self) -> int:
        return int(self.start().sparkContext.defaultParallelism)

    def stop(self) -> None:
        if self.session is not None:
            self.session.stop()
            self.session = None
