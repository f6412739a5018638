"""Performance consistency of a per-second series (paper 004): spread, tails and stalls.

Paper 004 judges a storage stack by the standard deviation of its per-second IOPS
under ``rados bench`` ("10× more consistent") as well as by its average. storbench
computes the same figures from any per-second series a workload records (rados bench's
per-second lines, fio's per-second logs), so every such workload reports them alike:

- ``mean`` and ``stddev``: the sample standard deviation (n − 1), which is what
  ``rados bench`` prints as "Stddev IOPS" over the same per-second values;
- ``cv``: the coefficient of variation, stddev / mean, in percent (None at mean 0);
- ``min``/``max`` and ``p1``/``p99``: percentiles with linear interpolation between
  the closest ranks (NumPy's default, R type 7);
- ``stalls``: the seconds whose value is below :data:`STALL_FRACTION` (50%) of the
  series' median — the dips a consistent system does not have. When more than half
  the seconds are 0 (a run that mostly stalled, e.g. an OSD stopped) the median is 0
  and half of it says nothing, so the mean is the reference instead.

Each second counts once, in order; a series with fewer than two points has no
stddev (None), never 0.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass
from typing import Any, Iterable

from storbench.results.metrics import MetricSpec, metric
from storbench.results.model import Sample

METRIC_SECTION = 100  # where this section comes in reports (storbench.analysis.metrics)

STALL_FRACTION = 0.5
QUANTITIES = {"iops": "IOPS", "mbps": "MB/s"}  # per-second series name -> unit
STATS = ("mean", "stddev", "cv", "min", "max", "p1", "p99", "stalls")
STAT_UNITS = {"cv": "%", "stalls": "s"}  # the stats not in the series' own unit


@dataclass(frozen=True)
class Consistency:
    n: int
    mean: float
    stddev: float | None
    cv: float | None  # percent
    min: float
    max: float
    p1: float
    p99: float
    median: float
    stalls: int  # seconds below STALL_FRACTION of the median

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def percentile(values: list[float], p: float) -> float:
    """The p-th percentile (0..100) with linear interpolation between closest ranks."""
    if not values:
        raise ValueError("percentile of an empty series")
    if not 0 <= p <= 100:
        raise ValueError(f"percentile {p} is outside 0..100")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def stalls(values: list[float], fraction: float = STALL_FRACTION) -> int:
    """Seconds strictly below ``fraction`` of the median (of the mean when the median is 0)."""
    if not values:
        return 0
    limit = (statistics.median(values) or statistics.fmean(values)) * fraction
    return sum(1 for value in values if value < limit)


def consistency(series: Iterable[float | None]) -> Consistency | None:
    """The consistency figures of a per-second series; None when it has no points.

    Missing seconds (None) are skipped; a NaN or infinite value is an error.
    """
    values = [float(v) for v in series if v is not None]
    if any(not math.isfinite(v) for v in values):
        raise ValueError("a per-second series holds a NaN or infinite value")
    if not values:
        return None
    mean = statistics.fmean(values)
    stddev = statistics.stdev(values) if len(values) >= 2 else None
    cv = stddev / mean * 100.0 if stddev is not None and mean != 0 else None
    return Consistency(
        n=len(values),
        mean=mean,
        stddev=stddev,
        cv=cv,
        min=min(values),
        max=max(values),
        p1=percentile(values, 1),
        p99=percentile(values, 99),
        median=statistics.median(values),
        stalls=stalls(values),
    )


def metric_name(quantity: str, stat: str) -> str:
    """``ps_iops_stddev``: per-second IOPS, standard deviation."""
    return f"ps_{quantity}_{stat}"


def consistency_samples(
    workload: str,
    quantity: str,
    series: Iterable[float | None],
    labels: dict[str, str] | None = None,
    interval_s: float = 1.0,
) -> list[Sample]:
    """Samples ``ps_<quantity>_<stat>`` for one series (``quantity`` is ``iops`` or ``mbps``).

    Every sample carries ``interval_s``; with no points every value is None (not
    measured, never 0), so a report shows "n/a" rather than a false zero.
    """
    if quantity not in QUANTITIES:
        raise ValueError(f"unknown per-second quantity {quantity!r}; known: {', '.join(QUANTITIES)}")
    unit = QUANTITIES[quantity]
    tagged = {**(labels or {}), "interval_s": f"{interval_s:g}"}
    figures = consistency(series)
    samples = []
    for stat in STATS:
        value = None if figures is None else getattr(figures, stat)
        samples.append(
            Sample(
                workload,
                metric_name(quantity, stat),
                None if value is None else float(value),
                STAT_UNITS.get(stat, unit),
                labels=dict(tagged),
            )
        )
    return samples


def _spec(quantity: str, stat: str) -> MetricSpec:
    """The catalog entry of ``ps_<quantity>_<stat>``: spread and stalls are better low, the rest high."""
    name, unit = {"iops": "IOPS", "mbps": "throughput"}[quantity], STAT_UNITS.get(stat, QUANTITIES[quantity])
    if stat == "stalls":
        return metric(
            metric_name(quantity, stat), f"Stalls (seconds under half the median {name})", unit, "mean", "fewer/more"
        )
    spread = {"stddev": "stddev", "cv": "CV (stddev/mean)"}.get(stat)
    return metric(
        metric_name(quantity, stat),
        f"Per-second {name} {spread or stat}",
        unit,
        "mean",
        "more consistent/less consistent" if spread else "higher/lower",
    )


# Every figure of every per-second quantity (paper 004), in the order consistency_samples reports them.
METRICS = tuple(_spec(quantity, stat) for quantity in QUANTITIES for stat in STATS)
