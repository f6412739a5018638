"""A reading taken on its own thread at a fixed interval: the loop, its CPU cost and its gaps.

Shared by the telemetry collector and the power sampler. A subclass implements ``_tick()`` (one reading,
from the thread) and ``mark()`` (a reading now, from any thread); ``start()`` takes a first reading so a
series has its origin as soon as it returns, ``stop()`` a last one."""

from __future__ import annotations

import threading
import time
from typing import Any


class Ticker:
    thread_name = "storbench-ticker"

    def __init__(self, interval: float):
        self.interval = interval
        self._gaps: list[dict[str, Any]] = []  # {"from", "to": monotonic times, "error": first line}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._cpu_seconds = 0.0

    @property
    def cpu_seconds(self) -> float:
        """CPU time spent reading: the thread's own plus what mark() cost its callers."""
        with self._lock:
            return self._cpu_seconds

    def start(self) -> None:
        if self._thread is not None:
            return
        self.mark()
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name=self.thread_name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stops the thread and takes a last reading; safe to call twice or without start()."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self.mark()

    def mark(self) -> float:
        raise NotImplementedError

    def _tick(self) -> None:
        raise NotImplementedError

    def gaps(self) -> list[dict[str, Any]]:
        """The spans where readings failed, each with its first error (monotonic times)."""
        with self._lock:
            return [dict(gap) for gap in self._gaps]

    def _record_gap(self, last_good: float, when: float, error: str) -> None:
        """Under the lock: consecutive failures extend one gap, which starts at the last good reading."""
        if self._gaps and self._gaps[-1]["to"] >= last_good:
            self._gaps[-1]["to"] = when
        else:
            self._gaps.append({"from": last_good, "to": when, "error": error})

    def _loop(self) -> None:
        used = time.thread_time()
        next_tick = time.monotonic() + self.interval
        while not self._stop.wait(max(0.0, next_tick - time.monotonic())):
            self._tick()
            next_tick += self.interval
            now = time.monotonic()
            if next_tick < now:  # fell behind (suspended, overloaded): skip ticks, keep the phase
                next_tick += ((now - next_tick) // self.interval + 1) * self.interval
            used = self._charge(used)
        self._charge(used)

    def _charge(self, since: float) -> float:
        """Adds this thread's CPU time since ``since``; returns the new reading."""
        now = time.thread_time()
        with self._lock:
            self._cpu_seconds += now - since
        return now


def first_line(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
