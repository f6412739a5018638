"""The Spark cluster tests' set-up pieces: a venv Python that cannot import storbench from an install, and
worker directories each on its own loop-mounted ext4 when the tests run as root."""

import os
import shutil
import subprocess
from contextlib import ExitStack
from pathlib import Path

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
