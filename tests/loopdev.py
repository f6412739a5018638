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


@contextmanager
def tmpfs(path: Path, size_mb: int, read_only: bool = False):
    """A small tmpfs mounted on ``path`` (an existing empty directory): a file system that fills up, or one no
    one can write, root included (root and mount only)."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root and mount")
    options = f"size={size_mb}m" + (",ro" if read_only else "")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"mount -t tmpfs failed: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)
