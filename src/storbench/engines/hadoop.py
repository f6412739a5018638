"""Hadoop's own tools (TestDFSIO, the cross-check driver of dfsio) as MapReduce jobs: in local mode, or, when
the run's Spark runs on YARN (``--spark-master yarn``), on that same YARN with as many maps at once as Spark
has task slots (``framework``), so that the cross-check compares distributed with distributed.

They run on the JVM launchers' classpath (jvm/, built by the set-up), which pins the
Hadoop version: starting the engine finds java and that classpath and records the
version; every tool run works in the engine's private scratch directory (``mkdtemp``),
which ``stop`` removes.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from storbench import scratch
from storbench.engines import s3a
from storbench.engines.base import register
from storbench.engines.tool import ToolEngine, run_limited
from storbench.engines.capabilities import TargetBinding
from storbench.services import yarn_client
from storbench.services.jvm import java_binary, launcher_classpath


@dataclass(frozen=True)
class HadoopJob:
    """One Hadoop tool run: ``main_class`` with ``args`` (its ``-D`` options: ``HadoopEngine.framework``), killed
    after ``timeout`` seconds, in a JVM with ``heap``."""

    main_class: str
    args: list[str]
    timeout: float | None
    heap: str = "1g"


@register
class HadoopEngine(ToolEngine, TargetBinding):
    name = "hadoop"

    @classmethod
    def check_target(cls, target: Any) -> None:
        """Nothing beyond its classpath (checked at start): its S3A jars are the Spark engine's, checked there."""

    @classmethod
    def data_uri(cls, target: Any, uri: str) -> str:
        return s3a.spark_uri(uri)  # Hadoop's own client reaches s3:// through S3A too

    def __init__(self) -> None:
        super().__init__()
        self._scratch: Path | None = None
        self._conf_dir: Path | None = None  # on YARN: the cluster's Hadoop conf dir, first on the classpath

    def read_version(self) -> str:
        java_binary()  # no java: EngineError before anything runs
        found = re.search(r"hadoop-common-(\d[\w.-]*?)\.jar", launcher_classpath())
        return f"hadoop {found.group(1)}" if found else "hadoop (version unknown)"

    def scratch(self) -> Path:
        """A private working directory for the tools' local files (result files, local job dirs)."""
        if self._scratch is None:
            self._scratch = scratch.make("storbench-hadoop-")
        return self._scratch

    def framework(self, spark_master: str, slots: int, staging: str, queue: str | None = None) -> list[str]:
        """The ``-D`` options of a MapReduce job with ``slots`` tasks at once: on YARN when Spark runs there (the
        cluster Spark's YARN client uses, already set in the environment by the Spark engine), else local.
        ``staging``: the job's staging dir (a URI on the job's default file system, which MapReduce requires)."""
        if spark_master != "yarn":
            self._conf_dir = None
            return ["-D", "mapreduce.framework.name=local", "-D", f"mapreduce.local.map.tasks.maximum={slots}"]
        self._conf_dir = yarn_client.conf_dir(None)
        return [
            "-D",
            "mapreduce.framework.name=yarn",
            "-D",
            f"mapreduce.job.running.map.limit={slots}",
            "-D",
            f"yarn.app.mapreduce.am.staging-dir={staging}",
            *(["-D", f"mapreduce.job.queuename={queue}"] if queue else []),
        ]

    def run(self, job: HadoopJob) -> subprocess.CompletedProcess:
        """``java -cp <launchers> MAIN_CLASS ARGS`` in the scratch directory, killed after the job's timeout
        (subprocess.TimeoutExpired)."""
        classpath = f"{self._conf_dir}:{launcher_classpath()}" if self._conf_dir else launcher_classpath()
        argv = [java_binary(), f"-Xmx{job.heap}", "-cp", classpath, job.main_class, *job.args]
        return run_limited(argv, job.timeout, self.scratch(), self.running)  # cancel kills it

    def stop(self) -> None:
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
