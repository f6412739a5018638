"""Descriptive statistics and Welch's two-sample t-test, in the standard library only.

The Student t distribution is evaluated through the regularized incomplete beta
function, computed with ``math.lgamma`` and the Lentz continued fraction
(Numerical Recipes §6.4): for ``t`` with ``df`` degrees of freedom,
``P(|T| > |t|) = I_x(df/2, 1/2)`` with ``x = df / (df + t²)``.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Iterable, Sequence

_EPS = 3e-16
_TINY = 1e-300
_MAX_ITER = 400


@dataclass(frozen=True)
class Summary:
    """Figures of the non-``None`` values of one series; every field is ``None`` when there are none."""

    n: int
    min: float | None
    median: float | None
    max: float | None
    mean: float | None
    stdev: float | None  # sample standard deviation (n - 1); None below two values


def clean(values: Iterable[float | None]) -> list[float]:
    """The values that were measured (``None`` means not measured and is dropped)."""
    return [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]


def summarize(values: Iterable[float | None]) -> Summary:
    data = clean(values)
    if not data:
        return Summary(0, None, None, None, None, None)
    return Summary(n=len(data), min=min(data), median=statistics.median(data), max=max(data),
                   mean=statistics.fmean(data), stdev=statistics.stdev(data) if len(data) > 1 else None)


def aggregate(values: Iterable[float | None], rule: str) -> float | None:
    """Aggregate by a metric's rule (``max``, ``min``, ``mean``, ``median`` or ``sum``); ``None`` when empty."""
    data = clean(values)
    if not data:
        return None
    if rule == "max":
        return max(data)
    if rule == "min":
        return min(data)
    if rule == "mean":
        return statistics.fmean(data)
    if rule == "median":
        return statistics.median(data)
    if rule == "sum":
        return math.fsum(data)
    raise ValueError(f"unknown aggregation rule {rule!r}")


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, _MAX_ITER + 1):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            return h
    return h  # converged to working precision for every df this tool meets


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) for a, b > 0 and 0 <= x <= 1."""
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"betainc: x={x} outside [0, 1]")
    if x in (0.0, 1.0):
        return x
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_sf_two_sided(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` (real, > 0) degrees of freedom."""
    if df <= 0:
        raise ValueError(f"t distribution: df={df} must be positive")
    if math.isinf(t):
        return 0.0
    return min(1.0, max(0.0, betainc(df / 2.0, 0.5, df / (df + t * t))))


def t_cdf(t: float, df: float) -> float:
    """P(T <= t) for Student's t with ``df`` degrees of freedom."""
    tail = t_sf_two_sided(t, df) / 2.0
    return 1.0 - tail if t > 0 else tail


@dataclass(frozen=True)
class TTest:
    t: float
    df: float
    p_value: float


def welch_t_test(a: Sequence[float | None], b: Sequence[float | None]) -> TTest | None:
    """Welch's unequal-variance two-sample t-test of mean(a) - mean(b), two-sided.

    ``None`` with fewer than two measured values on either side. When both samples
    have zero variance the test degenerates: p is 0 if the means differ, else 1.
    """
    xs, ys = clean(a), clean(b)
    if len(xs) < 2 or len(ys) < 2:
        return None
    ma, mb = statistics.fmean(xs), statistics.fmean(ys)
    qa, qb = statistics.variance(xs) / len(xs), statistics.variance(ys) / len(ys)
    se2 = qa + qb
    if se2 <= 0.0 or math.sqrt(se2) <= 1e-12 * max(abs(ma), abs(mb), 1e-300):
        same = math.isclose(ma, mb, rel_tol=1e-12, abs_tol=0.0) or ma == mb
        return TTest(0.0 if same else math.copysign(math.inf, ma - mb), float(len(xs) + len(ys) - 2),
                     1.0 if same else 0.0)
    t = (ma - mb) / math.sqrt(se2)
    df = se2 * se2 / (qa * qa / (len(xs) - 1) + qb * qb / (len(ys) - 1))
    return TTest(t, df, t_sf_two_sided(t, df))
