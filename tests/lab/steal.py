"""Host CPU steal while the lab measures: the share of this machine's CPU time its hypervisor gave to others.

A known truth of the lab (a 20 MiB/s device, a stack's IOPS against another's under the same drive model) holds
only while QEMU's emulator thread runs. QEMU's throttles refill by the host's clock, so while the hypervisor holds
this machine back, the guest's device moves less than its limit (ci43: 30-60% steal through the lab's runs; one
20 MiB/s round at 15.0 MB/s, btrfs zoned at 0.71 of ext4's IOPS where the model gives parity). The guest cannot
see it (TCG gives it no steal clock); the host can, in /proc/stat. A measurement during which the host lost
STOLEN_PCT or more of its CPU over any SPAN_S seconds is not judged: the tests that rest on it are skipped, with
the figure. On a quiet host (steal 0-2%) they run and assert as before.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

STOLEN_PCT = 3.0
SPAN_S = 10.0
PERIOD_S = 0.5


def steal_and_total(stat_text: str) -> tuple[int, int]:
    """(steal, all) clock ticks of the machine from /proc/stat's ``cpu`` line (guest time is inside user time)."""
    fields = next(line for line in stat_text.splitlines() if line.startswith("cpu ")).split()[1:]
    ticks = [int(v) for v in fields[:8]]  # user nice system idle iowait irq softirq steal
    return ticks[7] if len(ticks) > 7 else 0, sum(ticks)


def worst_steal_pct(samples: list[tuple[float, int, int]], span_s: float = SPAN_S) -> float:
    """The highest steal, in % of the machine's CPU time, over any ``span_s`` of (time, steal, all) readings: each
    reading against the first one at least ``span_s`` later (the whole, when they span less)."""
    if len(samples) < 2:
        return 0.0
    if samples[-1][0] - samples[0][0] <= span_s:
        pairs = [(samples[0], samples[-1])]
    else:
        pairs, j = [], 0
        for first in samples:
            while j < len(samples) and samples[j][0] - first[0] < span_s:
                j += 1
            if j == len(samples):
                break
            pairs.append((first, samples[j]))
    return max((100 * (b[1] - a[1]) / (b[2] - a[2]) for a, b in pairs if b[2] > a[2]), default=0.0)


@dataclass
class Span:
    """What the host lost while one measurement ran (``worst``: set when it ends)."""

    what: str
    worst: float | None = None
    lost: str = "QEMU's emulator with it: the lab's known truths could not hold"  # what the steal took

    def skip_if_stolen(self) -> None:
        if self.worst is not None and self.worst >= STOLEN_PCT:
            pytest.skip(
                f"{self.what}: the host's hypervisor took up to {self.worst:.0f}% of its CPU (over {SPAN_S:.0f} s) "
                f"while it ran, and {self.lost}, so it is not judged"
            )


@dataclass
class StealWatch:
    """/proc/stat read every PERIOD_S in a thread of the test process, from start() to stop()."""

    path: Path = Path("/proc/stat")
    samples: list[tuple[float, int, int]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)

    def start(self) -> StealWatch:
        threading.Thread(target=self._loop, name="lab-steal-watch", daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.samples.append((time.monotonic(), *steal_and_total(self.path.read_text())))
            self._stop.wait(PERIOD_S)

    def measure(self, what: str, run, lost: str = Span.lost) -> tuple[object, Span]:
        """``run()``'s result and the steal while it ran (``lost``: what the steal took, for the skip's words)."""
        start = time.monotonic()
        result = run()
        end = time.monotonic()
        inside = [s for s in list(self.samples) if start - PERIOD_S <= s[0] <= end + PERIOD_S]
        return result, Span(what, worst_steal_pct(inside), lost)
