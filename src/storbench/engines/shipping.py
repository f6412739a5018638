"""What a Spark job takes to executors that have nothing but Spark and Python: storbench's own code as a zip.

On a non-local master the workers need not have storbench installed: the Spark engine
builds ``storbench.zip`` (the package's modules and data files, no caches) in a private
temporary directory and hands it to ``SparkContext.addPyFile``; Spark puts it on each
Python worker's ``sys.path`` ahead of site-packages. The native engine binary goes the
same way through ``addFile`` (storbench.engines.native.run_spark_barrier).
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path
from typing import Any

from storbench import scratch
import storbench

ZIP_NAME = "storbench.zip"


def package_zip(dest: Path) -> Path:
    """``dest/storbench.zip`` holding the ``storbench`` package as imported here (bytecode caches left out)."""
    package = Path(storbench.__file__).resolve().parent
    path = dest / ZIP_NAME
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for item in sorted(package.rglob("*")):
            if item.is_file() and "__pycache__" not in item.parts and item.suffix not in (".pyc", ".pyo"):
                archive.write(item, Path("storbench") / item.relative_to(package))
    return path


def ship_code(context: Any) -> Path:
    """Builds the zip in a private directory (mkdtemp: 0700) and adds it to ``context``; returns the directory,
    which must live as long as the context (the driver serves the file from there)."""
    work = scratch.make("storbench-ship-")
    try:
        context.addPyFile(str(package_zip(work)))
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return work
