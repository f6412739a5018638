"""The noise sentinel: what else this machine did during each timed window.

Two runs of one configuration on a busy machine differ for reasons that are not the storage's. The
sentinel reads, at each window mark only (never on the collector's ticks, so it costs a few ms per window
at most), what the machine did beside the run, and :meth:`NoiseSentinel.window` turns the readings at a
window's start and end into the ``noise_*`` figures of :data:`METRICS`:

- ``noise_other_cpu_pct``: CPU used by processes outside the run's own, in % of one core (100: one full
  core busy for the whole window). The run's own: the descendants of its root PIDs (this process by
  default: walked through /proc/PID/stat's parent links) and of the processes storbench's own services
  record in their state files (``<results home>/services/*/state.json``: a workload against ``storbench
  services up hdfs`` keeps the DataNode busy, and that is the run's load, not noise); once a process is
  the run's it stays so (a daemon reparented to init). Kernel threads (PID 2 and its children,
  PF_KTHREAD) are left out: the flusher writing the run's own dirty pages is no neighbour. A process
  counts with utime+stime+cutime+cstime, and the figure is the change of the sum over the other
  processes: a child reaped inside the window counts through its parent's cutime, a process that
  appeared counts from 0, and an own daemon reaped by init is taken off init's share.
- ``noise_steal_pct``: CPU steal (/proc/stat) in % of one core.
- ``noise_other_io_mb``: MB read and written to storage by the other processes (/proc/PID/io
  read_bytes + write_bytes, reaped children included, summed like CPU). The kernel does not say which
  device a process's I/O went to: this is any device. A process whose io file cannot be read (another
  user's, without privileges) is left out.
- ``noise_psi_{cpu,io,mem}_pct``: the share of the window's wall time in which some task stalled on CPU,
  I/O or memory (pressure stall information, /proc/pressure/*, "some" total). PSI counts every task,
  the run's own too (a storage benchmark stalls on I/O by design); None where the kernel has no PSI.
- ``noise_dirty_mb``: Dirty + Writeback (/proc/meminfo) at the window's start: writes from before that
  the window may pay for.

Cost: one /proc/PID/stat read per process and mark (the files kept open, re-read at offset 0); a process
whose stat text did not change since the last mark did not run, so its figures and its last io reading
stand (its bytes, if any, come with its next change); kernel threads are skipped by PID (re-checked every
``REFRESH`` readings). A window that opens within a moment of the last one's end starts from that reading
(``read(reuse=...)``). Resolution: CPU is in clock ticks per process (10 ms), so a window under a second is
rough.

``parse_*`` functions take file text (golden files, no live machine needed); ``proc_root`` points the
sentinel at a fake /proc in tests. Counter units: /proc/PID/stat in clock ticks (``SC_CLK_TCK``), PSI in
µs, io and meminfo in bytes; MB is 10^6 bytes.
"""

from __future__ import annotations

import bisect
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from storbench.results.metrics import metric_table
from storbench.telemetry import procfs
from storbench.telemetry.proc_tasks import (
    PidFiles,
    PidStat,
    fd_budget,
    parse_dirty,
    parse_pid_io,
    parse_pid_stat,
    parse_pressure,
)

if TYPE_CHECKING:
    from storbench.telemetry.collector import Snapshot

METRICS = metric_table("""
    noise_other_cpu_pct | CPU used by other processes (% of one core)         | %  | max | lower/higher
    noise_steal_pct     | CPU steal (% of one core)                           | %  | max | lower/higher
    noise_other_io_mb   | Storage I/O by other processes (any device)         | MB | max | less/more
    noise_psi_cpu_pct   | Time some task stalled on CPU (PSI)                 | %  | max | lower/higher
    noise_psi_io_pct    | Time some task stalled on I/O (PSI)                 | %  | max | lower/higher
    noise_psi_mem_pct   | Time some task stalled on memory (PSI)              | %  | max | lower/higher
    noise_dirty_mb      | Dirty and writeback memory at the window's start    | MB | max | less/more
""")
NAMES = tuple(spec.name for spec in METRICS)
PSI = {"noise_psi_cpu_pct": "cpu", "noise_psi_io_pct": "io", "noise_psi_mem_pct": "memory"}
MB = 1e6
REFRESH = 32  # readings between two re-checks of the PIDs known as kernel threads (a PID may be reused)
KEEP = 4096  # readings kept for window(): a run's windows are asked for right after they end


