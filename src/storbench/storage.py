"""File-system operations on a target, one class per scheme, all confined to the run root.

``LocalStorage`` works on ``file://`` directories with the os module, before Spark
starts. ``HadoopStorage`` works on ``hdfs://`` (and any Hadoop file system) through
the running Spark's own Hadoop client, so it sees exactly what the workloads see.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from storbench.errors import InputError, TargetError
from storbench.targets import MARKER, Target


def nearest_existing(path: Path) -> Path:
    while not path.exists():
        path = path.parent
    return path


def _refuse_capacity(target: Target, need_bytes: int, free: int) -> None:
    if need_bytes > free:
        raise TargetError(f"target {target.uri}: needs about {need_bytes / 1e9:.2f} GB for this run "
                          f"(dataset and shuffle space) but only {free / 1e9:.2f} GB are free; "
                          f"use a smaller --scale or another --target")


class LocalStorage:
    def __init__(self, target: Target):
        self.target = target
        self.path = target.path

    def check_capacity(self, need_bytes: int) -> None:
        """Refuse before starting when the target is not writable or too small."""
        existing = nearest_existing(self.path)
        if not os.access(existing, os.W_OK | os.X_OK):
            raise TargetError(f"target {self.target.uri}: {existing} is not writable by this user")
        _refuse_capacity(self.target, need_bytes, shutil.disk_usage(existing).free)

    def claim(self, run_id: str) -> str:
        root = self.path / f"storbench-{run_id}"
        try:
            root.mkdir(parents=True)
        except FileExistsError:
            raise TargetError(f"target {self.target.uri}: {root} already exists; refusing to reuse it") from None
        except OSError as exc:
            raise TargetError(f"target {self.target.uri}: cannot create {root}: {exc.strerror}") from None
        (root / MARKER).write_text(run_id + "\n")
        return f"file://{root}"

    def release(self, run_id: str) -> bool:
        """Delete the run-owned directory if (and only if) its marker names this run."""
        root = self.path / f"storbench-{run_id}"
        marker = root / MARKER
        if not marker.is_file() or marker.read_text().strip() != run_id:
            return False
        shutil.rmtree(root)
        return True

    def size_bytes(self, uri: str) -> int:
        return sum(f.stat().st_size for f in Path(uri.removeprefix("file://")).rglob("*") if f.is_file())

    def evict(self, uri: str) -> int:
        return evict_from_page_cache(Path(uri.removeprefix("file://")))

    def delete(self, uri: str) -> bool:
        """Remove ``uri`` only if it lies inside a directory storbench marked as its own."""
        path = Path(uri.removeprefix("file://"))
        if not any((parent / MARKER).is_file() for parent in path.parents):
            raise TargetError(f"refusing to delete {uri}: it is not inside a storbench run directory")
        if not path.exists():
            return False
        shutil.rmtree(path) if path.is_dir() else path.unlink()
        return True


class HadoopStorage:
    """Any Hadoop FileSystem, reached through the Spark session's JVM."""

    def __init__(self, target: Target, spark: Any, local_dirs: list[str] | None = None):
        self.target = target
        self.jvm = spark._jvm
        self.conf = spark._jsc.hadoopConfiguration()
        self.local_dirs = local_dirs or []  # DataNode directories on this host, when the cluster is ours

    def _path(self, uri: str) -> Any:
        return self.jvm.org.apache.hadoop.fs.Path(uri)

    def _fs(self) -> Any:
        return self._path(self.target.uri or "/").getFileSystem(self.conf)

    def check_capacity(self, need_bytes: int, replication: int) -> None:
        fs = self._fs()
        if hasattr(fs, "getDataNodeStats"):
            live = len(fs.getDataNodeStats())
            if replication > live:
                raise InputError(f"replication {replication} is above the {live} live DataNode(s) "
                                 f"of {self.target.uri}; allowed: 1 to {live}")
        _refuse_capacity(self.target, need_bytes * replication, int(fs.getStatus().getRemaining()))

    def claim(self, run_id: str) -> str:
        fs, root = self._fs(), self.target.run_root_uri(run_id)
        if fs.exists(self._path(root)):
            raise TargetError(f"target {self.target.uri}: {root} already exists; refusing to reuse it")
        fs.mkdirs(self._path(root))
        out = fs.create(self._path(f"{root}/{MARKER}"), False)
        out.write(bytearray((run_id + "\n").encode()))
        out.close()
        return root

    def release(self, run_id: str) -> bool:
        fs, root = self._fs(), self.target.run_root_uri(run_id)
        marker = self._path(f"{root}/{MARKER}")
        if not fs.exists(marker):
            return False
        stream = fs.open(marker)
        try:
            text = self.jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
        finally:
            stream.close()
        if str(text).strip() != run_id:
            return False
        return bool(fs.delete(self._path(root), True))

    def size_bytes(self, uri: str) -> int:
        return int(self._fs().getContentSummary(self._path(uri)).getLength())

    def delete(self, uri: str) -> bool:
        """Remove ``uri`` only if it lies inside a directory storbench marked as its own."""
        fs, path = self._fs(), self._path(uri)
        parent = path.getParent()
        while parent is not None and not fs.exists(self._path(f"{parent.toString()}/{MARKER}")):
            parent = parent.getParent()
        if parent is None:
            raise TargetError(f"refusing to delete {uri}: it is not inside a storbench run directory")
        return bool(fs.delete(path, True))

    def evict(self, uri: str) -> int:
        # The blocks live in the DataNodes' directories; when those are ours, drop them from the cache.
        return sum(evict_from_page_cache(Path(d)) for d in self.local_dirs if Path(d).exists())


def evict_from_page_cache(directory: Path) -> int:
    """Drop our own files from the page cache so each operation reads from the device.

    Only files under ``directory`` (which storbench wrote) are touched, with
    posix_fadvise(DONTNEED) after fsync; returns the number of files evicted.
    """
    count = 0
    for dirpath, _dirs, files in os.walk(directory):
        for name in files:
            try:
                fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
            except OSError:  # a block file the DataNode just removed
                continue
            try:
                os.fsync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                count += 1
            finally:
                os.close(fd)
    return count
