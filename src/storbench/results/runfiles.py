"""A run directory's files on disk: written durably, read line by line.

Durable means on the device before anyone is told: a file is written beside its final name, fsynced, renamed
over it and its directory fsynced, so the index never records a run whose manifest a power cut would lose.

``samples.jsonl`` is appended one fsynced batch per workload, so the only damage a crash can do is cut the
last line short: everything before it stands (it was fsynced before the next write began). A bad line before
the last is not a crash's doing (the file was damaged or edited): nothing in it can be trusted, and it is
refused. Both are named by file and line, never skipped silently.

A run directory may come from elsewhere (``storbench import``), so its files are read without following a
symbolic link (``O_NOFOLLOW``) and only when they are regular files: a ``telemetry.csv`` linked to
``/etc/shadow`` is refused by name, never shown in a report.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

from storbench.errors import ResultsError
from storbench.results.model import SCHEMA_VERSION, Sample


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


def read_text(path: Path) -> str | None:
    """The text of a run directory's file, None when there is none; a symbolic link (never followed) or anything
    but a regular file is refused: ResultsError naming it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ResultsError(
                f"{path}: a symbolic link; storbench reads a run directory's files only as regular "
                f"files, never what a link points to: replace the link by the file itself"
            ) from None
        raise ResultsError(f"{path}: cannot read it ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ResultsError(f"{path}: not a regular file; a run directory holds regular files only")
        return handle.read().decode("utf-8", "replace")


def parse_json(text: str) -> Any:
    """``json.loads``; nesting too deep for Python's parser is a ValueError like any other bad JSON (not a
    RecursionError)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply (more levels than any storbench file has)") from None


def unsafe_entries(directory: Path) -> list[tuple[Path, str]]:
    """Every entry under ``directory`` that is a symbolic link or not a regular file or directory, with what it is
    (the walk follows no link)."""
    found = []
    for root, dirs, files in os.walk(directory, followlinks=False):
        for name in sorted(dirs + files):
            entry = Path(root) / name
            mode = os.lstat(entry).st_mode
            if stat.S_ISLNK(mode):
                found.append((entry, "a symbolic link"))
            elif not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                found.append((entry, "not a regular file"))
    return found


def read_samples(path: Path) -> tuple[list[Sample], int | None]:
    """The samples of ``path`` and the number of a last line cut short (None: the file is whole).

    A bad line before the last: ResultsError naming the file and the line."""
    text = read_text(path)
    if text is None:
        return [], None
    lines = text.splitlines()
    samples: list[Sample] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            samples.append(Sample.from_dict(parse_json(line)))
        except (json.JSONDecodeError, KeyError, ValueError, TypeError) as exc:
            if number == len(lines):  # a crash cut the last write short
                return samples, number
            why = exc.msg if isinstance(exc, json.JSONDecodeError) else f"{type(exc).__name__}: {exc}"
            raise ResultsError(
                f"{path}:{number}: corrupt sample line ({why}); the lines after it are not the "
                f"end a crash leaves, so the file is not read: fix or remove line {number}"
            ) from None
    return samples, None


def check_schema(version: Any, where: str) -> None:
    """A manifest's schema_version must be one this storbench reads; else one line saying to upgrade."""
    if not isinstance(version, int) or version < 1:
        raise ResultsError(f"{where}: missing or invalid schema_version {version!r}")
    if version > SCHEMA_VERSION:
        raise ResultsError(
            f"{where}: written with results schema {version}, this storbench reads up to "
            f"{SCHEMA_VERSION}; upgrade storbench to read it"
        )


def summary(manifest: dict[str, Any]) -> dict[str, Any]:
    """What the index keeps of a manifest for listings and the ETA (``ResultStore.list_runs(brief=True)``)."""
    return {
        "scale": manifest.get("scale"),
        "repetitions": manifest.get("repetitions"),
        "sweep": manifest.get("sweep") or [],
        "config": {"target": (manifest.get("config") or {}).get("target")},
    }