def service_pids(services: Path) -> list[tuple[int, str | None]]:
    """(PID, marker) of every process a storbench service records under ``services`` (``<home>/services``):
    the ``pid`` of each object in each ``<name>/state.json``, with its ``marker`` (a text its command line
    holds, so a reused PID is not taken for the service's)."""
    found: list[tuple[int, str | None]] = []
    try:
        names = sorted(os.listdir(services))
    except OSError:
        return found
    for name in names:
        try:
            state = json.loads((services / name / "state.json").read_text())
        except (OSError, ValueError):
            continue
        stack = [state]
        while stack:
            item = stack.pop()
            if isinstance(item, dict):
                pid, marker = item.get("pid"), item.get("marker")
                if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0:
                    found.append((pid, marker if isinstance(marker, str) else None))
                stack.extend(item.values())
            elif isinstance(item, list):
                stack.extend(item)
    return list(dict.fromkeys(found))


@dataclass(frozen=True, slots=True)
class Reading:
    """The machine's counters at one mark."""

    time: float  # time.monotonic() when read
    other_ticks: int  # CPU of the processes outside the run's tree (less the run's daemons reaped by them)
    other_io: int  # bytes read + written to storage by them, likewise
    steal: int | None  # /proc/stat steal, ticks
    psi: dict[str, int | None]  # cpu, io, memory: "some" total, µs
    dirty: int | None  # Dirty + Writeback, bytes


def node_window(points: Sequence["Snapshot"], start: float, end: float, hz: int = 100) -> dict[str, float | None]:
    """A node's ``noise_*`` figures from its telemetry snapshots at its window marks, for a node read through
    node_exporter (or Prometheus): steal from its CPU counters (``hz`` ticks a second: node_exporter's
    seconds turned into USER_HZ ticks), pressure and dirty memory from its ``noise``. Other processes' CPU
    and I/O stay None: node_exporter shows no processes, so the run's own cannot be told from the rest."""
    values: dict[str, float | None] = dict.fromkeys(NAMES)
    times = [point.time for point in points]
    before, after = bisect.bisect_right(times, start) - 1, bisect.bisect_left(times, end)
    if before < 0 or after >= len(points) or after <= before:
        return values
    first, last = points[before], points[after]
    seconds = last.time - first.time
    if seconds <= 0:
        return values
    if first.cpu is not None and last.cpu is not None:
        values["noise_steal_pct"] = round(max(0, last.cpu.steal - first.cpu.steal) * 100 / (hz * seconds), 3)
    a, b = first.noise or {}, last.noise or {}
    for name, kind in PSI.items():
        key = f"psi_{kind}_us"
        if a.get(key) is not None and b.get(key) is not None:
            values[name] = round(min(100.0, max(0, b[key] - a[key]) / (seconds * 1e4)), 3)
    if a.get("dirty_bytes") is not None:
        values["noise_dirty_mb"] = round(a["dirty_bytes"] / MB, 3)
    return values


