"""The code a Spark job ships to executors that have nothing but Spark and Python (storbench.zip) imports there:
every module an executor's task imports loads from the zip, data files included (read as package resources, not
by a path beside ``__file__``, which inside a zip is no directory)."""

import subprocess
import sys

import pytest

from storbench.engines.shipping import package_zip

pytestmark = pytest.mark.real  # a Python child process

# what the Spark workloads' tasks import on an executor (tpcds-gen's tasks, the native fan-out, transforms)
TASK_MODULES = (
    "storbench.workloads.tpcds.tasks",
    "storbench.engines.native_fanout",
    "storbench.workloads.spark_transforms",
)


def test_the_shipped_zip_imports_what_executor_tasks_import(tmp_path):
    archive = package_zip(tmp_path)
    code = (
        f"import sys; sys.path.insert(0, {str(archive)!r})\n"
        f"import importlib, storbench\n"
        f"assert storbench.__file__.startswith({str(archive)!r}), storbench.__file__\n"
        + "".join(f"importlib.import_module({name!r})\n" for name in TASK_MODULES)
        + "import storbench.buildparts as b; print(len(b.MODULES))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[
        -2000:
    ]  # was: NotADirectoryError: .../storbench.zip/storbench/buildparts.tsv
    assert int(done.stdout.strip()) > 0
