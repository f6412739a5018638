"""Where the data lives: a ``file://`` directory or an ``hdfs://`` path.

Every run claims ``<target>/storbench-<run-id>/`` with a marker file naming the run;
cleanup removes that directory only when the marker is ours, and nothing else
(see storbench.storage for the file-system operations behind each scheme).
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from storbench.errors import InputError, TargetError

MARKER = ".storbench-owned"
SUPPORTED_SCHEMES = ("file", "hdfs")
CONNECT_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class Target:
    uri: str  # normalised: file:///abs/dir or hdfs://host:port/dir
    scheme: str
    path: Path | None  # the local directory behind a file:// target; None for remote file systems

    def run_root_uri(self, run_id: str) -> str:
        return f"{self.uri.rstrip('/')}/storbench-{run_id}"

    @property
    def is_local(self) -> bool:
        return self.scheme == "file"

    @property
    def authority(self) -> tuple[str, int] | None:
        parsed = urlparse(self.uri)
        return (parsed.hostname, parsed.port) if parsed.hostname and parsed.port else None


def parse_target(text: str) -> Target:
    parsed = urlparse(text)
    scheme = parsed.scheme or "file"
    if scheme not in SUPPORTED_SCHEMES:
        raise InputError(f"--target {text!r}: scheme {scheme}:// is not supported; "
                         f"supported: file:///path (or a plain directory), hdfs://host:port/path")
    if scheme == "hdfs":
        return _parse_hdfs(text, parsed)
    raw = parsed.path if parsed.scheme else text
    if not raw:
        raise InputError(f"--target {text!r}: no path; use file:///absolute/path or a directory")
    path = Path(raw).expanduser().absolute()
    if path.exists() and not path.is_dir():
        raise TargetError(f"--target {text!r}: {path} exists and is not a directory")
    return Target(uri=f"file://{path}", scheme="file", path=path)


def _parse_hdfs(text: str, parsed) -> Target:
    if not parsed.hostname or not parsed.port:
        raise InputError(f"--target {text!r}: an hdfs:// target needs host and port, "
                         f"e.g. hdfs://127.0.0.1:8020/storbench (see `storbench services up hdfs`)")
    path = parsed.path.rstrip("/") or ""
    return Target(uri=f"hdfs://{parsed.hostname}:{parsed.port}{path}", scheme="hdfs", path=None)


def check_reachable(target: Target) -> None:
    """A remote target's address answers within seconds, or the run is refused before Spark starts."""
    if target.authority is None:
        return
    host, port = target.authority
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        raise TargetError(f"target {target.uri}: cannot connect to {host}:{port} "
                          f"({exc.strerror or exc}); is the NameNode running?") from None
