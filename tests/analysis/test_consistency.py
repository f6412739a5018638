"""Consistency of per-second series (paper 004) on synthetic series with known answers, and its wording."""

import json
import math

import pytest

from storbench.analysis import wording
from storbench.analysis.compare import compare_runs
from storbench.results.consistency import consistency, consistency_samples, percentile, stalls
from storbench.analysis.metrics import spec_for
from storbench.report import render
from tests.analysis.factory import make_run


def test_flat_series_has_no_spread_and_no_stalls():
    c = consistency([10.0] * 10)
    assert (c.n, c.mean, c.stddev, c.cv, c.min, c.max, c.p1, c.p99, c.median, c.stalls) == (
        10,
        10.0,
        0.0,
        0.0,
        10.0,
        10.0,
        10.0,
        10.0,
        10.0,
        0,
    )


def test_one_to_five_by_hand():
    c = consistency([3, 1, 5, 2, 4])  # order does not matter for the figures
    assert c.mean == 3.0
    assert c.stddev == pytest.approx(math.sqrt(2.5))  # sample stddev (n - 1), as rados bench prints
    assert c.cv == pytest.approx(math.sqrt(2.5) / 3 * 100)
    assert (c.min, c.max, c.median) == (1.0, 5.0, 3.0)
    assert c.p1 == pytest.approx(1.04)  # rank 0.04 between 1 and 2
    assert c.p99 == pytest.approx(4.96)
    assert c.stalls == 1  # only 1 is below half the median (1.5)


def test_stalls_are_seconds_strictly_below_half_the_median():
    series = [100.0] * 8 + [10.0, 40.0, 50.0]
    assert stalls(series) == 2  # 50 is exactly half of 100: not a stall
    assert consistency(series).stalls == 2
    assert stalls([]) == 0
    # more than half the seconds stalled (median 0): half the mean (10/6) is the reference
    assert stalls([0.0, 0.0, 0.0, 0.0, 5.0, 5.0]) == 4
    assert stalls([0.0, 0.0, 0.0]) == 0


def test_rados_bench_stddev_iops_is_the_sample_stddev_of_the_per_second_values():
    # rados bench 16.2 printed "Average IOPS: 126, Stddev IOPS: 19.532" for these seconds
    c = consistency([115, 160, 124, 119, 112])
    assert c.stddev == pytest.approx(19.532, abs=1e-3)
    assert c.mean == pytest.approx(126.0)


def test_short_empty_and_bad_series():
    one = consistency([7.0])
    assert (one.n, one.stddev, one.cv, one.p1, one.p99, one.stalls) == (1, None, None, 7.0, 7.0, 0)
    assert consistency([]) is None
    assert consistency([None, 4.0, None, 6.0]).n == 2  # missing seconds are skipped
    assert consistency([0.0, 0.0, 0.0]).cv is None  # mean 0: no coefficient of variation
    with pytest.raises(ValueError):
        consistency([1.0, float("nan")])
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        percentile([1.0], 101)
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5


def test_samples_name_every_figure_and_never_zero_for_missing():
    samples = {s.metric: s for s in consistency_samples("w", "iops", [1, 2, 3, 4, 5], {"dir": "write"})}
    assert sorted(samples) == sorted(
        f"ps_iops_{k}" for k in ("mean", "stddev", "cv", "min", "max", "p1", "p99", "stalls")
    )
    assert samples["ps_iops_cv"].unit == "%" and samples["ps_iops_stalls"].unit == "s"
    assert samples["ps_iops_mean"].unit == "IOPS" and samples["ps_iops_mean"].value == 3.0
    assert samples["ps_iops_stalls"].labels == {"dir": "write", "interval_s": "1"}
    empty = consistency_samples("w", "mbps", [])
    assert all(s.value is None for s in empty) and empty[0].unit == "MB/s"
    with pytest.raises(ValueError):
        consistency_samples("w", "bogus", [1.0])


def test_consistency_change_in_the_papers_words():
    stddev = spec_for("rados_stddev_iops")
    assert wording.delta_words(stddev, 1.0 / 10.0 - 1) == "10× more consistent"  # paper 004's headline
    assert wording.delta_words(stddev, 0.5 - 1) == "2.0× more consistent"
    assert wording.delta_words(stddev, 0.7 - 1) == "30% more consistent"  # under 2×: a percent
    assert wording.delta_words(stddev, 2.5 - 1) == "2.5× less consistent"
    assert wording.delta_words(stddev, 0.2) == "20% less consistent"
    assert wording.delta_words(spec_for("ps_iops_cv"), 0.05 / 0.5 - 1) == "10× more consistent"
    assert wording.delta_words(spec_for("rados_avg_iops"), 158 / 100 - 1) == "58% higher"  # the paper's 58%
    assert wording.delta_words(spec_for("ps_iops_stalls"), 1 / 4 - 1) == "75% fewer"
    assert wording.delta_words(stddev, -1.0) == "100% more consistent"  # a zero spread: no factor


def test_compare_shows_average_stddev_cv_and_stalls_for_two_runs():
    def values(avg, sd, stall):
        return {
            ("rados-bench-write", "rados_avg_iops"): [avg],
            ("rados-bench-write", "rados_stddev_iops"): [sd],
            ("rados-bench-write", "ps_iops_cv"): [sd / avg * 100],
            ("rados-bench-write", "ps_iops_stalls"): [stall],
        }

    base = make_run("cmr-xfs", values(100.0, 30.0, 12.0), run_id="20250101-120000-cmr-xfs-0001")
    new = make_run("smr-phalanx", values(158.0, 3.0, 0.0), run_id="20250101-130000-smr-phalanx-0002")
    comparison = compare_runs([base, new])
    rows = {r.metric: r for r in comparison.rows}
    assert rows["rados_avg_iops"].deltas[1].words == "58% higher"
    assert rows["rados_stddev_iops"].deltas[1].words == "10× more consistent"
    assert rows["ps_iops_cv"].deltas[1].words == "16× more consistent"  # 30% vs 1.9%
    assert rows["ps_iops_stalls"].deltas[1].words == "100% fewer"
    table = render(comparison, "table")
    for text in ("Average IOPS", "Stddev IOPS", "Per-second IOPS CV", "Stalls", "10× more consistent", "58% higher"):
        assert text in table, text
    headlines = " | ".join(h.text for h in comparison.headlines)
    assert "stddev IOPS 10× more consistent" in headlines
    for fmt in ("md", "csv", "html"):  # every exporter carries the paper's words
        assert "10× more consistent" in render(comparison, fmt), fmt
    data = json.loads(render(comparison, "json"))
    assert {"10× more consistent", "58% higher"} <= {d["words"] for r in data["rows"] for d in r["deltas"] if d}
