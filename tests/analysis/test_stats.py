import math

import pytest

from storbench.analysis.stats import aggregate, summarize, welch_t_test
from storbench.analysis.student_t import betainc, t_cdf, t_sf_two_sided


def _t_pdf(x: float, df: float) -> float:
    return (
        math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2))
        / math.sqrt(df * math.pi)
        * (1 + x * x / df) ** (-(df + 1) / 2)
    )


def _p_by_integration(t: float, df: float, steps: int = 20000) -> float:
    """Two-sided p by Simpson's rule over the t density: independent of the incomplete beta code."""
    h = abs(t) / steps
    total = _t_pdf(0, df) + _t_pdf(abs(t), df)
    total += sum((4 if i % 2 else 2) * _t_pdf(i * h, df) for i in range(1, steps))
    return 1 - 2 * total * h / 3


def test_welch_reference_example():
    test = welch_t_test([1, 2, 3, 4, 5], [3, 4, 5, 6, 7])
    assert test.t == pytest.approx(-2.0)
    assert test.df == pytest.approx(8.0)
    assert test.p_value == pytest.approx(0.0805162, abs=1e-6)  # R: t.test(1:5, 3:7) p-value = 0.08052


def test_welch_unequal_variances_by_hand():
    # mean 12 (var 4) vs mean 30 (var 100), n = 3 each:
    # se² = 4/3 + 100/3, t = -18 / sqrt(104/3), df = (104/3)² / ((4/3)²/2 + (100/3)²/2)
    test = welch_t_test([10, 12, 14], [20, 30, 40])
    se2 = 104 / 3
    assert test.t == pytest.approx(-18 / math.sqrt(se2))
    assert test.df == pytest.approx(se2**2 / ((4 / 3) ** 2 / 2 + (100 / 3) ** 2 / 2))
    assert test.df == pytest.approx(2.1598, abs=1e-4)
    assert test.p_value == pytest.approx(_p_by_integration(test.t, test.df), abs=1e-7)
    assert 0.05 < test.p_value < 0.1


@pytest.mark.parametrize(
    "t, df, p",
    [
        (12.706, 1, 0.05),
        (4.303, 2, 0.05),
        (2.228, 10, 0.05),
        (2.086, 20, 0.05),
        (2.845, 20, 0.01),
        (1.96, 1e6, 0.05),
        (3.169, 10, 0.01),
    ],
)
def test_t_table_critical_values(t, df, p):
    assert t_sf_two_sided(t, df) == pytest.approx(p, abs=2e-4)
    assert t_sf_two_sided(-t, df) == pytest.approx(p, abs=2e-4)


@pytest.mark.parametrize("t", [0.1, 0.5, 1.0, 3.0, 25.0])
def test_t_cdf_closed_forms(t):
    # df = 1 is the Cauchy distribution; df = 2 has CDF 1/2 + t / (2 sqrt(2 + t²)).
    assert t_cdf(t, 1) == pytest.approx(0.5 + math.atan(t) / math.pi, abs=1e-12)
    assert t_cdf(-t, 2) == pytest.approx(0.5 - t / (2 * math.sqrt(2 + t * t)), abs=1e-12)


@pytest.mark.parametrize("t, df", [(0.7, 3.5), (2.2, 7.3), (5.0, 4.0), (1.3, 30.0)])
def test_t_tail_matches_numeric_integration(t, df):
    assert t_sf_two_sided(t, df) == pytest.approx(_p_by_integration(t, df), abs=1e-7)


def test_betainc_edges_and_symmetry():
    assert betainc(2, 3, 0) == 0 and betainc(2, 3, 1) == 1
    assert betainc(2.5, 1.5, 0.3) == pytest.approx(1 - betainc(1.5, 2.5, 0.7), abs=1e-12)
    assert betainc(1, 1, 0.37) == pytest.approx(0.37)  # the uniform distribution


def test_welch_degenerate_and_too_small():
    assert welch_t_test([1.0], [2.0, 3.0]) is None
    assert welch_t_test([5, 5, 5], [5, 5, 5]).p_value == 1.0
    different = welch_t_test([5, 5, 5], [7, 7, 7])
    assert different.p_value == 0.0 and different.t == -math.inf
    assert welch_t_test([1, None, 2, 3], [1, 2, 3]).p_value == pytest.approx(1.0)


def test_summary_and_aggregation_ignore_none():
    s = summarize([3.0, None, 1.0, 2.0])
    assert (s.n, s.min, s.median, s.max, s.mean) == (3, 1.0, 2.0, 3.0, 2.0)
    assert s.stdev == pytest.approx(1.0)
    assert summarize([None, None]).n == 0 and summarize([None]).mean is None
    assert aggregate([1, None, 5], "max") == 5
    assert aggregate([1, None, 5], "mean") == 3
    assert aggregate([1, 5], "sum") == 6 and aggregate([4, 1], "min") == 1
    assert aggregate([None], "max") is None
    with pytest.raises(ValueError):
        aggregate([1], "mode")
