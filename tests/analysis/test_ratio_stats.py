"""Student t quantiles, the CIs on ratios (paired log ratios, Fieller), the MDE, Benjamini–Hochberg and the
`--repeat auto` helpers, against published tables and by-hand figures."""

import math
import random
import statistics

import pytest

from storbench.analysis.student_t import t_cdf, t_ppf
from storbench.analysis.stats import (
    benjamini_hochberg,
    fieller_ratio_ci,
    paired_log_test,
    paired_ratio_ci,
    ratio_test,
    relative_ci_halfwidth,
    welch_ratio_test,
    welch_t_test,
)

# Published t table values (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2)
T975 = {1: 12.706205, 2: 4.302653, 4: 2.776445, 10: 2.228139, 30: 2.042272}
T80 = {4: 0.940965, 10: 0.879058}


@pytest.mark.parametrize(
    "p, df, expected",
    [
        (0.975, 2, 4.302653),
        (0.975, 4, 2.776445),
        (0.975, 10, 2.228139),
        (0.8, 4, 0.940965),
        (0.975, 1, 12.706205),
        (0.995, 10, 3.169273),
        (0.95, 30, 1.697261),
        (0.8, 10, 0.879058),
        (0.975, 1e6, 1.959966),
    ],
)
def test_t_quantiles_match_the_published_table(p, df, expected):
    assert t_ppf(p, df) == pytest.approx(expected, abs=2e-6)
    assert t_ppf(1 - p, df) == pytest.approx(-expected, abs=2e-6)


@pytest.mark.parametrize("p", [0.01, 0.3, 0.6, 0.9, 0.999])
def test_t_quantiles_closed_forms_and_inverse(p):
    assert t_ppf(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-9)  # Cauchy
    assert t_ppf(p, 2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-9)
    for df in (0.7, 2.3, 7.9, 55.0):
        assert t_cdf(t_ppf(p, df), df) == pytest.approx(p, abs=1e-10)
    assert t_ppf(0.5, 3) == 0.0
    with pytest.raises(ValueError):
        t_ppf(1.0, 3)


def test_paired_ci_by_hand():
    old = [100.0, 80.0, 120.0]
    new = [105.0, 84.8, 124.8]  # ratios 1.05, 1.06, 1.04
    logs = [math.log(1.05), math.log(1.06), math.log(1.04)]
    mean, sd = statistics.fmean(logs), statistics.stdev(logs)
    se = sd / math.sqrt(3)
    test = paired_log_test(new, old)
    assert test.test == "paired" and test.n == 3 and test.df == 2
    assert test.ratio == pytest.approx(math.exp(mean))
    assert test.ci_low == pytest.approx(math.exp(mean - 4.302653 * se), rel=1e-6)
    assert test.ci_high == pytest.approx(math.exp(mean + 4.302653 * se), rel=1e-6)
    assert (test.ci_low, test.ci_high) == pytest.approx((1.0254, 1.0751), abs=1e-4)
    assert test.t == pytest.approx(mean / se)
    assert test.mde_pct == pytest.approx(math.expm1((4.302653 + t_ppf(0.8, 2)) * se) * 100, rel=1e-6)
    assert paired_ratio_ci(new, old) == pytest.approx((test.ci_low, test.ci_high))


def test_paired_mde_by_hand_at_four_df():
    old = [10.0, 11.0, 9.0, 10.5, 9.5]
    new = [10.3, 11.5, 9.1, 10.9, 9.6]
    logs = [math.log(a / b) for a, b in zip(new, old)]
    se = statistics.stdev(logs) / math.sqrt(5)
    test = paired_log_test(new, old)
    assert test.mde_pct == pytest.approx((math.exp((2.776445 + 0.940965) * se) - 1) * 100, rel=1e-5)


def test_paired_drops_missing_and_non_positive_pairs_and_needs_three():
    test = paired_log_test([105, None, 106, 104, 0.0], [100, 100, 100, 100, 100])
    assert test.n == 3
    assert paired_log_test([105, None, 106], [100, 100, 100]) is None
    # too few pairs for the paired test: Welch on the raw values
    fallback = ratio_test([105, 106, 104, None], [None, 100, 101, 99], paired=True)
    assert fallback.test == "welch"
    assert ratio_test([105, 106, 104], [100, 101, 99], paired=True).test == "paired"
    assert ratio_test([105, 106, 104], [100, 101, 99], paired=False).test == "welch"