class NoiseSentinel:
    """Reads the machine at window marks; :meth:`window` gives a window's ``noise_*`` figures.

    ``roots``: the PIDs whose trees are the run's own (default: this process); ``services``: a results
    home's ``services`` directory, whose recorded processes are the run's too (re-read when a state file
    changes); ``hz``: clock ticks per second of /proc/PID/stat and /proc/stat; ``clock``: a reading's time
    (tests give their own).
    """

    def __init__(
        self,
        proc_root: str = "/proc",
        roots: Iterable[int] | None = None,
        services: Path | None = None,
        hz: int | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.proc_root, self.clock = proc_root, clock
        self.roots = set(roots) if roots is not None else {os.getpid()}
        self.services = services
        self.hz = hz or os.sysconf("SC_CLK_TCK")
        self.cpu_seconds = 0.0  # the sentinel's own thread CPU over all its readings
        self.readings = 0
        budget = fd_budget()
        self._files = procfs.CounterFiles(proc_root)
        self._stat = PidFiles(proc_root, "stat", budget * 3 // 4)
        self._io = PidFiles(proc_root, "io", budget // 4)
        self._kthreads: set[str] = set()
        self._no_io: set[tuple[int, int]] = set()  # (pid, start) whose io file could not be read
        self._last_stat: dict[str, tuple[bytes, PidStat]] = {}  # PID -> its stat text and figures, last reading
        self._last_io: dict[tuple[int, int], int] = {}  # (pid, start) -> its io bytes when last read
        self._own: set[tuple[int, int]] = set()  # (pid, start) of the run's processes seen so far
        self._orphans: dict[tuple[int, int], tuple[int, int]] = {}  # own processes whose parent is not: CPU, I/O
        self._lost = [0, 0]  # CPU ticks and bytes of own orphans that ended: their reaper's cutime holds them
        self._services: dict[str, int] = {}  # service directory -> its state file's mtime when read
        self._service_roots: dict[int, int] = {}  # PID -> its start when its marker was checked
        self._marks: list[tuple[float, Reading]] = []
        self._last: Reading | None = None

    # -- readings --------------------------------------------------------------------------------------

    def read(self, reuse: float = 0.0) -> Reading:
        """The machine's counters now (not kept: :meth:`mark` keeps one under a window's time). ``reuse``: the
        last reading instead, when it is at most that many seconds old (a window that starts right after the
        last one ended: back-to-back windows then cost one reading each, not two)."""
        last = self._last
        if reuse > 0 and last is not None and self.clock() - last.time <= reuse:
            return last
        used = time.thread_time()
        refresh = self.readings % REFRESH == 0
        if refresh:
            self._kthreads.clear()
        self.readings += 1
        stats, changed = self._processes()
        if refresh:
            self._no_io = {key for key in self._no_io if key[0] in stats and stats[key[0]].start == key[1]}
        own = self._own_tree(stats)
        other_ticks = other_io = 0
        orphans: dict[tuple[int, int], tuple[int, int]] = {}
        for pid, stat in stats.items():
            key = (pid, stat.start)
            if pid not in own:
                other_ticks += stat.ticks
                other_io += self._io_bytes(key, pid in changed) or 0
            elif stat.ppid not in own and stat.ppid > 0:
                orphans[key] = (stat.ticks, self._io_bytes(key, pid in changed) or 0)
        for key, (ticks, io) in self._orphans.items():
            if key[0] not in stats or stats[key[0]].start != key[1]:  # ended: its reaper (init) got its counters
                self._lost[0] += ticks
                self._lost[1] += io
        self._orphans = orphans
        cpu = procfs.read_cpu(self._files)
        psi = {kind: self._pressure(kind) for kind in ("cpu", "io", "memory")}
        meminfo = self._files.read("meminfo")
        reading = Reading(
            self.clock(),
            other_ticks - self._lost[0],
            other_io - self._lost[1],
            cpu.steal if cpu is not None else None,
            psi,
            parse_dirty(meminfo) if meminfo is not None else None,
        )
        self.cpu_seconds += time.thread_time() - used
        self._last = reading
        return reading

    def mark(self, when: float | None = None, reading: Reading | None = None) -> float:
        """Keeps ``reading`` (default: one taken now) under ``when``, the time the window knows this mark
        by (default: the reading's own); returns that time."""
        reading = reading if reading is not None else self.read()
        when = reading.time if when is None else when
        if self._marks and when < self._marks[-1][0]:
            bisect.insort(self._marks, (when, reading), key=lambda mark: mark[0])
        else:
            self._marks.append((when, reading))
        if len(self._marks) > KEEP:
            del self._marks[: KEEP // 4]
        return when

    def window(self, start: float, end: float) -> dict[str, float | None]:
        """The ``noise_*`` figures between the last mark at or before ``start`` and the first at or after
        ``end`` (a window narrowed to a tool's own phase keeps its marks); all None without both."""
        times = [mark[0] for mark in self._marks]
        before, after = bisect.bisect_right(times, start) - 1, bisect.bisect_left(times, end)
        values: dict[str, float | None] = dict.fromkeys(NAMES)
        if before < 0 or after >= len(times) or after <= before:
            return values
        first, last = self._marks[before][1], self._marks[after][1]
        seconds = last.time - first.time
        if seconds <= 0:
            return values
        core_pct = 100 / (self.hz * seconds)
        values["noise_other_cpu_pct"] = round(max(0, last.other_ticks - first.other_ticks) * core_pct, 3)
        if first.steal is not None and last.steal is not None:
            values["noise_steal_pct"] = round(max(0, last.steal - first.steal) * core_pct, 3)
        values["noise_other_io_mb"] = round(max(0, last.other_io - first.other_io) / MB, 3)
        for name, kind in PSI.items():
            a, b = first.psi.get(kind), last.psi.get(kind)
            if a is not None and b is not None:
                values[name] = round(min(100.0, max(0, b - a) / (seconds * 1e4)), 3)  # µs / (s × 1e6) × 100
        if first.dirty is not None:
            values["noise_dirty_mb"] = round(first.dirty / MB, 3)
        return values

    def close(self) -> None:
        """Closes the files kept open (a later reading opens what it needs again)."""
        self._stat.close()
        self._io.close()
        self._files.close()

    # -- the parts of a reading ------------------------------------------------------------------------

    def _processes(self) -> tuple[dict[int, PidStat], set[int]]:
        """Every process's stat but the kernel threads', and the PIDs whose stat changed since the last reading
        (one that did not, did not run: its last io figure still holds, and its text is not parsed again)."""
        stats: dict[int, PidStat] = {}
        changed: set[int] = set()
        try:
            names = [name for name in os.listdir(self.proc_root) if name.isdigit()]
        except OSError:
            return stats, changed
        alive = set(names)
        kthreads, last, seen = self._kthreads, self._last_stat, {}
        for name in names:
            if name in kthreads:
                continue
            data = self._stat.read(name)
            if data is None:
                continue
            known = last.get(name)
            if known is not None and known[0] == data:
                stat = known[1]
            else:
                try:
                    stat = parse_pid_stat(data.decode(errors="replace"))
                except (ValueError, IndexError):
                    continue
                if stat.kernel_thread:
                    kthreads.add(name)
                    self._stat.forget(name)
                    continue
                changed.add(stat.pid)
            seen[name] = (data, stat)
            stats[stat.pid] = stat
        self._last_stat = seen
        self._stat.keep_only(alive)
        self._io.keep_only(alive)
        self._kthreads &= alive
        self._last_io = {
            key: value for key, value in self._last_io.items() if key[0] in stats and stats[key[0]].start == key[1]
        }
        return stats, changed

    def _own_tree(self, stats: dict[int, PidStat]) -> set[int]:
        """The PIDs of the run's processes: the roots, the services' processes, the run's processes seen
        before, and everything below them."""
        tops = {pid for pid in self.roots if pid in stats}
        tops |= {pid for pid, start in self._service_tops(stats).items() if pid in stats and stats[pid].start == start}
        tops |= {pid for pid, start in self._own if pid in stats and stats[pid].start == start}
        children: dict[int, list[int]] = {}
        for stat in stats.values():
            children.setdefault(stat.ppid, []).append(stat.pid)
        own: set[int] = set()
        stack = list(tops)
        while stack:
            pid = stack.pop()
            if pid not in own:
                own.add(pid)
                stack.extend(children.get(pid, ()))
        self._own = {(pid, stats[pid].start) for pid in own}
        return own

    def _service_tops(self, stats: dict[int, PidStat]) -> dict[int, int]:
        """PID -> start of each service process whose command line held its marker when its state was read
        (state files are read again when one changes, appears or goes)."""
        if self.services is None:
            return {}
        seen: dict[str, int] = {}
        try:
            names = os.listdir(self.services)
        except OSError:
            names = []
        for name in names:
            try:
                seen[name] = (self.services / name / "state.json").stat().st_mtime_ns
            except OSError:
                continue
        if seen != self._services:
            self._services = seen
            self._service_roots = {
                pid: stats[pid].start
                for pid, marker in service_pids(self.services)
                if pid in stats and self._marked(pid, marker)
            }
        return self._service_roots

    def _marked(self, pid: int, marker: str | None) -> bool:
        if marker is None:
            return True
        try:
            with open(f"{self.proc_root}/{pid}/cmdline", "rb") as handle:
                line = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            return False
        return marker in line

    def _io_bytes(self, key: tuple[int, int], changed: bool) -> int | None:
        if key in self._no_io:
            return None
        if not changed and key in self._last_io:
            return self._last_io[key]
        data = self._io.read(str(key[0]))
        value = parse_pid_io(data.decode(errors="replace")) if data is not None else None
        if value is None:
            self._no_io.add(key)
        else:
            self._last_io[key] = value
        return value

    def _pressure(self, kind: str) -> int | None:
        text = self._files.read(f"pressure/{kind}")
        try:
            return parse_pressure(text) if text is not None else None
        except ValueError:
            return None
