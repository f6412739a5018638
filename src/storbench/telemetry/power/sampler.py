"""A power source sampled on its own thread, integrated into joules over the real reading times.

Each reading becomes a :class:`PowerPoint`: its time, the watts at that time and the energy since
the first reading. Watts are integrated by the trapezoid rule between consecutive readings (a gap
is bridged the same way, and recorded); an energy counter (RAPL) is its own integral and its watts
are the mean over the interval that ends at the reading. ``mark()`` reads at once, so a window
starts and ends on a reading when the source answers quickly.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from dataclasses import dataclass
from typing import Sequence

from storbench.telemetry.power.base import PowerSource, Reading
from storbench.telemetry.ticker import Ticker, first_line


@dataclass(frozen=True, slots=True)
class PowerPoint:
    time: float  # time.monotonic()
    watts: float | None
    joules: float  # energy since the first reading


def integrate(readings: Sequence[tuple[float, Reading]]) -> list[PowerPoint]:
    """Points from (time, reading) pairs, in time order."""
    points: list[PowerPoint] = []
    base: float | None = None
    for when, reading in readings:
        if reading.joules is not None:  # a counter
            base = reading.joules if base is None else base
            joules = reading.joules - base
            watts = (
                (joules - points[-1].joules) / (when - points[-1].time) if points and when > points[-1].time else None
            )
        else:
            watts = reading.watts
            previous = points[-1] if points else None
            joules = (
                (
                    previous.joules
                    + ((previous.watts if previous.watts is not None else watts) + watts) / 2 * (when - previous.time)
                )
                if previous is not None and watts is not None
                else 0.0
            )
        points.append(PowerPoint(when, watts, joules))
    return points


def _energy_at(points: Sequence[PowerPoint], t: float) -> float | None:
    """Cumulative joules at ``t``, linear between the readings around it; None outside them."""
    if not points or t < points[0].time or t > points[-1].time:
        return None
    index = bisect_left(points, t, key=lambda p: p.time)
    after = points[index]
    if after.time == t or index == 0:
        return after.joules
    before = points[index - 1]
    return before.joules + (after.joules - before.joules) * (t - before.time) / (after.time - before.time)


def power_window(points: Sequence[PowerPoint], start: float, end: float) -> dict[str, float | None]:
    """energy_j, avg_power_w and max_power_w over [start, end]; None when the readings do not cover it."""
    first, last = _energy_at(points, start), _energy_at(points, end)
    if first is None or last is None or end <= start:
        return {"energy_j": None, "avg_power_w": None, "max_power_w": None}
    inside = [p.watts for p in points if start <= p.time <= end and p.watts is not None]
    return {
        "energy_j": last - first,
        "avg_power_w": (last - first) / (end - start),
        "max_power_w": max(inside) if inside else None,
    }


class PowerSampler(Ticker):
    thread_name = "storbench-power"

    def __init__(self, source: PowerSource, interval: float = 1.0):
        super().__init__(interval)
        self.source = source
        self._readings: list[tuple[float, Reading]] = []

    def mark(self) -> float:
        used = time.thread_time()
        when = self._sample()
        self._charge(used)
        return when

    def stop(self) -> None:
        """The last reading, then the source's session (a persistent ipmitool) is closed."""
        super().stop()
        close = getattr(self.source, "close", None)
        if close is not None:
            close()

    def points(self) -> list[PowerPoint]:
        with self._lock:
            return integrate(self._readings)

    def _sample(self) -> float:
        tried = time.monotonic()
        try:
            reading = self.source.read()
        except OSError as exc:
            with self._lock:
                self._record_gap(self._readings[-1][0] if self._readings else tried, tried, first_line(exc))
            return tried
        done = time.monotonic()
        with self._lock:  # readings stay in time order when mark() races the thread
            when = (tried + done) / 2
            if not self._readings or when > self._readings[-1][0]:
                self._readings.append((when, reading))
        return when

    def _tick(self) -> None:
        self._sample()
