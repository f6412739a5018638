"""Running ``rados bench`` and the ``rados``/``ceph`` tools against one pool; parsing their output.

Nothing here knows about the run lifecycle; ``storbench.workloads.rados_bench`` drives it.

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
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from storbench.engines.base import tool_engine
from storbench.errors import EngineError, TargetError, WorkloadError

MIB_TO_MB = 1.048576  # rados bench's MB/sec is MiB/s
LIST_TIMEOUT_S = 120.0
RM_BATCH = 200

_SECOND = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$")
_SUMMARY = re.compile(r"^([A-Za-z][A-Za-z ()/]*?):\s+([-+0-9.eE]+)\s*$")
_ERROR = re.compile(r"^(error|failed|couldn't|unable)\b.*", re.IGNORECASE)

# Summary keys → storbench's names (values as printed; MB/sec still MiB/s, latencies in seconds).
SUMMARY_KEYS = {
    "Total time run": "time_s",
    "Total writes made": "ops",
    "Total reads made": "ops",
    "Write size": "op_size",
    "Read size": "op_size",
    "Object size": "object_size",
    "Bandwidth (MB/sec)": "bw_mibps",
    "Stddev Bandwidth": "bw_stddev_mibps",
    "Max bandwidth (MB/sec)": "bw_max_mibps",
    "Min bandwidth (MB/sec)": "bw_min_mibps",
    "Average IOPS": "avg_iops",
    "Stddev IOPS": "stddev_iops",
    "Max IOPS": "max_iops",
    "Min IOPS": "min_iops",
    "Average Latency(s)": "avg_lat_s",
    "Stddev Latency(s)": "stddev_lat_s",
    "Max latency(s)": "max_lat_s",
    "Min latency(s)": "min_lat_s",
}


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None  # "-": no operation finished in that second


@dataclass
class BenchSecond:
    sec: int
    cur_ops: int
    started: int
    finished: int
    avg_mibps: float | None
    cur_mibps: float | None
    last_lat_s: float | None
    avg_lat_s: float | None


@dataclass
class BenchOutput:
    """One ``rados bench`` run as printed: its settings, per-second lines, summary and errors."""

    prefix: str | None = None  # "Object prefix: benchmark_data_<host>_<pid>" (write only)
    concurrency: int | None = None
    op_size: int | None = None
    object_size: int | None = None
    seconds: list[BenchSecond] = field(default_factory=list)
    summary: dict[str, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return "time_s" in self.summary

    def iops_series(self) -> list[float | None]:
        """Operations finished in each second after the start line (``sec`` 0 is the start); None before
        the first operation completed (n/a, not a stall)."""
        out: list[float | None] = []
        previous = 0
        for line in self.seconds:
            if line.sec > 0:
                out.append(float(line.finished - previous) if line.finished else None)
            previous = line.finished
        return out

    def mbps_series(self) -> list[float | None]:
        """Per-second throughput in MB/s (10^6 B/s), from the ``cur MB/s`` column; None where it is n/a."""
        return [
            None if line.cur_mibps is None else round(line.cur_mibps * MIB_TO_MB, 6)
            for line in self.seconds
            if line.sec > 0
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "prefix": self.prefix,
            "concurrency": self.concurrency,
            "op_size": self.op_size,
            "object_size": self.object_size,
            "summary": dict(self.summary),
            "errors": list(self.errors),
            "per_second": {"iops": self.iops_series(), "mbps": self.mbps_series()},
        }


def _second(match: re.Match[str]) -> BenchSecond:
    """One per-second line; before the first completion its current MB/s and average latency are n/a
    (rados prints 0 for them), and a negative MB/s (rados's -1: no interval yet) is n/a too."""
    sec, cur_ops, started, finished = (int(match.group(i)) for i in range(1, 5))
    avg_mibps, cur_mibps, last_lat, avg_lat = (_number(match.group(i)) for i in range(5, 9))
    if not finished or (cur_mibps is not None and cur_mibps < 0):
        cur_mibps = None
    return BenchSecond(sec, cur_ops, started, finished, avg_mibps, cur_mibps, last_lat, avg_lat if finished else None)


def parse_bench(stdout: str, stderr: str = "") -> BenchOutput:
    """``rados bench`` output (write, seq or rand) as typed values; tolerant of a cut-off run."""
    out = BenchOutput()
    seen: set[int] = set()
    in_summary = False
    for raw in stdout.splitlines():
        line = raw.rstrip()
        if line.startswith("Object prefix:"):
            out.prefix = line.split(":", 1)[1].strip()
            continue
        maintaining = re.match(r"Maintaining (\d+) concurrent \w+ of (\d+) bytes to objects of size (\d+)", line)
        if maintaining:
            out.concurrency, out.op_size, out.object_size = map(int, maintaining.groups())
            continue
        second = _SECOND.match(line)
        if second and not in_summary:
            sec = int(second.group(1))
            if sec not in seen:  # a repeated line would count a second twice
                seen.add(sec)
                out.seconds.append(_second(second))
            continue
        summary = _SUMMARY.match(line)
        if summary and summary.group(1) in SUMMARY_KEYS:
            in_summary = True
            value = _number(summary.group(2))
            if value is not None:
                out.summary.setdefault(SUMMARY_KEYS[summary.group(1)], value)
            continue
        if _ERROR.match(line.strip()):
            out.errors.append(line.strip())
    for line in stderr.splitlines():
        line = line.strip()
        if _ERROR.match(line) and line not in out.errors:
            out.errors.append(line)
    out.seconds.sort(key=lambda s: s.sec)
    return out


def first_error(*texts: str) -> str:
    """The most telling error line of a rados/ceph command (``error during benchmark: (110) ...``)."""
    lines = [line.strip() for text in texts for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if _ERROR.match(line)]
    # rados prints "error during benchmark: (N) ..." then "error N: (N) ..."; the first says where.
    return (errors or lines or ["no message"])[0][:300]


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


RadosEngine = tool_engine("rados", rados_version, "Ceph's rados tool: rados bench and pool bookkeeping (paper 004).")


@dataclass
class Finished:
    returncode: int | None  # None: killed at the hard timeout
    stdout: str
    stderr: str
    wall_s: float


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

    def run(
        self, argv: list[str], timeout: float, stdout_path: Path, started_pid: Callable[[int], None] | None = None
    ) -> Finished:
        """Run a bench command with its stdout in a file (kept even when the command is killed);
        ``started_pid`` is called with the child's PID as soon as it is spawned."""
        started = time.monotonic()
        stdout_path.parent.mkdir(parents=True, exist_ok=True)
        with open(stdout_path, "w") as out, open(stdout_path.with_suffix(".stderr"), "w") as err:
            proc = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL, text=True)
            try:
                if started_pid:
                    started_pid(proc.pid)
                code: int | None = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
                code = None
            except BaseException:  # Ctrl-C: do not leave the benchmark running
                proc.kill()
                proc.wait()
                raise
        return Finished(
            code,
            stdout_path.read_text(errors="replace"),
            stdout_path.with_suffix(".stderr").read_text(errors="replace"),
            time.monotonic() - started,
        )

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
