"""Was the machine busy? A run's windows judged from the noise sentinel's figures (``noise_*`` samples).

The sentinel (:mod:`storbench.telemetry.sentinel`) records, per timed window, what else the machine did.
Here a run's windows are summarised (mean and maximum over windows) and judged. A window — and a run, on
its windows' means — is **busy** when any of:

- other processes used at least :data:`OTHER_CPU_PCT` (10) % of one core: a neighbour that size takes a
  core's tenth from the run, or its cache and memory bandwidth;
- the hypervisor stole at least :data:`STEAL_PCT` (5) % of one core;
- other processes read and wrote at least :data:`OTHER_IO_MBPS` (5) MB/s to storage (any device: the
  kernel does not say which), enough to move a disk's queue.

Pressure stall (PSI) and dirty memory at the start are shown but never make a window busy: PSI counts the
run's own tasks too (a storage benchmark stalls on I/O by design), and dirty pages are mostly the run's own
writes of the window before.

:func:`notes` says, for ``compare``, when the compared runs' machines differed (one busy and another not,
or other processes' CPU ≥ :data:`CPU_POINTS` points apart), or when every run's was busy; for one run
(``show``) it says which windows were busy. Runs from before the sentinel have no ``noise_*`` samples and
are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from storbench.results.model import Sample

OTHER_CPU_PCT = 10.0  # % of one core, other processes
STEAL_PCT = 5.0  # % of one core
OTHER_IO_MBPS = 5.0  # MB/s read + written by other processes
CPU_POINTS = 10.0  # other processes' CPU this many points apart between two runs: said, busy or not
LISTED = 4  # busy windows named in show's line

PREFIX = "noise_"
OTHER_CPU, STEAL, OTHER_IO = "noise_other_cpu_pct", "noise_steal_pct", "noise_other_io_mb"


def _pct(value: float) -> str:
    return f"{value:.0f}" if value >= 1 or value == 0 else f"{value:.1f}"


@dataclass(frozen=True)
class WindowNoise:
    """One window's figures (on one node, for a cluster)."""

    workload: str
    repetition: int  # 0: a prepare step
    labels: tuple[tuple[str, str], ...]  # the sweep point's labels and the node, if any
    values: dict[str, float | None]
    seconds: float | None  # the window's completion time, when recorded

    @property
    def io_mbps(self) -> float | None:
        mb = self.values.get(OTHER_IO)
        return mb / self.seconds if mb is not None and self.seconds else None

    @property
    def busy(self) -> bool:
        return _busy(self.values.get(OTHER_CPU), self.values.get(STEAL), self.io_mbps)

    @property
    def name(self) -> str:
        """ "groupby rep 2", "teragen prepare", "groupby rep 1 (node=worker-2)"."""
        text = f"{self.workload} {'prepare' if self.repetition == 0 else f'rep {self.repetition}'}"
        return text + (f" ({', '.join(f'{k}={v}' for k, v in self.labels)})" if self.labels else "")


def _busy(other_cpu: float | None, steal: float | None, io_mbps: float | None) -> bool:
    return (other_cpu or 0.0) >= OTHER_CPU_PCT or (steal or 0.0) >= STEAL_PCT or (io_mbps or 0.0) >= OTHER_IO_MBPS


@dataclass(frozen=True)
class Disturbance:
    """A run's windows and their figures: means, maxima, the judgement."""

    windows: list[WindowNoise]

    def _values(self, metric: str) -> list[float]:
        return [v for w in self.windows if (v := w.values.get(metric)) is not None]

    def mean(self, metric: str) -> float | None:
        values = self._values(metric)
        return sum(values) / len(values) if values else None

    def peak(self, metric: str) -> float | None:
        values = self._values(metric)
        return max(values) if values else None

    def io_mbps(self, how: str = "mean") -> float | None:
        rates = [r for w in self.windows if (r := w.io_mbps) is not None]
        if not rates:
            return None
        return sum(rates) / len(rates) if how == "mean" else max(rates)

    @property
    def busy(self) -> bool:
        """Busy on the windows' means (a single disturbed window is said by :func:`busy_line`, not here)."""
        return _busy(self.mean(OTHER_CPU), self.mean(STEAL), self.io_mbps())

    @property
    def busy_windows(self) -> list[WindowNoise]:
        return [w for w in self.windows if w.busy]

    def summary(self) -> dict[str, Any]:
        """Mean and max over the windows of every figure (None where never measured), and the judgement."""
        out: dict[str, Any] = {"windows": len(self.windows), "busy_windows": len(self.busy_windows), "busy": self.busy}
        for metric in (
            OTHER_CPU,
            STEAL,
            OTHER_IO,
            "noise_psi_cpu_pct",
            "noise_psi_io_pct",
            "noise_psi_mem_pct",
            "noise_dirty_mb",
        ):
            out[metric] = {"mean": self.mean(metric), "max": self.peak(metric)}
        out["noise_other_io_mbps"] = {"mean": self.io_mbps(), "max": self.io_mbps("max")}
        return out

    def figures(self, lead: bool = True) -> str:
        """ "38% of a core used by other processes (max 95%), steal 6% of a core (max 9%)": the figures that
        cross their thresholds on average, other processes' CPU always (``lead``)."""
        parts = []
        cpu, steal, io = self.mean(OTHER_CPU), self.mean(STEAL), self.io_mbps()
        if cpu is not None and (lead or cpu >= OTHER_CPU_PCT):
            parts.append(f"{_pct(cpu)}% of a core used by other processes (max {_pct(self.peak(OTHER_CPU) or 0)}%)")
        if steal is not None and (steal >= STEAL_PCT or (lead and cpu is None)):
            parts.append(f"steal {_pct(steal)}% of a core (max {_pct(self.peak(STEAL) or 0)}%)")
        if io is not None and io >= OTHER_IO_MBPS:
            parts.append(f"other processes' storage I/O {io:.1f} MB/s (max {self.io_mbps('max') or 0:.1f})")
        return ", ".join(parts) or "not watched"

    def lead(self) -> float | None:
        """The figure runs are set side by side on: other processes' CPU, or steal where that is not seen
        (a cluster read through node_exporter)."""
        cpu = self.mean(OTHER_CPU)
        return cpu if cpu is not None else self.mean(STEAL)


