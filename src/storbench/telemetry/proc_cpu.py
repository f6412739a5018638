"""A client process's CPU over time, read from /proc the same way for any client, and its CPU per operation
over the steady middle of its operations.

Two load clients compared on CPU per operation must be measured alike: the same source, the same part of the
run. A client's own figure does not do (the engine's rusage from its clock's start, a JVM's process CPU less
what it printed at session open: each leaves out a different part of the set-up). So the caller starts the
client processes and hands them to :meth:`CpuWatch.watch`, which reads, every ``interval`` seconds until
each has exited:

- the CPU its threads have run so far: the sum of ``/proc/PID/task/TID/schedstat``'s first field (ns on a
  CPU), each thread's last reading kept after the thread is gone (so an exited thread's time stays counted;
  a thread born and gone between two readings is missed: a fraction of one interval of one thread);
- once it has exited, before the caller reaps it (``waitid`` with ``WNOWAIT``), the whole process's CPU from
  its zombie's ``/proc/PID/stat`` (utime + stime + its reaped children's, clock ticks of 10 ms): start-up,
  connect, JIT, exit, everything.

:func:`middle_window` finds, on the client's own progress points ((time, operations done so far), each
client's: the engine's per-second series, YCSB's status lines), the times at which it had done
(1 − share)/2 and (1 + share)/2 of its operations (linear between points), and :func:`middle_cpu` the CPU
the processes used between those two times per operation between them: the steady middle, ramp-up
(connect, JIT, lazy prepares) and tail (drain, close, exit) left out on both sides alike.

Times are Unix seconds (``time.time``), the clock both clients stamp their progress with.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from storbench.telemetry.proc_tasks import parse_pid_stat

INTERVAL_S = 0.2  # a JVM client has ~60 threads: ~300 small reads per second, a fraction of a % of a core
MIDDLE_SHARE = 0.5  # the middle half of the operations: a quarter of them at each end left out

Points = Sequence[tuple[float, float]]  # (Unix time s, a cumulative figure), time ascending


@dataclass
class CpuTrace:
    """One process's CPU over time: ``points`` (Unix time s, CPU s its threads ran so far) and, once it exited
    and was read before reaping, ``exit_cpu_s``: the whole process's CPU (/proc/PID/stat at exit)."""

    pid: int
    points: list[tuple[float, float]] = field(default_factory=list)
    exit_cpu_s: float | None = None


class _Threads:
    """A process's threads' CPU (ns), each thread's last reading kept after it is gone."""

    def __init__(self, pid: int, proc_root: str):
        self.task = f"{proc_root}/{pid}/task"
        self.last: dict[str, int] = {}
        self.retired = 0  # threads whose TID came back with less time: a new thread, the old one's time kept

    def read_s(self) -> float | None:
        try:
            tids = os.listdir(self.task)
        except OSError:
            return None  # gone (or reaped): no reading
        for tid in tids:
            try:
                with open(f"{self.task}/{tid}/schedstat", "rb") as f:
                    ns = int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue  # the thread ended between the listing and the read: its last reading stands
            old = self.last.get(tid, 0)
            if ns < old:
                self.retired += old
            self.last[tid] = ns
        return (self.retired + sum(self.last.values())) / 1e9


