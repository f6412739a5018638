"""``file://`` targets: a local directory, claimed and checked with the os module before Spark starts.

The run root ``<dir>/storbench-<run-id>/`` holds the data and Spark's shuffle and spill
(``spark-local``), so both land on the target's own device as on the paper's nodes.
A plain path that is a block device is a raw device target (targets.device) instead.
"""

from __future__ import annotations

import errno
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from storbench.errors import InputError, TargetError
from storbench.targets.base import (
    GONE,
    MARKER,
    OTHER,
    OURS,
    PathTarget,
    Target,
    TargetOptions,
    below_root,
    evict_from_page_cache,
    local_path_in,
    refuse_capacity,
    register,
    syncfs,
)
from storbench.targets.device import DeviceTarget, is_block_device
from storbench.telemetry.zoned import zoned_stack


def nearest_existing(path: Path) -> Path:
    while not path.exists():
        path = path.parent
    return path


def under_dev(path: Path) -> bool:
    """A path in /dev (devtmpfs, in RAM) names a device; /dev/shm is the one place there meant for files."""
    real = Path(os.path.realpath(path))
    return real.is_relative_to("/dev") and not real.is_relative_to("/dev/shm")


def path_of(uri: str) -> Path:
    """The local path of a ``file://`` URI (or a plain path)."""
    return Path(uri.removeprefix("file://"))


def remove_tree(root: Path) -> None:
    """shutil.rmtree that lets another process remove parts of the tree at the same time: an engine stopping
    on the same signal (Spark's shutdown hook deletes its local dirs under the run root while we do)."""

    def already_gone(function, path, exc) -> None:  # noqa: ANN001 - shutil's callback
        exc = exc[1] if isinstance(exc, tuple) else exc
        if not isinstance(exc, FileNotFoundError):
            raise exc

    handler = {"onexc": already_gone} if sys.version_info >= (3, 12) else {"onerror": already_gone}
    for attempt in range(3):
        try:
            shutil.rmtree(root, **handler)
            return
        except OSError as exc:  # a file written into it meanwhile (ENOTEMPTY): once more, it is stopping
            if exc.errno != errno.ENOTEMPTY or attempt == 2:
                raise


@register
class FileTarget(PathTarget):
    """``path`` is the directory the run root goes in."""

    scheme = "file"
    kind = "directory"
    usage = "file:///path (or a plain directory)"
    wanted = "a directory on a filesystem"

    def __init__(self, path: Path, options: TargetOptions):
        super().__init__(path, options)
        self._created: list[Path] = []  # the missing directories claim_root made, deepest first

    @classmethod
    def parse(cls, text: str, options: TargetOptions) -> Target:
        path = local_path_in(text)
        if is_block_device(path):
            return DeviceTarget.parse(text, options)
        if under_dev(path):  # never a directory made on devtmpfs (in RAM, and likely a mistyped disk)
            missing = "" if path.exists() else " (it does not exist)"
            raise InputError(
                f"--target {text!r}: {path} is not a block device{missing}; a path under /dev "
                f"must be one (see lsblk); directories go elsewhere, e.g. /dev/shm/DIR"
            )
        existing = nearest_existing(path)
        if not existing.is_dir():  # the target itself, or a parent of it (file.txt/sub)
            kind = " (it is a file)" if existing.is_file() else ""
            raise TargetError(f"--target {text!r}: {existing} exists and is not a directory{kind}")
        return cls(path, options)

    def precheck(self, need_bytes: int) -> None:
        """Refuse before starting when the directory is not writable or too small."""
        existing = nearest_existing(self.path)
        if not os.access(existing, os.W_OK | os.X_OK):
            raise TargetError(f"target {self.uri}: {existing} is not writable by this user")
        refuse_capacity(self.uri, need_bytes, shutil.disk_usage(existing).free)

    def local_path(self) -> Path:
        return self.path

    def manifest_config(self) -> dict[str, Any]:
        """The stack under the directory: its file system, disks and their zoned models (paper 004)."""
        stack = zoned_stack(str(self.path))
        return {"zoned": stack} if stack else {}

    def claim_root(self) -> str:
        root = self.root()
        # A target whose parents do not exist yet is created, as `mkdir -p` would, rather than
        # refused: a user naming /tmp/x/a/b expects it to work. What was created for the run is
        # removed at release when empty, so nothing is left behind (deepest first).
        self._created = [p for p in [self.path, *self.path.parents] if not p.exists()]
        try:
            root.mkdir(parents=True)
        except FileExistsError:
            raise TargetError(f"target {self.uri}: {root} already exists; refusing to reuse it") from None
        except OSError as exc:
            raise TargetError(f"target {self.uri}: cannot create {root}: {exc.strerror}") from None
        (root / MARKER).write_text(self.run_id + "\n")
        return f"file://{root}"

    def root(self) -> Path:
        return self.path / f"storbench-{self.run_id}"

    def root_state(self) -> str:
        root, marker = self.root(), self.root() / MARKER
        if not os.path.lexists(root):
            return GONE
        if root.is_symlink() or not marker.is_file() or marker.is_symlink():
            return OTHER
        return OURS if marker.read_text().strip() == self.run_id else OTHER

    def release_root(self) -> bool:
        if not self.run_id or self.root_state() != OURS:
            return False
        remove_tree(self.root())
        for directory in self._created:
            try:
                directory.rmdir()  # only if empty: another run or the user may have put something there
            except OSError:
                break
        return True

    def size_bytes(self, uri: str) -> int:
        return sum(f.stat().st_size for f in path_of(uri).rglob("*") if f.is_file())

    def evict(self, uri: str) -> int:
        return evict_from_page_cache(path_of(uri))

    def flush(self) -> str:
        syncfs(self.root())
        return "syncfs"

    def delete(self, uri: str) -> bool:
        """Only below this run's marked root, after resolving symlinks: a link inside the root is removed, not
        followed; a path through a link out of the root, or with '..', is refused."""
        raw = uri.removeprefix("file://")  # not through Path, which would drop a '.' segment silently
        if not self.run_id or below_root(str(self.root()), raw) is None:
            raise self.refuse_delete(uri)
        path = Path(raw)
        real = Path(os.path.realpath(path.parent)) / path.name  # the parents resolved, the entry itself not
        if below_root(os.path.realpath(self.root()), str(real)) is None:
            raise self.refuse_delete(uri, f"it resolves to {real}, outside this run's root")
        if self.root_state() != OURS:
            raise self.refuse_delete(uri, f"the root's {MARKER} does not name run {self.run_id}")
        if not os.path.lexists(real):
            return False
        shutil.rmtree(real) if real.is_dir() and not real.is_symlink() else real.unlink()
        return True

    def scratch_dir(self) -> str:
        """Shuffle and spill on the target's own device, inside the run root."""
        return str(self.root() / "spark-local")