def test_paired_degenerate_spread():
    exact = paired_log_test([105.0, 210.0, 52.5], [100.0, 200.0, 50.0])
    assert exact.p_value == 0.0 and exact.ci_low == pytest.approx(1.05) and exact.ci_high == pytest.approx(1.05)
    same = paired_log_test([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    assert same.p_value == 1.0 and same.ratio == 1.0


def test_fieller_interval_by_hand():
    # means 105 and 100, variances 1 and 1, n = 3: qn = qo = 1/3, Welch df = 4
    t2 = 2.776445**2
    a, b, c = 100**2 - t2 / 3, -2 * 105 * 100, 105**2 - t2 / 3
    root = math.sqrt(b * b - 4 * a * c)
    low, high = fieller_ratio_ci([105, 106, 104], [100, 101, 99])
    assert low == pytest.approx((-b - root) / (2 * a), rel=1e-6)
    assert high == pytest.approx((-b + root) / (2 * a), rel=1e-6)
    test = welch_ratio_test([105, 106, 104], [100, 101, 99])
    assert (test.test, test.ratio, test.df) == ("welch", pytest.approx(1.05), pytest.approx(4.0))
    assert (test.ci_low, test.ci_high) == pytest.approx((low, high))
    # delta-method log se: sqrt(1/(3·105²) + 1/(3·100²))
    se_log = math.sqrt(1 / (3 * 105**2) + 1 / (3 * 100**2))
    assert test.mde_pct == pytest.approx(math.expm1((2.776445 + 0.940965) * se_log) * 100, rel=1e-5)


def test_fieller_excludes_one_exactly_when_welch_rejects():
    rng = random.Random(7)
    seen = {True: 0, False: 0}
    for _ in range(300):
        old = [rng.gauss(100, 8) for _ in range(4)]
        new = [rng.gauss(100 + rng.choice((0, 8, 15)), 8) for _ in range(5)]
        p = welch_t_test(new, old).p_value
        low, high = fieller_ratio_ci(new, old)
        excludes = not low <= 1.0 <= high
        assert excludes == (p < 0.05), (p, low, high)
        seen[excludes] += 1
    assert seen[True] > 20 and seen[False] > 20


def test_fieller_unbounded_when_the_baseline_is_not_away_from_zero():
    assert fieller_ratio_ci([5.0, 6.0, 7.0], [-1.0, 0.2, 0.5]) is None
    test = welch_ratio_test([5.0, 6.0, 7.0], [-1.0, 0.2, 0.5])
    assert test.ci_low is None and test.ci_high is None and test.mde_pct is None


def test_benjamini_hochberg_known_values():
    assert benjamini_hochberg([0.01, 0.04, 0.03, 0.005, None]) == pytest.approx([0.02, 0.04, 0.04, 0.02, None])
    assert benjamini_hochberg([]) == []
    assert benjamini_hochberg([0.5, 0.9]) == pytest.approx([0.9, 0.9])  # monotone: min over the larger ranks
    assert benjamini_hochberg([0.8, 0.9, 0.95]) == pytest.approx([0.95, 0.95, 0.95])
    # Benjamini & Hochberg (1995), section 4: 15 p-values, at 0.05 the four smallest are rejected
    # (Bonferroni rejects three)
    p = [
        0.0001,
        0.0004,
        0.0019,
        0.0095,
        0.0201,
        0.0278,
        0.0298,
        0.0344,
        0.0459,
        0.3240,
        0.4262,
        0.5719,
        0.6528,
        0.7590,
        1.000,
    ]
    q = benjamini_hochberg(p)
    assert [v < 0.05 for v in q] == [True] * 4 + [False] * 11
    assert q[3] == pytest.approx(0.0095 * 15 / 4)
    assert q[4] == pytest.approx(0.0201 * 15 / 5)
    assert q[5] == pytest.approx(0.0298 * 15 / 7)  # step-up: the smaller of its own 0.0695 and a larger rank's
    assert sum(v * 15 < 0.05 for v in p) == 3


def test_relative_ci_halfwidth_by_hand():
    values = [10.0, 11.0, 12.0, 10.5]
    logs = [math.log(v) for v in values]
    half = t_ppf(0.975, 3) * statistics.stdev(logs) / 2
    assert relative_ci_halfwidth(values) == pytest.approx(math.expm1(half))
    assert relative_ci_halfwidth([10.0, None, 10.0]) == 0.0
    assert relative_ci_halfwidth([10.0]) is None
    assert relative_ci_halfwidth([10.0, 0.0, 3.0]) is None
    tighter = relative_ci_halfwidth([10.0, 10.1, 9.9, 10.0, 10.05, 9.95])
    assert 0 < tighter < relative_ci_halfwidth(values)


def test_paired_ratio_ci_needs_two_pairs():
    assert paired_ratio_ci([1.0], [2.0]) is None
    assert paired_ratio_ci([1.0, None, 2.0], [2.0, 1.0, None]) is None
    low, high = paired_ratio_ci([2.0, 2.2], [1.0, 1.0])
    mean, se = math.log(2.2**0.5 * 2**0.5), abs(math.log(2.2) - math.log(2.0)) / 2
    assert (low, high) == pytest.approx((math.exp(mean - 12.706205 * se), math.exp(mean + 12.706205 * se)), rel=1e-6)
