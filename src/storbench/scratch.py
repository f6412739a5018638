"""Private scratch directories (``mkdtemp``: 0700, an unpredictable name) and what a crashed run left of them.

Every scratch directory storbench makes for a run is named ``storbench-*`` and, while a run session records
them (:func:`recording`), its path goes into the run's manifest (``scratch``) the moment it is made. A run
that ends removes its own; a run killed with SIGKILL cannot, and ``storbench cleanup RUN`` removes what is
left (:func:`remove_left`): only directories that are still what storbench made (a real directory, not a
link, named ``storbench-*``, owned by this user, mode 0700), never a path the manifest names otherwise.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

PREFIX = "storbench-"
_lock = threading.Lock()
_record: Callable[[str], None] | None = None


def make(prefix: str, dir: str | Path | None = None) -> Path:
    """A new private directory ``<dir or $TMPDIR>/<prefix>XXXXXXXX``, recorded in the running run's manifest."""
    if not prefix.startswith(PREFIX):
        raise ValueError(f"a scratch directory's prefix starts with {PREFIX!r}: {prefix!r}")
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=dir))
    with _lock:
        if _record is not None:
            try:
                _record(str(path))
            except Exception:  # the record is for a crash's cleanup: never the reason a run fails
                pass
    return path


@contextmanager
def recording(record: Callable[[str], None]) -> Iterator[None]:
    """While the block runs, each directory :func:`make` makes is handed to ``record`` (its path)."""
    global _record
    with _lock:
        previous, _record = _record, record
    try:
        yield
    finally:
        with _lock:
            _record = previous


def ours(path: Path) -> bool:
    """Whether ``path`` is still a scratch directory storbench made: a directory (not a link) named
    ``storbench-*``, owned by this user, that no one else may enter."""
    try:
        info = path.lstat()
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and path.name.startswith(PREFIX)
        and info.st_uid == os.geteuid()
        and not info.st_mode & 0o077
    )


def remove_left(paths: list[str]) -> list[str]:
    """Removes the directories of ``paths`` that are still :func:`ours`; the ones removed."""
    removed = []
    for text in paths:
        path = Path(text)
        if path.is_absolute() and ours(path):
            shutil.rmtree(path, ignore_errors=True)
            if not path.exists():
                removed.append(text)
    return removed
