"""The skipping family without Spark: CSV refused with skipping on, and compare's sentence in paper 001's words."""

import pytest

from storbench.analysis.compare import compare_runs
from storbench.errors import InputError
from storbench.targets import parse_target
from storbench.workloads import get_workload
from tests.analysis.factory import make_run


def _params(**extra):
    workload = get_workload("skipping-point")
    return {p.name: p.default for p in workload.params} | extra


def test_skipping_on_csv_is_refused_in_one_line(tmp_path):
    # a target of the test's own: a fixed /tmp path failed the parse when anything else had made it a file
    workload, target = get_workload("skipping-join"), parse_target(f"file://{tmp_path}/target")
    with pytest.raises(InputError) as caught:
        workload.check_params(_params(format="csv"), target)
    text = str(caught.value)
    assert "\n" not in text and "skipping=on needs a format with statistics (parquet)" in text
    workload.check_params(_params(format="csv", skipping="off"), target)  # the CSV baseline runs


def test_compare_says_read_and_ran_together():
    off = make_run(
        "off",
        {
            ("skipping-join", "completion_time"): [6.0, 6.2, 5.9],
            ("skipping-join", "target_read_mb"): [14.0, 14.1, 13.9],
            ("skipping-point", "completion_time"): [2.0, 2.1, 2.0],
        },
    )
    on = make_run(
        "on",
        {
            ("skipping-join", "completion_time"): [1.0, 1.1, 0.9],
            ("skipping-join", "target_read_mb"): [1.0, 1.01, 0.99],
            ("skipping-point", "completion_time"): [1.5, 1.52, 1.49],
        },
    )
    texts = [h.text.split(" (95% CI ")[0] for h in compare_runs([off, on]).headlines]
    assert "on vs off: skipping-join read 14× fewer bytes and ran 6.0× faster" in texts
    assert not [t for t in texts if "Bytes read" in t or "skipping-join time to complete" in t], texts
    assert "on vs off: skipping-point time to complete 26% faster" in texts  # alone: as before


def test_an_ab_of_one_setting_is_said_as_the_compared_setting_not_as_not_comparable():
    """skipping off vs on differs in one choice, suite-wide and per workload: what is compared, not a fault; a
    number (a size) that differs, or two settings, stays NOT COMPARABLE."""
    from storbench.analysis.model import Comparison, Difference

    runs = [
        make_run("off", {("skipping-join", "completion_time"): [6.0]}),
        make_run("on", {("skipping-join", "completion_time"): [1.0]}),
    ]
    infos = compare_runs(runs).runs
    ab = Comparison(
        infos,
        [],
        [
            Difference("parameter", "skipping", ["off", "on"]),
            Difference("workload_parameter", "skipping-join.skipping", ["off", "on"]),
        ],
        [],
    )
    assert ab.comparable and ab.one_setting == "skipping"
    assert ab.warnings[0] == "the runs differ in one setting, the one compared: skipping: off (off) vs on (on)"
    for differences in (
        [Difference("parameter", "rows", [1000, 5])],
        [Difference("parameter", "skipping", ["off", "on"]), Difference("parameter", "committer", ["file", "magic"])],
    ):
        other = Comparison(infos, [], differences, [])
        assert not other.comparable and other.warnings[0].startswith("NOT COMPARABLE"), differences
