"""The target protocol: where a run's data lives, one subclass per ``--target`` scheme.

Each scheme is one module of this package that registers its class with ``@register``;
the registry imports every module here, so a new scheme is one new module. A run claims
``<target>/storbench-<run-id>/`` with a marker naming the run; a target deletes only
inside this run's own root (its marker naming this run, the path resolved: no ``..``, no
symlink out of it), and release removes the root only when the marker is this run's.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import pkgutil
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, TypeVar
from urllib.parse import urlparse

from storbench import scratch
from storbench.errors import InputError, TargetError
from storbench.telemetry import devices_for_path, parse_devices_option

MARKER = ".storbench-owned"
OURS, GONE, OTHER, UNKNOWN = "ours", "gone", "other", "unknown"  # Target.root_state()
DEFAULT_SCHEME = "file"  # what a plain path is


@dataclass(frozen=True)
class TargetOptions:
    """What the command line adds to the ``--target`` text."""

    home: Path | None = None  # the results home, where storbench's own services keep their state
    replication: int | None = None  # --replication (HDFS; a Cassandra keyspace's replication factor)
    endpoint: str | None = None  # --endpoint (S3)
    cql_insecure: bool = False  # --cql-insecure: a cassandra:// login may go to another machine without TLS


@dataclass(frozen=True)
class TargetFacts:
    """What an engine needs to reach a target, in no engine's terms (each engine binds itself from these)."""

    scheme: str
    endpoint_url: str | None = None  # an object store's endpoint
    region: str | None = None
    access_key: str | None = field(default=None, repr=False)  # never shown, never recorded
    secret_key: str | None = field(default=None, repr=False)
    replication: int | None = None  # --replication, where the target keeps copies
    server: str | None = None  # the object store's kind when it needs its own client settings ("rgw"), else None


