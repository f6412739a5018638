"""Where the data lives, and the run-owned directory that is all storbench ever writes there.

Every run claims ``<target>/storbench-<run-id>/`` with a marker file naming the run;
cleanup removes that directory only when the marker is ours, and nothing else.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from storbench.errors import InputError, TargetError

MARKER = ".storbench-owned"
SUPPORTED_SCHEMES = ("file",)


@dataclass(frozen=True)
class Target:
    uri: str
    path: Path  # the local directory behind a file:// target

    def run_root(self, run_id: str) -> Path:
        return self.path / f"storbench-{run_id}"


def parse_target(text: str) -> Target:
    parsed = urlparse(text)
    scheme = parsed.scheme or "file"
    if scheme not in SUPPORTED_SCHEMES:
        raise InputError(f"--target {text!r}: scheme {scheme}:// is not supported yet; "
                         f"supported: file:///path or a plain directory path")
    raw = parsed.path if parsed.scheme else text
    if not raw:
        raise InputError(f"--target {text!r}: no path; use file:///absolute/path or a directory")
    path = Path(raw).expanduser().absolute()
    if path.exists() and not path.is_dir():
        raise TargetError(f"--target {text!r}: {path} exists and is not a directory")
    return Target(uri=f"file://{path}", path=path)


def nearest_existing(path: Path) -> Path:
    while not path.exists():
        path = path.parent
    return path


def check_capacity(target: Target, need_bytes: int) -> None:
    """Refuse before starting when the target is not writable or too small."""
    existing = nearest_existing(target.path)
    if not os.access(existing, os.W_OK | os.X_OK):
        raise TargetError(f"target {target.uri}: {existing} is not writable by this user")
    free = shutil.disk_usage(existing).free
    if need_bytes > free:
        raise TargetError(f"target {target.uri}: needs about {need_bytes / 1e9:.2f} GB for this run "
                          f"(dataset and shuffle space) but only {free / 1e9:.2f} GB are free; "
                          f"use a smaller --scale or another --target")


def claim_run_root(target: Target, run_id: str) -> Path:
    root = target.run_root(run_id)
    try:
        root.mkdir(parents=True)
    except FileExistsError:
        raise TargetError(f"target {target.uri}: {root} already exists; refusing to reuse it") from None
    except OSError as exc:
        raise TargetError(f"target {target.uri}: cannot create {root}: {exc.strerror}") from None
    (root / MARKER).write_text(run_id + "\n")
    return root


def release_run_root(root: Path, run_id: str) -> bool:
    """Delete the run-owned directory if (and only if) its marker names this run."""
    marker = root / MARKER
    if not marker.is_file() or marker.read_text().strip() != run_id:
        return False
    shutil.rmtree(root)
    return True


def evict_from_page_cache(directory: Path) -> int:
    """Drop our own dataset files from the page cache so each operation reads from the device.

    Only the files under ``directory`` (which the run wrote) are touched, with
    posix_fadvise(DONTNEED) after fsync; returns the number of files evicted.
    """
    count = 0
    for dirpath, _dirs, files in os.walk(directory):
        for name in files:
            fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
            try:
                os.fsync(fd)
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                count += 1
            finally:
                os.close(fd)
    return count
