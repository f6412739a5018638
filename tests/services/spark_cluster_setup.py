"""The Spark cluster tests' set-up pieces: a venv Python that cannot import storbench from an install, worker
directories each on its own loop-mounted ext4 when the tests run as root, and the session's 2-worker cluster
(``spark_standalone`` in tests/conftest.py)."""

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from storbench import api
from storbench.results.store import ResultStore
from tests.grouping import serve_until_last_user
from tests.loopdev import loop_device

SITECUSTOMIZE = """\
import os, sys
# this Python cannot import storbench from an install: drop every path entry that holds the package
sys.path[:] = [p for p in sys.path if not os.path.isdir(os.path.join(p or os.getcwd(), "storbench"))]
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__name__.lower()]
"""


def worker_dirs(stack: ExitStack, base: Path) -> tuple[list[str], list[str | None]]:
    """Two directories, each on its own loop-mounted ext4 when possible; (dirs, their loop device names)."""
    if os.geteuid() != 0 or not shutil.which("losetup") or not shutil.which("mount"):
        dirs = [base / "w1", base / "w2"]
        for d in dirs:
            d.mkdir()
        return [str(d) for d in dirs], [None, None]
    dirs, devices = [], []
    for name in ("w1", "w2"):
        device = stack.enter_context(loop_device(base / f"{name}.img", 256))
        # No journal and synchronous writes: what an executor writes reaches its device while the operation
        # runs (shuffle files are deleted before writeback would have flushed them), and nothing else does.
        subprocess.run(["mkfs.ext4", "-q", "-F", "-O", "^has_journal", device], check=True, capture_output=True)
        mount = base / name
        mount.mkdir()
        subprocess.run(["mount", "-o", "sync", device, str(mount)], check=True)
        stack.callback(subprocess.run, ["umount", "-l", str(mount)], check=False)
        dirs.append(str(mount))
        devices.append(Path(device).name)
    return dirs, devices


def python_without_storbench(folder: Path) -> str:
    """A PYSPARK_PYTHON for the cluster: the venv's Python, but storbench not importable from any install."""
    (folder / "sitecustomize.py").write_text(SITECUSTOMIZE)
    wrapper = folder / "python"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH="{folder}${{PYTHONPATH:+:$PYTHONPATH}}" exec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    check = subprocess.run(
        [str(wrapper), "-c", "import storbench"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")},
    )
    assert check.returncode != 0 and "No module named 'storbench'" in check.stderr  # the premise holds
    return str(wrapper)


def standalone_cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, dict, list[str | None]]]:
    """(results home, state, the workers' loop devices) of a 2-worker cluster (1 core, 1 GB each), each worker's
    local dir on its own loop device, taken down after its last user (tests/grouping.py) or the session."""
    home = tmp_path_factory.mktemp("spark-home")
    store = ResultStore(home)
    with ExitStack() as stack:
        dirs, devices = worker_dirs(stack, tmp_path_factory.mktemp("worker-dirs"))
        state = api.service_up("spark", store, workers=2, cores=1, memory="1g", worker_dir=dirs)

        def down() -> None:
            api.service_down("spark", store)  # its last test took it down already: then a no-op
            assert api.service_status("spark", store) is None

        yield from serve_until_last_user(request, (home, state, devices), down)