class Target:
    """One target: checked, claimed and released by the runner, used by workloads.

    Lifecycle: ``parse`` → ``precheck(need_bytes)`` → ``devices`` → ``claim(run_id)`` →
    (engines start) ``attach(engines, need_bytes)`` → workloads use ``size_bytes``, ``evict``,
    ``delete`` and the concrete class's accessors → ``release(keep_data)``.
    """

    scheme: ClassVar[str]
    kind: ClassVar[str]  # how messages name it: "raw device" target, "RADOS pool" target
    usage: ClassVar[str]  # the --target forms it takes, listed when a scheme is unknown
    wanted: ClassVar[str]  # what a workload that needs this scheme asks the user for
    replicated: ClassVar[bool] = False  # takes --replication (refused for the others, not ignored)

    def __init__(self, uri: str, options: TargetOptions):
        if options.replication is not None and options.replication < 1:
            raise InputError(f"--replication {options.replication}: must be at least 1")
        self.uri = uri  # normalised, as recorded in the manifest
        self.options = options
        self.run_id = ""
        self.root_uri: str | None = None  # the claimed run root; None until claimed (or never, for a device)
        self._scratch: str | None = None

    @classmethod
    def parse(cls, text: str, options: TargetOptions) -> Target:
        """The target named by ``text`` (its scheme is ``cls.scheme``), or InputError naming the forms."""
        raise NotImplementedError

    # -- before anything starts -------------------------------------------------------------

    def precheck(self, need_bytes: int) -> None:
        """Refuse in one line before anything starts: capacity, reachability, credentials."""

    def local_path(self) -> Path | None:
        """The local directory whose device holds the data, when it is on this host."""
        return None

    def nodes_file(self) -> Path | None:
        """The nodes file of the storbench service the target lives on (its nodes are what a run measures)."""
        return None

    def devices(self, option: str | None, warn: Callable[[str], None]) -> tuple[list[str], str]:
        """(devices to measure, how they were found): --devices, else the ones behind ``local_path``."""
        if option:
            return parse_devices_option(option), "--devices"
        path = self.local_path()
        if path is None:
            warn(
                f"target {self.uri} is remote: no local device to measure; "
                f"pass --devices with the DataNodes' disks to measure them"
            )
            return [], "remote target"
        resolution = devices_for_path(str(path))
        if resolution.warning:
            warn(resolution.warning)
        return resolution.devices, resolution.how

    # -- the run root -------------------------------------------------------------------------

    def run_root_uri(self) -> str:
        return f"{self.uri.rstrip('/')}/storbench-{self.run_id}"

    def claim(self, run_id: str) -> str | None:
        """Before any engine starts: take this run's root (see ``claim_root``); returns its URI."""
        self.run_id = run_id
        self.root_uri = self.claim_root()
        return self.root_uri

    def claim_root(self) -> str | None:
        """Create and mark the run root; None where it is claimed later (``attach``) or there is none."""
        return None

    def attach(self, engines: dict[str, Any], need_bytes: int) -> None:
        """Once the run's engines are up: targets reached through one (hdfs:// through an engine's Hadoop client)
        check and claim here."""

    def release(self, keep_data: bool = False) -> bool:
        """After the run: remove the scratch space and, unless kept, the run root (marker checked)."""
        if self._scratch:
            shutil.rmtree(self._scratch, ignore_errors=True)
        if keep_data or self.root_uri is None:
            return False
        return self.release_root()

    def release_root(self) -> bool:
        """Delete the run root if (and only if) its marker names this run."""
        return False

    def root_state(self) -> str:
        """What is at this run's root now: ``ours`` (marked for this run), ``gone`` (nothing), ``other``
        (something not marked for this run), or ``unknown`` where the target cannot tell. After a failed
        release it says whether anything is left for ``storbench cleanup``."""
        return UNKNOWN

    # -- what workloads do with the data ------------------------------------------------------

    def size_bytes(self, uri: str) -> int:
        raise TargetError(f"target {self.uri}: the size of {uri} cannot be read on a {self.kind} target")

    def evict(self, uri: str) -> int:
        """Drop ``uri``'s data from this host's page cache; the number of files evicted."""
        return 0

    def flush(self) -> str:
        """Make what the run wrote durable before a timed window closes (the ``flush`` parameter); returns
        how, as the manifest's ``window_rules`` records it. Where a write is durable once its call returns
        (an S3 PUT), there is nothing to do: "none"."""
        return "none"

    def delete(self, uri: str) -> bool:
        """Remove ``uri`` only if it lies inside this run's root and that root's marker names this run."""
        raise TargetError(f"refusing to delete {uri}: a {self.kind} target has no run directory")

    def refuse_delete(self, uri: str, why: str | None = None) -> TargetError:
        """The one line of a refused ``delete``: why (by default: outside the root, or a '.'/'..' segment)."""
        if why is None:
            dots = any(part in (".", "..") for part in uri.split("/"))
            why = "'.' and '..' are not allowed in it" if dots else "it is not below this run's root"
        return TargetError(f"refusing to delete {uri}: {why} (this run's root: {self.root_uri or 'none claimed'})")

    # -- what the engines and the manifest get ---------------------------------------------------

    def scratch_dir(self) -> str:
        """A local directory for an engine's scratch data (shuffle, spill), removed at release: a private
        temporary one unless the target has its own device (a file target: inside its run root)."""
        self._scratch = str(scratch.make(f"storbench-{self.run_id}-scratch-"))
        return self._scratch

    def facts(self) -> TargetFacts:
        """How an engine reaches this target: endpoint, credentials, replication (the scheme alone, here)."""
        return TargetFacts(self.scheme, replication=self.options.replication)

    def manifest_config(self) -> dict[str, Any]:
        """What the manifest's ``config`` records beyond the URI and run root; never a secret."""
        return {}


class PathTarget(Target):
    """A target that is one local path, a directory or a device: ``<scheme>://<path>``."""

    def __init__(self, path: Path, options: TargetOptions):
        super().__init__(f"{self.scheme}://{path}", options)
        self.path = path