def _exited(pid: int) -> bool:
    """Whether child ``pid`` has ended, without reaping it (its /proc entry stays readable)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None
    except ChildProcessError:
        return True  # already reaped by someone else: no exit reading


def exit_cpu_s(pid: int, proc_root: str = "/proc", hz: int | None = None) -> float | None:
    """The whole process's CPU (s) from its /proc/PID/stat (a zombie's: all its threads), or None if gone."""
    try:
        with open(f"{proc_root}/{pid}/stat") as f:
            return parse_pid_stat(f.read()).ticks / (hz or os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError):
        return None


class CpuWatch:
    """Samples client processes' CPU from /proc while they run (:meth:`watch`); ``traces`` holds every process
    it watched, in order. One instance per run: both drivers are watched by the same code."""

    def __init__(self, interval: float = INTERVAL_S, proc_root: str = "/proc", clock: Callable[[], float] = time.time):
        self.interval, self.proc_root, self.clock = interval, proc_root, clock
        self.traces: list[CpuTrace] = []

    def watch(self, pids: Sequence[int], timeout: float | None = None) -> bool:
        """Samples ``pids`` (children of this process, not yet reaped) until each has exited, then reads each
        one's whole-process CPU before the caller reaps it; False when ``timeout`` s passed first (the caller
        kills them). The caller reaps them afterwards (wait)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        live = {pid: (CpuTrace(pid), _Threads(pid, self.proc_root)) for pid in pids}
        self.traces += [trace for trace, _ in live.values()]
        while live:
            for pid, (trace, threads) in list(live.items()):
                gone = _exited(pid)
                if gone:
                    whole = exit_cpu_s(pid, self.proc_root)
                    if whole is not None:  # the last point: all of it, the exit included
                        # /proc/PID/stat counts 10 ms ticks, sampled: a short run's can read less than its threads'
                        # schedstat (ns) already showed, even 0 (a quick native run did): never less than that
                        trace.exit_cpu_s = max(whole, trace.points[-1][1] if trace.points else 0.0)
                        trace.points.append((self.clock(), trace.exit_cpu_s))
                    del live[pid]
                    continue
                cpu = threads.read_s()
                if cpu is not None:
                    trace.points.append((self.clock(), cpu))
            if not live:
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(self.interval)
        return True


def at(points: Points, when: float) -> float | None:
    """A cumulative figure at ``when``, linear between the two points around it; None outside the points."""
    if not points or when < points[0][0] or when > points[-1][0]:
        return None
    for (t0, v0), (t1, v1) in zip(points, points[1:]):
        if t0 <= when <= t1:
            return v0 if t1 == t0 else v0 + (v1 - v0) * (when - t0) / (t1 - t0)
    return points[-1][1]  # a single point exactly at ``when``


def _when(points: Points, value: float) -> float | None:
    """The first time a non-decreasing cumulative figure reached ``value``, linear between points."""
    for (t0, v0), (t1, v1) in zip(points, points[1:]):
        if v0 <= value <= v1 and v1 > v0:
            return t0 + (t1 - t0) * (value - v0) / (v1 - v0)
    return None


def middle_window(progress: Points, share: float = MIDDLE_SHARE) -> tuple[float, float, float] | None:
    """(start, end, operations between them): the times at which the run had done (1 − share)/2 and
    (1 + share)/2 of its operations, on its progress points (time, operations done so far); None when the
    points do not show the run's operations (fewer than two points, none done)."""
    if not 0 < share <= 1:
        raise ValueError(f"share {share}: between 0 (excluded) and 1")
    points = sorted(progress)
    if len(points) < 2 or points[-1][1] <= points[0][1]:
        return None
    first, total = points[0][1], points[-1][1]
    low, high = first + (total - first) * (1 - share) / 2, first + (total - first) * (1 + share) / 2
    start, end = _when(points, low), _when(points, high)
    if start is None or end is None or end <= start:
        return None
    return start, end, high - low


def middle_cpu(progress: Points, traces: Sequence[CpuTrace], share: float = MIDDLE_SHARE) -> dict | None:
    """The processes' CPU over the steady middle of the run (:func:`middle_window`): {"from_unix_s",
    "to_unix_s", "ops", "cpu_s", "cpu_us_per_op", "share"}; None when there is no middle, no trace, or a
    trace does not cover it (a process not sampled then)."""
    window = middle_window(progress, share)
    if window is None or not traces:
        return None
    start, end, ops = window
    cpu = 0.0
    for trace in traces:
        a, b = at(trace.points, start), at(trace.points, end)
        if a is None or b is None:
            return None
        cpu += b - a
    return {
        "from_unix_s": round(start, 3),
        "to_unix_s": round(end, 3),
        "ops": round(ops, 1),
        "cpu_s": round(cpu, 6),
        "cpu_us_per_op": cpu * 1e6 / ops,
        "share": share,
    }


def process_cpu_s(traces: Sequence[CpuTrace]) -> float | None:
    """All the processes' whole CPU (each read at its exit), or None when one was not read."""
    values = [trace.exit_cpu_s for trace in traces]
    return sum(values) if values and None not in values else None  # type: ignore[arg-type]
