"""A run directory's files on disk: written durably, read line by line.

Durable means on the device before anyone is told: a file is written beside its final name, fsynced, renamed
over it and its directory fsynced, so the index never records a run whose manifest a power cut would lose.

``samples.jsonl`` is appended one fsynced batch per workload, so the only damage a crash can do is cut the
last line short: everything before it stands (it was fsynced before the next write began). A bad line before
the last is not a crash's doing (the file was damaged or edited): nothing in it can be trusted, and it is
refused. Both are named by file and line, never skipped silently.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from storbench.errors import ResultsError
from storbench.results.model import Sample


def fsync_dir(directory: Path) -> None:
    """A new or renamed entry of ``directory`` reaches the device (the file's own fsync does not cover it)."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_durably(path: Path, text: str) -> None:
    """``path`` holds ``text`` entirely or keeps what it held, and is on the device when this returns."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)


def create_durably(path: Path) -> None:
    """An empty ``path`` (the samples file a run appends to), its directory entry on the device."""
    path.touch()
    fsync_dir(path.parent)


def read_samples(path: Path) -> tuple[list[Sample], int | None]:
    """The samples of ``path`` and the number of a last line cut short (None: the file is whole).

    A bad line before the last: ResultsError naming the file and the line."""
    if not path.exists():
        return [], None
    lines = path.read_text().splitlines()
    samples: list[Sample] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            samples.append(Sample.from_dict(json.loads(line)))
        except (json.JSONDecodeError, KeyError, ValueError, TypeError) as exc:
            if number == len(lines):  # a crash cut the last write short
                return samples, number
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else f"{type(exc).__name__}: {exc}"
            raise ResultsError(f"{path}:{number}: corrupt sample line ({why}); the lines after it are not the "
                               f"end a crash leaves, so the file is not read: fix or remove line {number}") from None
    return samples, None
