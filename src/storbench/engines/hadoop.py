"""Hadoop's own tools in MapReduce local mode (TestDFSIO, the cross-check driver of dfsio).

They run on the JVM launchers' classpath (jvm/, built by the set-up), which pins the
Hadoop version: starting the engine finds java and that classpath and records the
version; every tool run works in the engine's private scratch directory (``mkdtemp``),
which ``stop`` removes.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from storbench.engines import s3a
from storbench.engines.base import ToolEngine, register, run_limited
from storbench.services.jvm import java_binary, launcher_classpath


@register
class HadoopEngine(ToolEngine):
    name = "hadoop"

    @classmethod
    def data_uri(cls, target: Any, uri: str) -> str:
        return s3a.spark_uri(uri)  # Hadoop's own client reaches s3:// through S3A too

    def __init__(self) -> None:
        super().__init__()
        self._scratch: Path | None = None

    def read_version(self) -> str:
        java_binary()  # no java: EngineError before anything runs
        found = re.search(r"hadoop-common-(\d[\w.-]*?)\.jar", launcher_classpath())
        return f"hadoop {found.group(1)}" if found else "hadoop (version unknown)"

    def scratch(self) -> Path:
        """A private working directory for the tools' local files (result files, local job dirs)."""
        if self._scratch is None:
            self._scratch = Path(tempfile.mkdtemp(prefix="storbench-hadoop-"))
        return self._scratch

    def run(self, main_class: str, args: list[str], timeout: float | None,
            heap: str = "1g") -> subprocess.CompletedProcess:
        """``java -cp <launchers> main_class args`` in the scratch directory, killed after ``timeout`` seconds
        (subprocess.TimeoutExpired)."""
        argv = [java_binary(), f"-Xmx{heap}", "-cp", launcher_classpath(), main_class, *args]
        return run_limited(argv, timeout, self.scratch())

    def stop(self) -> None:
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
