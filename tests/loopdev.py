"""A loop device over a sparse file, for tests that need a second block device (root and losetup only)."""

import os
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def loop_device(path: Path, size_mb: int, mkfs: bool = False):
    if os.geteuid() != 0 or not shutil.which("losetup"):
        pytest.skip("loop devices need root and losetup")
    with open(path, "wb") as handle:
        handle.truncate(size_mb << 20)
    attached = subprocess.run(["losetup", "-f", "--show", str(path)], capture_output=True, text=True)
    if attached.returncode != 0:
        pytest.skip(f"losetup failed: {attached.stderr.strip()}")
    device = attached.stdout.strip()
    try:
        if mkfs:
            subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True, capture_output=True)
        yield device
    finally:
        subprocess.run(["losetup", "-d", device], check=False)
