"""A background thread that snapshots host and device counters every ``interval`` seconds.

``mark()`` snapshots on demand, so each timed window starts and ends on an exact
snapshot instead of the nearest tick. The collector measures its own CPU time, so
a run can report what observing it cost. With a ``journal`` file (the run's telemetry.csv,
rewritten whole at the end), each tick's row is appended as it is taken, so a run killed
outright still leaves its series up to the last tick.

By default it reads this machine's /proc; given a ``reader`` (a node_exporter scrape), it
samples a remote node the same way. A reading that fails (the exporter stopped, a timeout)
is recorded as a gap and sampling goes on: the windows around it widen to the snapshots
on either side, and the gap is reported.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable

from storbench.results.series import csv_lines, to_csv
from storbench.telemetry import procfs
from storbench.telemetry.ticker import Ticker, first_line
from storbench.telemetry.snapshot import Snapshot
from storbench.telemetry.window import rate_row, rate_rows


def read_snapshot(
    devices: frozenset[str], files: procfs.CounterFiles, energy: procfs.EnergyMeter | None = None
) -> Snapshot:
    """Reads every counter file once; the time is when the disk counters were read."""
    before = time.monotonic()
    disks = procfs.read_diskstats(files, devices) if devices else {}
    after = time.monotonic()
    return Snapshot(
        time=(before + after) / 2,
        disks=disks,
        cpu=procfs.read_cpu(files),
        net=procfs.read_net(files),
        memory=procfs.read_memory(files),
        energy_uj=energy.read() if energy is not None else None,
    )


class Collector(Ticker):
    thread_name = "storbench-telemetry"

    def __init__(
        self,
        devices: list[str],
        interval: float = 1.0,
        proc_root: str = "/proc",
        sys_root: str = "/sys",
        journal: Path | None = None,
        reader: Callable[[frozenset[str]], Snapshot] | None = None,
    ):
        super().__init__(interval)
        self.devices = list(devices)
        self._reader = reader
        self._journal = journal
        self._journaled: tuple[Snapshot, list[str]] | None = None  # the last tick appended, the columns
        self._only = frozenset(devices)
        self._files = procfs.CounterFiles(proc_root)
        self._energy = procfs.EnergyMeter(sys_root)
        self._points: list[Snapshot] = []

    def stop(self) -> None:
        """Stops sampling and takes a final snapshot; safe to call twice or without start()."""
        super().stop()
        with self._lock:
            self._files.close()  # a later mark() reopens what it needs

    def mark(self) -> float:
        """Snapshot now (from any thread) and return its time (now, if the reading failed: a gap)."""
        used = time.thread_time()
        snapshot = self._snapshot()
        self._charge(used)
        return snapshot.time if snapshot is not None else time.monotonic()

    def journal_to(self, path: Path) -> None:
        """Appends each tick's row to ``path`` from now on (set before start())."""
        self._journal = path

    def points(self) -> list[Snapshot]:
        with self._lock:
            return list(self._points)

    def rates(self) -> list[dict[str, Any]]:
        """Rate rows per sampling interval, ``t`` relative to the first snapshot (see window.rate_rows)."""
        return rate_rows(self.points(), self.interval)

    def _snapshot(self) -> Snapshot | None:
        # Under the lock, so list order is time order even when mark() races the thread.
        with self._lock:
            tried = time.monotonic()
            try:
                snapshot = (
                    self._reader(self._only)
                    if self._reader is not None
                    else read_snapshot(self._only, self._files, self._energy)
                )
            except OSError as exc:
                self._record_gap(self._points[-1].time if self._points else tried, tried, first_line(exc))
                return None
            self._points.append(snapshot)
            return snapshot

    def _tick(self) -> None:
        tick = self._snapshot()
        if tick is not None:
            self._append(tick)

    def _append(self, tick: Snapshot) -> None:
        """The row from the last tick appended (or the first snapshot) to ``tick``, appended to the journal in
        one write; a write that fails ends the journal, never the sampling."""
        if self._journal is None:
            return
        origin = self.points()[0]  # tick came after at least one snapshot
        previous, columns = self._journaled or (origin, [])
        if tick.time <= previous.time:
            return
        row = rate_row(previous, tick, origin.time)
        text = csv_lines([row], columns) if columns else to_csv([row])  # the first row: with the header
        columns = columns or list(row)
        self._journaled = (tick, columns)
        try:
            fd = os.open(self._journal, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
            try:
                os.write(fd, text.encode())
            finally:
                os.close(fd)
        except OSError:
            self._journal = None
