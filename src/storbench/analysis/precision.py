"""``--repeat auto``'s stopping rule: more rounds until every workload's headline is known well enough.

A workload's headline is the first metric it leads with (``Workload.headline``) that its windows recorded
without labels. One configuration: the 95% interval of that metric's mean, relative, on the log scale
(:func:`~storbench.analysis.stats.relative_ci_halfwidth`). Interleaved configurations: the 95% interval of the
paired ratio of each configuration to the first, round by round (:func:`~storbench.analysis.stats.paired_ratio_ci`),
which is what ``compare`` will test. The rounds stop once every such half-width is within :data:`PRECISION`, as
hyperfine stops between ``--min-runs`` and ``--max-runs``.
"""

from __future__ import annotations

import math
from typing import Any

from storbench.analysis.metrics import headline
from storbench.analysis.stats import paired_ratio_ci, relative_ci_halfwidth

PRECISION = 0.05  # the 95% interval within ±5%: a difference of 10% is then told from none


def _values(samples_by_rep: dict[int, list[Any]], metric: str) -> dict[int, float]:
    return {
        rep: s.value
        for rep, samples in samples_by_rep.items()
        for s in samples
        if s.metric == metric and not s.labels and s.value is not None
    }


def _headline_metric(workload: str, samples_by_rep: dict[int, list[Any]]) -> str | None:
    recorded = {
        s.metric for samples in samples_by_rep.values() for s in samples if not s.labels and s.value is not None
    }
    return next((m for m in (*headline(workload), "completion_time") if m in recorded), None)


def half_width(low: float, high: float) -> float:
    """A ratio interval's half-width as a factor - 1 (symmetric on the log scale)."""
    return math.sqrt(high / low) - 1.0


def enough(repetition: int, point: Any, recorded: dict[tuple[int, str, str], dict[int, list[Any]]]) -> str | None:
    """Why the rounds may stop now (every headline's interval within PRECISION), or None to go on."""
    configs = sorted({k for k, _, text in recorded if text == point.text})
    workloads = list(dict.fromkeys(w for _, w, text in recorded if text == point.text))
    widest: tuple[float, str] = (0.0, "")
    for workload in workloads:
        first = recorded[(configs[0], workload, point.text)]
        metric = _headline_metric(workload, first)
        if metric is None:
            return None
        base = _values(first, metric)
        for k in configs[1:] or [configs[0]]:
            if k == configs[0]:
                width = relative_ci_halfwidth(list(base.values()))
            else:
                other = _values(recorded[(k, workload, point.text)], metric)
                reps = sorted(set(base) & set(other))
                ci = paired_ratio_ci([other[r] for r in reps], [base[r] for r in reps])
                width = None if ci is None else half_width(*ci)
            if width is None or width > PRECISION:
                return None
            widest = max(widest, (width, f"{workload} {metric.replace('_', ' ')}"))
    return f"every headline's 95% interval within ±{PRECISION:.0%} (widest: {widest[1]}, ±{widest[0]:.1%})"
