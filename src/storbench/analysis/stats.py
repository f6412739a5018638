"""Descriptive statistics, t-tests, confidence intervals on ratios and false-discovery control,
in the standard library only.

Standard library only, no scipy: the wheel must stay light (scipy and numpy are tens of MB and a
compiled build per platform, for a handful of functions), and every figure here is a few lines of
well-known numerics that the tests check against published tables.

The Student t distribution is evaluated through the regularized incomplete beta
function, computed with ``math.lgamma`` and the Lentz continued fraction
(Numerical Recipes §6.4): for ``t`` with ``df`` degrees of freedom,
``P(|T| > |t|) = I_x(df/2, 1/2)`` with ``x = df / (df + t²)``. Its quantile
(:func:`t_ppf`) is Newton's method on that CDF from a Cornish–Fisher start, kept inside
a bisection bracket.

What ``compare`` tests (:func:`ratio_test`):

* **paired** (runs of one interleaved experiment, repetition i of each made in the same round):
  a one-sample t-test of the log ratios ``log(new_i / old_i)``; the 95% CI on the ratio is
  ``exp(mean ± t_{0.975,n-1}·se)`` (a ratio of geometric means). Pairing removes what the
  rounds share (a machine that drifts, a cache that warms) from the comparison.
* **Welch** otherwise: Welch's unequal-variance t-test on the raw values, as before, and
  Fieller's interval for the ratio of the means (:func:`fieller_ratio_ci`). Raw values, not
  logs: the aggregate a report shows is an arithmetic mean (or a maximum), so the ratio of
  arithmetic means is the quantity the delta stands for; logs would test the ratio of
  geometric means instead, which differs from it when the two runs' spreads differ, and
  would refuse zeros. Fieller's interval inverts exactly the Welch statistic
  (``(x̄n - ρ x̄o)² ≤ t²(s²n/nn + ρ² s²o/no)``), so it excludes 1 exactly when Welch's
  p < 0.05: the interval and the test never disagree. It is unbounded when the baseline's
  mean is not itself distinguishable from 0 (then ``None``).
* The **minimum detectable difference** (MDE) at alpha 0.05 and 80% power is
  ``exp((t_{0.975,df} + t_{0.8,df})·se_log) - 1`` with ``se_log`` the standard error of the
  log ratio: of the mean log ratio for a paired test, by the delta method
  ``sqrt(s²n/(nn x̄n²) + s²o/(no x̄o²))`` for Welch (df: Welch's).

Across the rows of one compare, :func:`benjamini_hochberg` turns raw p-values into q-values.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Iterable, Sequence
from storbench.analysis.student_t import t_ppf, t_sf_two_sided


@dataclass(frozen=True)
class Summary:
    """Figures of the non-``None`` values of one series; every field is ``None`` when there are none."""

    n: int
    min: float | None
    median: float | None
    max: float | None
    mean: float | None
    stdev: float | None  # sample standard deviation (n - 1); None below two values


def _variance(xs: Sequence[float]) -> float:
    """Sample variance (n - 1) in floats, two-pass (``statistics.variance`` is exact in fractions, and slow)."""
    m = math.fsum(xs) / len(xs)
    return math.fsum((x - m) * (x - m) for x in xs) / (len(xs) - 1)


def clean(values: Iterable[float | None]) -> list[float]:
    """The values that were measured (``None`` means not measured and is dropped)."""
    return [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]


def summarize(values: Iterable[float | None]) -> Summary:
    data = clean(values)
    if not data:
        return Summary(0, None, None, None, None, None)
    return Summary(
        n=len(data),
        min=min(data),
        median=statistics.median(data),
        max=max(data),
        mean=statistics.fmean(data),
        stdev=statistics.stdev(data) if len(data) > 1 else None,
    )


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
    qa, qb = _variance(xs) / len(xs), _variance(ys) / len(ys)
    se2 = qa + qb
    if se2 <= 0.0 or math.sqrt(se2) <= 1e-12 * max(abs(ma), abs(mb), 1e-300):
        same = math.isclose(ma, mb, rel_tol=1e-12, abs_tol=0.0) or ma == mb
        return TTest(
            0.0 if same else math.copysign(math.inf, ma - mb), float(len(xs) + len(ys) - 2), 1.0 if same else 0.0
        )
    t = (ma - mb) / math.sqrt(se2)
    df = se2 * se2 / (qa * qa / (len(xs) - 1) + qb * qb / (len(ys) - 1))
    return TTest(t, df, t_sf_two_sided(t, df))


def benjamini_hochberg(p_values: Sequence[float | None]) -> list[float | None]:
    """Benjamini–Hochberg adjusted p-values (q-values), in the input's order; ``None`` stays ``None``.

    With m p-values sorted ascending, ``q_(k) = min_{j >= k} min(1, m·p_(j) / j)``; rejecting every
    hypothesis with q < alpha controls the false discovery rate at alpha (for independent or
    positively dependent tests). Under the complete null (an A/A compare: nothing differs) every
    rejection is false, so FDR = P(any rejection): BH then keeps the chance of ANY false
    "significant" row at alpha, as Bonferroni/Holm would, but with real differences present it
    rejects far more than Holm, which keeps the family-wise rate and so loses power with every
    metric added; storage metrics move together (throughput, latency, time), which BH tolerates.
    """
    indexed = [(p, i) for i, p in enumerate(p_values) if p is not None]
    m = len(indexed)
    out: list[float | None] = [None] * len(p_values)
    running = 1.0
    for rank, (p, i) in reversed(list(enumerate(sorted(indexed), 1))):
        running = min(running, p * m / rank)
        out[i] = min(1.0, max(p, running))  # q >= p always; max() only undoes rounding (p·m/m)
    return out


@dataclass(frozen=True)
class RatioTest:
    """A compared sample against a baseline: the test, and the 95% CI on the ratio of the tested quantity.

    ``test`` is "paired" (one-sample t on the log ratios of paired repetitions: the ratio is of geometric
    means) or "welch" (Welch on the raw values: the ratio is of arithmetic means, Fieller's interval).
    ``ci_low``/``ci_high`` are ``None`` when the interval is unbounded (Fieller, a baseline mean not
    distinguishable from 0). ``mde_pct``: the smallest change (percent, on the ratio) this test detects
    with 80% power at alpha 0.05; ``None`` when the log scale is undefined (a non-positive mean).
    """

    test: str
    t: float
    df: float
    p_value: float
    ratio: float | None  # the tested quantity's ratio (new/old)
    ci_low: float | None
    ci_high: float | None
    mde_pct: float | None
    n: int  # pairs (paired) or the smaller side's values (welch)


def mde_pct(se_log: float, df: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """The minimum detectable difference in percent: ``exp((t_{1-α/2,df} + t_{power,df})·se_log) - 1``."""
    return math.expm1((t_ppf(1.0 - alpha / 2.0, df) + t_ppf(power, df)) * se_log) * 100.0


def _positive_pairs(new: Sequence[float | None], old: Sequence[float | None]) -> list[tuple[float, float]]:
    pairs = []
    for a, b in zip(new, old):
        if a is None or b is None or math.isnan(a) or math.isnan(b) or a <= 0 or b <= 0:
            continue
        pairs.append((float(a), float(b)))
    return pairs


def _log_mean_ci(logs: list[float], level: float = 0.95) -> tuple[float, float, float, float]:
    """(mean, se, df, half-width) of the mean of ``logs`` (at least two values)."""
    n = len(logs)
    mean = statistics.fmean(logs)
    se = math.sqrt(_variance(logs) / n)
    df = float(n - 1)
    return mean, se, df, t_ppf(0.5 + level / 2.0, df) * se


def paired_log_test(new: Sequence[float | None], old: Sequence[float | None], min_pairs: int = 3) -> RatioTest | None:
    """Paired t-test of ``log(new_i / old_i)`` (same index = same round); ``None`` below ``min_pairs``
    usable pairs (a pair with a missing or non-positive value is dropped). Zero spread of the log
    ratios degenerates as Welch does: p is 0 if they differ from 0, else 1, and the CI is the point."""
    pairs = _positive_pairs(new, old)
    if len(pairs) < max(2, min_pairs):
        return None
    logs = [math.log(a / b) for a, b in pairs]
    mean, se, df, half = _log_mean_ci(logs)
    ratio = math.exp(mean)
    if se <= 1e-12 * max(1.0, abs(mean)):
        same = abs(mean) <= 1e-12
        return RatioTest(
            "paired",
            0.0 if same else math.copysign(math.inf, mean),
            df,
            1.0 if same else 0.0,
            ratio,
            ratio,
            ratio,
            0.0,
            len(pairs),
        )
    t = mean / se
    return RatioTest(
        "paired",
        t,
        df,
        t_sf_two_sided(t, df),
        ratio,
        math.exp(mean - half),
        math.exp(mean + half),
        mde_pct(se, df),
        len(pairs),
    )


def fieller_ratio_ci(
    new: Sequence[float | None], old: Sequence[float | None], df: float | None = None, level: float = 0.95
) -> tuple[float, float] | None:
    """Fieller's confidence interval for ``mean(new) / mean(old)`` of two independent samples.

    With ``qn = s²n/nn``, ``qo = s²o/no`` and ``t = t_{(1+level)/2, df}`` (df: Welch's unless given), the
    interval is the ρ with ``(x̄n - ρ x̄o)² <= t² (qn + ρ² qo)``, a quadratic in ρ. ``None`` when it is not a
    bounded interval (``x̄o² <= t² qo``: the baseline mean is not distinguishable from 0) or with fewer
    than two values on a side. Zero variance on both sides gives the point ``x̄n / x̄o``.
    """
    xs, ys = clean(new), clean(old)
    if len(xs) < 2 or len(ys) < 2:
        return None
    mn, mo = statistics.fmean(xs), statistics.fmean(ys)
    qn, qo = _variance(xs) / len(xs), _variance(ys) / len(ys)
    if mo == 0:
        return None
    if qn + qo <= 0:
        return (mn / mo, mn / mo)
    if df is None:
        df = (qn + qo) ** 2 / (qn * qn / (len(xs) - 1) + qo * qo / (len(ys) - 1))
    t2 = t_ppf(0.5 + level / 2.0, df) ** 2
    a = mo * mo - t2 * qo
    if a <= 0:
        return None
    b = -2.0 * mn * mo
    c = mn * mn - t2 * qn
    disc = b * b - 4.0 * a * c
    root = math.sqrt(max(0.0, disc))
    return ((-b - root) / (2.0 * a), (-b + root) / (2.0 * a))


def welch_ratio_test(new: Sequence[float | None], old: Sequence[float | None]) -> RatioTest | None:
    """Welch's t-test on the raw values (:func:`welch_t_test`), with Fieller's 95% CI on the ratio of the means
    (at Welch's df, so 1 is outside it exactly when p < 0.05) and the MDE from the delta-method log-ratio se."""
    test = welch_t_test(new, old)
    if test is None:
        return None
    xs, ys = clean(new), clean(old)
    mn, mo = statistics.fmean(xs), statistics.fmean(ys)
    ratio = mn / mo if mo != 0 else None
    ci = fieller_ratio_ci(xs, ys, df=test.df)
    mde = None
    if mn > 0 and mo > 0:
        se_log = math.sqrt(_variance(xs) / (len(xs) * mn * mn) + _variance(ys) / (len(ys) * mo * mo))
        mde = mde_pct(se_log, test.df) if se_log > 0 else 0.0
    return RatioTest(
        "welch",
        test.t,
        test.df,
        test.p_value,
        ratio,
        ci[0] if ci else None,
        ci[1] if ci else None,
        mde,
        min(len(xs), len(ys)),
    )


def ratio_test(
    new: Sequence[float | None], old: Sequence[float | None], paired: bool, min_pairs: int = 3
) -> RatioTest | None:
    """The paired log-ratio test when ``paired`` and at least ``min_pairs`` positive pairs exist, else Welch."""
    if paired:
        test = paired_log_test(new, old, min_pairs)
        if test is not None:
            return test
    return welch_ratio_test(new, old)


def relative_ci_halfwidth(values: Sequence[float | None], level: float = 0.95) -> float | None:
    """The half-width of the 95% CI of the mean of ``values``, relative to it, on the log scale:
    ``exp(t_{0.975,n-1}·sd(log v)/sqrt(n)) - 1`` (0.02: the mean is known to within a factor 1.02).

    The log scale because a stopping rule asks for relative precision: it is free of the unit, symmetric for
    up and down (a factor), and the paired test that interleaved runs get works on logs too. ``None`` with
    fewer than two values or any measured value <= 0 (no log); missing values (``None``) are dropped.
    """
    data = clean(values)
    if len(data) < 2 or any(v <= 0 for v in data):
        return None
    _, _, _, half = _log_mean_ci([math.log(v) for v in data], level)
    return math.expm1(half)


def paired_ratio_ci(
    a: Sequence[float | None], b: Sequence[float | None], level: float = 0.95
) -> tuple[float, float] | None:
    """The 95% CI on the ratio ``a/b`` of paired values (index i of each from the same round):
    ``exp(mean ± t_{0.975,n-1}·se)`` of ``log(a_i/b_i)``. Pairs with a missing or non-positive value are
    dropped; ``None`` with fewer than two pairs left."""
    pairs = _positive_pairs(a, b)
    if len(pairs) < 2:
        return None
    mean, _, _, half = _log_mean_ci([math.log(x / y) for x, y in pairs], level)
    return (math.exp(mean - half), math.exp(mean + half))
