"""``mem://NAME`` targets: a volume of "files" in this process's memory, for tests of the run core and smoke runs.

A volume (``volume(NAME)``) lives as long as the process and outlasts a run, like a real
storage service: what ``--keep-data`` keeps stays there, and a test can put a file of its
own in it to check that a run deletes nothing outside its run root. The rules are those
of every target: the run root ``mem://NAME/storbench-<run-id>`` carries the marker, a
delete happens only inside a marked root, and release removes the root only when the
marker names this run. ``mem://NAME?claim=attach`` claims the root only once the engines
are up, as a target reached through an engine does (hdfs://); ``?claim=none`` claims no root at all (as a
raw device, used whole, has none: the workloads' data URIs then name no place on the volume). Claim and release are
recorded in ``EVENTS`` (here, below the engines; the null engine and workloads append to it too).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from storbench.errors import InputError, TargetError
from storbench.targets.base import (
    GONE,
    MARKER,
    OTHER,
    OURS,
    Target,
    TargetOptions,
    below_root,
    refuse_capacity,
    register,
)

NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}")
CAPACITY = 1 << 30  # bytes a volume may hold: it is this process's memory


# Every null plugin's calls in this process, oldest first ("engine stop", "target claim", ...). The run-core
# tests clear it before a run and read it after; a user's run only ever appends a few short strings.
EVENTS: list[str] = []


def record(event: str) -> None:
    EVENTS.append(event)


@dataclass
class Volume:
    files: dict[str, bytes] = field(default_factory=dict)  # path inside the volume → content
    fail_release: bool = False  # armed by a workload: the next release fails, as a target that went away
    nodes: Path | None = None  # set by a test: the nodes file of the service the volume lives on

    def under(self, path: str) -> list[str]:
        """The files at ``path`` or below it."""
        return [name for name in self.files if name == path or name.startswith(path.rstrip("/") + "/")]


VOLUMES: dict[str, Volume] = {}


def volume(name: str) -> Volume:
    """The volume ``mem://name`` (made empty on first use)."""
    return VOLUMES.setdefault(name, Volume())


@register
class MemTarget(Target):
    scheme = "mem"
    kind = "in-memory"
    usage = "mem://NAME[?claim=attach|none] (in this process's memory; tests and smoke runs)"
    wanted = "a mem://NAME target"

    def __init__(self, name: str, options: TargetOptions, claim: str = ""):
        super().__init__(f"mem://{name}", options)
        self.name = name
        self.volume = volume(name)
        self.claim_at = claim  # "": at claim; "attach": once the engines are up; "none": never

    @classmethod
    def parse(cls, text: str, options: TargetOptions) -> Target:
        name, _, query = text.removeprefix("mem://").partition("?")
        name = name.rstrip("/")
        if not NAME.fullmatch(name) or query not in ("", "claim=attach", "claim=none"):
            raise InputError(
                f"--target {text!r}: expected mem://NAME[?claim=attach|none], NAME of lowercase letters, "
                f"digits, '.', '_' and '-' (at most 63)"
            )
        return cls(name, options, claim=query.removeprefix("claim="))

    def precheck(self, need_bytes: int) -> None:
        used = sum(len(data) for data in self.volume.files.values())
        refuse_capacity(self.uri, need_bytes, CAPACITY - used)

    def nodes_file(self) -> Path | None:
        return self.volume.nodes

    def devices(self, option: str | None, warn: Callable[[str], None]) -> tuple[list[str], str]:
        """No device holds the data: none to measure, and nothing to warn about."""
        return [], "in memory"

    def path(self, uri: str) -> str:
        """The path inside the volume that ``uri`` names; TargetError for a URI of another volume."""
        prefix = f"{self.uri}/"
        if not uri.startswith(prefix):
            raise TargetError(f"target {self.uri}: {uri} is not on this volume")
        return uri.removeprefix(prefix).rstrip("/")

    def claim_root(self) -> str | None:
        return None if self.claim_at else self._claim()

    def attach(self, engines: dict[str, Any], need_bytes: int) -> None:
        if self.claim_at == "attach" and self.root_uri is None:
            self.root_uri = self._claim()

    def _claim(self) -> str:
        root = f"storbench-{self.run_id}"
        if self.volume.under(root):
            raise TargetError(f"target {self.uri}: {root} already exists; refusing to reuse it")
        self.volume.files[f"{root}/{MARKER}"] = f"{self.run_id}\n".encode()
        record("target claim")
        return f"{self.uri}/{root}"

    def release(self, keep_data: bool = False) -> bool:
        record(f"target release{' (keep data)' if keep_data else ''}")
        if self.volume.fail_release:
            self.volume.fail_release = False
            raise TargetError(f"target {self.uri}: the volume does not answer (armed)")
        return super().release(keep_data)

    def root_state(self) -> str:
        root = f"storbench-{self.run_id}"
        if self.volume.files.get(f"{root}/{MARKER}", b"").decode().strip() == self.run_id:
            return OURS
        return OTHER if self.volume.under(root) else GONE

    def release_root(self) -> bool:
        root = f"storbench-{self.run_id}"
        if not self.run_id or self.root_state() != OURS:
            return False
        for name in self.volume.under(root):
            del self.volume.files[name]
        return True

    def write(self, uri: str, data: bytes) -> None:
        self.volume.files[self.path(uri)] = data

    def read(self, uri: str) -> bytes:
        path = self.path(uri)
        if path not in self.volume.files:
            raise TargetError(f"target {self.uri}: {uri} does not exist")
        return self.volume.files[path]

    def size_bytes(self, uri: str) -> int:
        return sum(len(self.volume.files[name]) for name in self.volume.under(self.path(uri)))

    def evict(self, uri: str) -> int:
        """Memory has no page cache in front of it: nothing to drop (the window's rules say "warm")."""
        return 0

    def delete(self, uri: str) -> bool:
        if not self.run_id or self.root_uri is None or below_root(self.root_uri, uri) is None:
            raise self.refuse_delete(uri)
        if self.root_state() != OURS:
            raise self.refuse_delete(uri, f"the root's {MARKER} does not name run {self.run_id}")
        names = self.volume.under(self.path(uri))
        for name in names:
            del self.volume.files[name]
        return bool(names)

    def manifest_config(self) -> dict[str, Any]:
        return {"volume": self.name}