def disturbance(samples: Iterable[Sample]) -> Disturbance | None:
    """A run's windows from its samples; None when it has no ``noise_*`` sample (a run from before the
    sentinel)."""
    samples = list(samples)
    times = {
        (s.workload, s.repetition, tuple(sorted(s.labels.items()))): s.value
        for s in samples
        if s.metric == "completion_time"
    }
    windows: dict[tuple[str, int, tuple[tuple[str, str], ...]], dict[str, float | None]] = {}
    for s in samples:
        if s.metric.startswith(PREFIX):
            windows.setdefault((s.workload, s.repetition, tuple(sorted(s.labels.items()))), {})[s.metric] = s.value
    if not windows:
        return None
    out = []
    for (workload, repetition, labels), values in windows.items():
        point = tuple((k, v) for k, v in labels if k != "node")
        out.append(WindowNoise(workload, repetition, labels, values, times.get((workload, repetition, point))))
    return Disturbance(out)


def busy_line(d: Disturbance) -> str | None:
    """show's line when some window was busy: "machine was busy during 3 of 9 windows: other processes used up
    to 95% of a core (groupby rep 2, ...)"; None when none was."""
    busy = d.busy_windows
    if not busy:
        return None
    said = []
    cpu = [w.values[OTHER_CPU] for w in busy if w.values.get(OTHER_CPU) is not None]
    steal = [w.values[STEAL] for w in busy if w.values.get(STEAL) is not None]
    io = [r for w in busy if (r := w.io_mbps) is not None]
    if cpu and max(cpu) >= OTHER_CPU_PCT:
        said.append(f"other processes used up to {_pct(max(cpu))}% of a core")
    if steal and max(steal) >= STEAL_PCT:
        said.append(f"steal up to {_pct(max(steal))}% of a core")
    if io and max(io) >= OTHER_IO_MBPS:
        said.append(f"other processes' storage I/O up to {max(io):.1f} MB/s")
    names = [w.name for w in busy[:LISTED]] + (["…"] if len(busy) > LISTED else [])
    return f"machine was busy during {len(busy)} of {len(d.windows)} windows: {', '.join(said)} ({', '.join(names)})"


def notes(runs: Sequence[Any], names: Sequence[str]) -> list[str]:
    """compare's notes on the machines the runs were measured on (``runs``: stored runs, with ``samples``;
    ``names``: how the comparison names them); one run: :func:`busy_line`."""
    judged = [(name, d) for run, name in zip(runs, names) if (d := disturbance(run.samples)) is not None]
    if len(runs) == 1:
        line = busy_line(judged[0][1]) if judged else None
        return [line] if line else []
    if len(judged) < 2:
        return []
    leads = [d.lead() for _, d in judged]
    present = [v for v in leads if v is not None]
    busy = [d.busy for _, d in judged]
    apart = len(present) > 1 and max(present) - min(present) >= CPU_POINTS
    if not all(busy) and not any(busy) and not apart:
        return []
    consequence = (
        _SHARED if _one_experiment(runs) else ": a difference between them may be the machine's, not the storage's"
    )
    # the most disturbed first: busy before quiet, then by other processes' CPU
    order = sorted(judged, key=lambda nd: (not nd[1].busy, -(nd[1].lead() or 0.0)))
    if all(busy):
        parts = [f"{name}'s windows: {d.figures()}" for name, d in order]
        return ["the machine was busy during every run: " + "; ".join(parts) + consequence]
    first_name, first = order[0]
    parts = [f"{first_name}'s windows: {first.figures()}"]
    for name, d in order[1:]:
        lead = d.lead()
        parts.append(f"{name}'s: {_pct(lead)}%" if lead is not None else f"{name}'s: not watched")
    return ["; ".join(parts) + consequence]


# Interleaved runs met the machine round by round alike, and compare pairs each round's repetitions: the note
# still says what the machine did, but not that it may explain the difference.
_SHARED = (
    ": the runs were interleaved, so each round's repetitions met the same machine and are compared "
    "pair by pair; a busy machine still widens the intervals"
)


def _one_experiment(runs: Sequence[Any]) -> bool:
    """The runs are of one interleaved experiment (the same ``experiment.id`` in every manifest)."""
    ids = {((getattr(run, "manifest", None) or {}).get("experiment") or {}).get("id") for run in runs}
    return len(ids) == 1 and None not in ids