T = TypeVar("T", bound=type[Target])
REGISTRY: dict[str, type[Target]] = {}  # scheme → class, filled by @register (a test may swap in a copy)


def register(cls: T) -> T:
    """Class decorator: ``cls`` serves ``cls.scheme``; a scheme registered twice fails at import."""
    known = REGISTRY.get(cls.scheme)
    if known is not None and known is not cls:
        raise RuntimeError(f"target scheme {cls.scheme!r} registered twice ({known.__module__} and {cls.__module__})")
    REGISTRY[cls.scheme] = cls
    return cls


def registry() -> dict[str, type[Target]]:
    """Every scheme, found by importing each module of this package; the default scheme first."""
    package = __name__.rpartition(".")[0]  # imported before this module; naming it in an import would be a circle
    for module in pkgutil.iter_modules(sys.modules[package].__path__):
        importlib.import_module(f"{package}.{module.name}")
    return {scheme: REGISTRY[scheme] for scheme in sorted(REGISTRY, key=lambda s: (s != DEFAULT_SCHEME, s))}


def target_class(scheme: str) -> type[Target]:
    return registry()[scheme]


def parse_target(text: str, options: TargetOptions | None = None) -> Target:
    """The target ``--target text`` names; a plain path is a ``file://`` directory."""
    scheme = urlparse(text).scheme or DEFAULT_SCHEME
    schemes = registry()
    if scheme not in schemes:
        raise InputError(
            f"--target {text!r}: scheme {scheme}:// is not supported; supported: "
            + ", ".join(cls.usage for cls in schemes.values())
        )
    options = options or TargetOptions()
    target = schemes[scheme].parse(text, options)
    if options.replication is not None and not target.replicated:
        takers = [f"{name}://" for name, cls in schemes.items() if cls.replicated]
        raise InputError(
            f"--replication {options.replication}: applies to {' and '.join(takers)} targets only; "
            f"the target is {target.uri}"
        )
    if options.cql_insecure and target.scheme != "cassandra":  # silently ignored, it would seem to do something
        raise InputError(f"--cql-insecure: applies to cassandra:// targets only; the target is {target.uri}")
    return target


def below_root(root: str, path: str) -> str | None:
    """The part of ``path`` strictly below ``root`` (both '/'-separated, as a target names them), or None when
    ``path`` is not below it or names a '.' or '..' segment (never resolved: refused)."""
    root = root.rstrip("/")
    if not root or not path.startswith(root + "/"):
        return None
    rest = path[len(root) + 1 :].rstrip("/")
    if not rest or any(part in ("", ".", "..") for part in rest.split("/")):
        return None
    return rest


def local_path_in(text: str) -> Path:
    """The absolute local path a ``file://``/``device://`` URI or a plain path names."""
    parsed = urlparse(text)
    raw = parsed.path if parsed.scheme else text
    if not raw:
        raise InputError(f"--target {text!r}: no path; use file:///absolute/path or a directory")
    return Path(raw).expanduser().absolute()


def refuse_capacity(uri: str, need_bytes: int, free: int) -> None:
    if need_bytes > free:
        raise TargetError(
            f"target {uri}: needs about {need_bytes / 1e9:.2f} GB for this run "
            f"(dataset and shuffle space) but only {free / 1e9:.2f} GB are free; "
            f"use a smaller --scale or another --target"
        )


def syncfs(directory: Path) -> None:
    """syncfs(2) on the file system holding ``directory``: its dirty pages reach the device, and only its own.

    os.sync() would also wait for every other file system's write-back (other runs, the results home),
    stretching the window by work that is not the target's."""
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise TargetError(f"cannot sync {directory} (flush): {exc.strerror}") from None
    try:
        if _libc().syncfs(fd) != 0:
            raise TargetError(f"cannot sync {directory} (flush): {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


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
