"""The rados engine: ``rados bench`` against one pool (:class:`RadosEngine`, a tool engine: ``run(BenchSpec)``), and
the ``rados``/``ceph`` tools that keep the pool's books (:class:`Cluster`: listing, removing, limits).

Nothing here knows about the run lifecycle; ``storbench.workloads.rados_bench`` drives it (the output's
reading: storbench.engines.rados_output).

``rados bench`` (Ceph 16.2) prints one line per second and a summary::

      sec Cur ops   started  finished  avg MB/s  cur MB/s last lat(s)  avg lat(s)
        0       0         0         0         0         0           -           0
        1      16        94        78   311.962       312    0.184458    0.181244
    ...
    Total time run:         10.2136
    Bandwidth (MB/sec):     315.265
    Average IOPS:           78
    Stddev IOPS:            3.12961
    ...

Every 20 seconds it repeats the header after a timestamped ``min lat: ... max lat:``
line. Its "MB" is MiB (2^20 bytes); storbench reports MB = 10^6 bytes. The per-second
IOPS are the differences of the ``finished`` column (what rados itself uses for
"Stddev IOPS"); the per-second MB/s are the ``cur MB/s`` column converted to MB/s.

Until the first operation completes, rados prints ``0`` as the current MB/s and the average
latency and ``-`` as the last latency: nothing has had time to finish yet. Those seconds are
n/a (None) in both series, kept in place so the time axis stays whole, and so are not counted
as stalls; rados's own "Stddev IOPS" counts them as 0 (they are rare: a first operation slower
than a second). A second with no completion after the first one is a real 0 (a stall).

Every command carries ``--client_mount_timeout`` and ``--rados_osd_op_timeout`` /
``--rados_mon_op_timeout``: a stopped OSD or monitor makes the operations fail with
ETIMEDOUT after that long instead of blocking forever, and a hard subprocess timeout
bounds the rest.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from storbench.engines.base import register
from storbench.engines.rados_output import first_error
from storbench.engines.tool import ToolEngine
from storbench.errors import EngineError, TargetError, WorkloadError

LIST_TIMEOUT_S = 120.0
RM_BATCH = 200


def bench_prefix(pid: int) -> str:
    """The object prefix ``rados bench`` (process ``pid``) writes under: ``benchmark_data_<host>_<pid>``
    (Ceph 16's obj_bencher keeps at most 29 characters of the host name)."""
    return f"benchmark_data_{socket.gethostname()[:29]}_{pid}"


def rados_binary() -> str:
    path = shutil.which("rados")
    if not path:
        raise EngineError("the rados tool is not installed; run scripts/setup.sh --test (apt-get install ceph-common)")
    return path


def ceph_binary() -> str:
    path = shutil.which("ceph")
    if not path:
        raise EngineError("the ceph tool is not installed; run scripts/setup.sh --test (apt-get install ceph-common)")
    return path


_VERSION: dict[str, str] = {}


def rados_version() -> str:
    binary = rados_binary()
    if binary not in _VERSION:
        done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
        _VERSION[binary] = (
            (done.stdout.strip() or done.stderr.strip()).splitlines()[0] if done.returncode == 0 else "unknown"
        )
    return _VERSION[binary]


@dataclass
class Finished:
    returncode: int | None  # None: killed at the hard timeout
    stdout: str
    stderr: str
    wall_s: float
    command: list[str]  # the command line it ran


class Cluster:
    """One pool on one cluster, reached through the ``rados`` and ``ceph`` tools and a conf file."""

    def __init__(self, conf: str, pool: str, op_timeout_s: float = 60.0):
        self.conf = conf
        self.pool = pool
        self.op_timeout_s = op_timeout_s

    def timeouts(self) -> list[str]:
        t = str(int(self.op_timeout_s))
        return ["--client_mount_timeout", "15", "--rados_osd_op_timeout", t, "--rados_mon_op_timeout", t]

    def rados_argv(self, *args: str, pool: bool = True) -> list[str]:
        return [rados_binary(), "-c", self.conf, *(["-p", self.pool] if pool else []), *self.timeouts(), *args]

    def _run(self, argv: list[str], timeout: float, what: str) -> subprocess.CompletedProcess:
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise self._no_answer(what, timeout) from None

    def _no_answer(self, what: str, timeout: float) -> TargetError:
        return TargetError(
            f"{what}: Ceph did not answer within {timeout:.0f} s (conf {self.conf}); "
            f"is the cluster up (`storbench services status ceph`)?"
        )

    def ceph_json(self, *args: str, timeout: float = 20.0) -> Any:
        argv = [ceph_binary(), "-c", self.conf, "--connect-timeout", str(int(timeout)), *args, "-f", "json"]
        done = self._run(argv, timeout + 5, f"ceph {' '.join(args)}")
        if done.returncode != 0:
            raise TargetError(f"ceph {' '.join(args)} failed on {self.conf}: {first_error(done.stderr, done.stdout)}")
        return json.loads(done.stdout or "null")

    def drop_osd_caches(self, timeout: float = 60.0) -> str | None:
        """``ceph tell osd.* cache drop``: every OSD empties its BlueStore onode and data caches, so a read
        phase reads from the devices, not what the write left cached. None when done, else why not (e.g.
        memstore has no cache to drop: its data lives in memory)."""
        argv = [
            ceph_binary(),
            "-c",
            self.conf,
            "--connect-timeout",
            str(int(timeout)),
            "tell",
            "osd.*",
            "cache",
            "drop",
        ]
        done = self._run(argv, timeout + 5, "ceph tell osd.* cache drop")
        if done.returncode != 0:
            return first_error(done.stderr, done.stdout) or f"exit {done.returncode}"
        return None

    def pools(self) -> list[str]:
        done = self._run(self.rados_argv("lspools", pool=False), 30.0, "rados lspools")
        if done.returncode != 0:
            raise TargetError(f"cannot reach the Ceph cluster of {self.conf}: {first_error(done.stderr, done.stdout)}")
        return [line.strip() for line in done.stdout.splitlines() if line.strip()]

    def osd_limit(self, name: str) -> int | None:
        """An OSD setting as the monitors know it (``osd_max_object_size`` in bytes, ...); None if unknown."""
        try:
            value = self.ceph_json("config", "get", "osd", name)
        except (TargetError, json.JSONDecodeError):
            return None
        try:
            return int(value)
        except (TypeError, ValueError):
            return None

    def max_avail(self) -> int | None:
        """Bytes the pool can still take (``ceph df``'s MAX AVAIL: replication and full ratio included)."""
        try:
            data = self.ceph_json("df")
        except (TargetError, json.JSONDecodeError):
            return None
        for pool in data.get("pools", []):
            if pool.get("name") == self.pool:
                return int(pool.get("stats", {}).get("max_avail", 0))
        return None

    def bench_argv(
        self,
        mode: str,
        seconds: int,
        threads: int,
        run_name: str,
        op_size: int | None = None,
        object_size: int | None = None,
        max_objects: int | None = None,
    ) -> list[str]:
        args = ["bench", str(seconds), mode, "-t", str(threads), "--run-name", run_name]
        if mode == "write":
            args += ["-b", str(op_size), "-O", str(object_size), "--no-cleanup"]
            if max_objects:
                args += ["--max-objects", str(max_objects)]
        return self.rados_argv(*args)

    def list_objects(self, wanted: Callable[[str], bool], timeout: float = LIST_TIMEOUT_S) -> list[str]:
        """The pool's object names for which ``wanted`` is true. ``rados ls`` cannot filter by name, so its
        output is streamed and filtered while read: only the matches are kept, never the whole pool."""
        what = f"rados ls in pool {self.pool}"
        with tempfile.TemporaryFile("w+") as err:
            proc = subprocess.Popen(
                self.rados_argv("ls"), stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL, text=True
            )
            expired: list[bool] = []
            timer = threading.Timer(timeout, lambda: (expired.append(True), proc.kill()))  # a stalled listing
            timer.start()
            try:
                assert proc.stdout is not None
                names = [name for name in (line.rstrip("\n") for line in proc.stdout) if name and wanted(name)]
                code = proc.wait()
            finally:
                timer.cancel()
                if proc.poll() is None:  # interrupted while reading
                    proc.kill()
                    proc.wait()
            if expired:
                raise self._no_answer(what, timeout)
            if code != 0:
                err.seek(0)
                raise WorkloadError(f"cannot list pool {self.pool}: {first_error(err.read())}")
        return names

    def remove(self, names: list[str]) -> None:
        """Remove objects by name, in batches; ``--force-full`` so a full pool can still be emptied."""
        for start in range(0, len(names), RM_BATCH):
            batch = names[start : start + RM_BATCH]
            done = self._run(
                self.rados_argv("rm", "--force-full", *batch),
                max(60.0, self.op_timeout_s * 2),
                f"rados rm in pool {self.pool}",
            )
            if done.returncode != 0:
                message = first_error(done.stderr, done.stdout)
                if "No such file" not in message:
                    raise WorkloadError(f"cannot remove objects from pool {self.pool}: {message}")

    def put(self, name: str, data: bytes) -> None:
        done = subprocess.run(self.rados_argv("put", name, "-"), input=data, capture_output=True, timeout=60)
        if done.returncode != 0:
            raise WorkloadError(f"rados put {name} failed: {first_error(done.stderr.decode(errors='replace'))}")


@dataclass
class BenchSpec:
    """One ``rados bench``: its pool (``cluster``), mode (write | seq | rand) and load, its hard time limit, and the
    file its output goes to (kept even when it is killed). ``started_pid`` hears the process's PID at its start
    (a write's object prefix is known from it)."""

    cluster: Cluster
    mode: str
    seconds: int
    threads: int
    run_name: str
    output: Path
    timeout_s: float
    op_size: int | None = None  # writes: bytes per operation and per object, and at most this many objects
    object_size: int | None = None
    max_objects: int | None = None
    started_pid: Callable[[int], None] | None = None


@register
class RadosEngine(ToolEngine):
    """Ceph's rados tool: rados bench and pool bookkeeping (paper 004)."""

    name = "rados"

    def read_version(self) -> str:
        return rados_version()

    def run(self, spec: BenchSpec) -> Finished:
        """The bench, in a process group of its own; at its time limit it is killed and ``returncode`` is None (what
        it printed until then is read all the same); an interrupt kills it and goes on."""
        argv = spec.cluster.bench_argv(
            spec.mode, spec.seconds, spec.threads, spec.run_name, spec.op_size, spec.object_size, spec.max_objects
        )
        started = time.monotonic()
        spec.output.parent.mkdir(parents=True, exist_ok=True)
        errors = spec.output.with_suffix(".stderr")
        with open(spec.output, "w") as out, open(errors, "w") as err:
            proc = self.spawn(argv, stdout=out, stderr=err, text=True)
            try:
                if spec.started_pid:
                    spec.started_pid(proc.pid)
                code: int | None = self.wait(proc, spec.timeout_s)
            except subprocess.TimeoutExpired:  # wait killed it
                code = None
            except BaseException:  # Ctrl-C while telling started_pid: do not leave the benchmark running
                self.reap(proc)
                raise
        return Finished(
            code,
            spec.output.read_text(errors="replace"),
            errors.read_text(errors="replace"),
            time.monotonic() - started,
            argv,
        )
