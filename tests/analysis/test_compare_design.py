"""Statistics that match the experiment design: paired tests for interleaved runs, Benjamini–Hochberg over a
compare's rows, the CI and MDE of every tested row, and the notes on runs made apart and cold first repetitions."""

import json
import math
import random
import statistics

import pytest

from storbench.analysis import wording
from storbench.analysis.compare import compare_runs
from storbench.analysis.student_t import t_ppf
from storbench.report import render
from tests.analysis.factory import make_run


def _experiment(*run_ids, eid="exp-1"):
    return {
        "id": eid,
        "design": "interleaved",
        "runs": list(run_ids),
        "labels": ["fa1", "fa2"],
        "order": [list(run_ids)] * 5,
    }


def interleaved(base_values, new_values, eid="exp-1", other_eid=None, **kwargs):
    ids = ("20250101-120000-fa1-aaaa", "20250101-120000-fa2-bbbb")
    a = make_run("fa1", base_values, run_id=ids[0], experiment=_experiment(*ids, eid=eid), **kwargs)
    b = make_run("fa2", new_values, run_id=ids[1], experiment=_experiment(*ids, eid=other_eid or eid), **kwargs)
    return compare_runs([a, b])


def row(comparison, workload, metric):
    [match] = [r for r in comparison.rows if r.workload == workload and r.metric == metric]
    return match


NOT_INTERLEAVED = "were made at different times, not interleaved"


def test_a_paired_ci_by_hand_and_the_headline_says_it():
    old = [100.0, 80.0, 120.0]
    new = [105.0, 84.8, 124.8]  # ratios 1.05, 1.06, 1.04
    c = interleaved({("fio-write", "fio_bw_mbps"): old}, {("fio-write", "fio_bw_mbps"): new})
    delta = row(c, "fio-write", "fio_bw_mbps").deltas[1]
    logs = [math.log(1.05), math.log(1.06), math.log(1.04)]
    mean, se = statistics.fmean(logs), statistics.stdev(logs) / math.sqrt(3)
    assert delta.test == "paired" and delta.df == 2
    assert delta.ci_low == pytest.approx(math.exp(mean - 4.302653 * se), rel=1e-6)
    assert delta.ci_high == pytest.approx(math.exp(mean + 4.302653 * se), rel=1e-6)
    assert delta.mde_pct == pytest.approx(math.expm1((4.302653 + t_ppf(0.8, 2)) * se) * 100, rel=1e-6)
    # interleaved: the change is the rounds' geometric mean ratio (the interval's centre), not the aggregates'
    assert delta.ratio == pytest.approx(math.exp(mean)) and delta.rel == pytest.approx(math.exp(mean) - 1)
    assert math.sqrt(delta.ci_low * delta.ci_high) == pytest.approx(delta.ratio)
    assert delta.q_value == pytest.approx(delta.p_value)  # one tested row: q = p
    assert delta.significance == wording.SIGNIFICANT
    [headline] = c.headlines
    detects = f"detects ≥{delta.mde_pct:.0f}%"  # the MDE checked by hand above: 3%
    assert detects == "detects ≥3%"
    assert headline.text == f"fa2 vs fa1: fio-write fio bandwidth 4% higher (95% CI +3% to +8%, paired, {detects})"
    assert headline.words == "4% higher" and headline.interval == f"95% CI +3% to +8%, paired, {detects}"
    assert not [w for w in c.warnings if NOT_INTERLEAVED in w]  # interleaved: no note
    data = json.loads(render(c, "json"))
    said = data["rows"][0]["deltas"][1]
    assert (said["test"], said["interval"]) == ("paired", f"95% CI +3% to +8%, paired, {detects}")
    assert said["ci_low"] == pytest.approx(delta.ci_low) and said["q_value"] == pytest.approx(delta.q_value)
    assert "fio bandwidth" in render(c, "table") and "4% higher * [+3%..+8%]" in render(c, "table")


def test_an_interleaved_change_is_the_rounds_own_not_one_repetition_s_outlier():
    """A maximum over repetitions lets one repetition's burst move the aggregate: 45 vs 30 MiB/s read 46% when one
    bw30 repetition caught +3.1%; the rounds' geometric mean keeps it to a third of that."""
    old = [32.42, 31.46, 31.46]  # max aggregates to 32.42
    new = [47.19, 47.19, 47.19]
    c = interleaved({("fio-write", "max_write_mbps"): old}, {("fio-write", "max_write_mbps"): new})
    delta = row(c, "fio-write", "max_write_mbps").deltas[1]
    assert round(47.19 / 32.42 - 1, 2) == 0.46  # what the aggregates would say
    assert delta.test == "paired" and delta.words == "48% higher"  # exp(mean log ratio) = 1.485
    apart = compare_runs(
        [
            make_run("fa1", {("fio-write", "max_write_mbps"): old}),
            make_run("fa2", {("fio-write", "max_write_mbps"): new}),
        ]
    )
    assert row(apart, "fio-write", "max_write_mbps").deltas[1].words == "45% higher"  # Welch: the paper's rule


def test_a_drift_both_sides_share_is_seen_by_the_paired_test_not_by_welch():
    drift = [0.80, 1.00, 1.20, 0.90, 1.10, 1.05]  # the machine of each round: both configurations feel it
    wobble = [1.004, 0.997, 1.002, 0.998, 1.003, 0.996]
    old = [100.0 * d for d in drift]
    new = [105.0 * d * w for d, w in zip(drift, wobble)]
    values = ({("g", "completion_time"): old}, {("g", "completion_time"): new})
    paired = row(interleaved(*values), "g", "completion_time").deltas[1]
    assert paired.test == "paired" and paired.significance == wording.SIGNIFICANT and paired.p_value < 1e-4
    assert paired.ci_low < 1.05 < paired.ci_high and paired.ci_high < 1.06
    apart = row(interleaved(*values, other_eid="exp-2"), "g", "completion_time").deltas[1]  # not one experiment
    assert apart.test == "welch" and apart.significance == wording.NOISE and apart.p_value > 0.3
    assert apart.ci_low < 1.0 < apart.ci_high
    assert paired.mde_pct < 1.0 < 10.0 < apart.mde_pct


def test_paired_falls_back_to_welch_with_fewer_than_three_pairs():
    # repetitions 1-3 of one, 3-5 of the other (the store lost some): one pair only
    old = {("g", "completion_time"): [10.0, 10.2, 9.9]}
    c = interleaved(old, {("g", "completion_time"): [None, None, 12.0, 12.1, 11.9]})
    delta = row(c, "g", "completion_time").deltas[1]
    assert delta.test == "welch" and delta.significance == wording.SIGNIFICANT
    # a non-positive value drops its pair: 2 left, Welch on the values
    c = interleaved({("g", "max_read_mbps"): [10.0, 0.0, 9.9, 10.1]}, {("g", "max_read_mbps"): [12.0, 12.5, 0.0, 12.2]})
    assert row(c, "g", "max_read_mbps").deltas[1].test == "welch"


def _noise_runs(seed, metrics=30, reps=5):
    rng = random.Random(seed)
    base = {(f"w{k}", "completion_time"): [rng.gauss(100, 5) for _ in range(reps)] for k in range(metrics)}
    new = {(f"w{k}", "completion_time"): [rng.gauss(100, 5) for _ in range(reps)] for k in range(metrics)}
    return make_run("a", base), make_run("b", new)


def test_an_a_a_compare_of_30_noisy_metrics_rarely_makes_a_headline():
    seeds = 200
    any_q = any_p = 0
    for seed in range(seeds):
        c = compare_runs(list(_noise_runs(seed)))
        deltas = [r.deltas[1] for r in c.rows]
        assert len(deltas) == 30 and all(d.p_value is not None and d.q_value >= d.p_value for d in deltas)
        assert c.tested == [0, 30]
        significant = [d for d in deltas if d.significance == wording.SIGNIFICANT]
        assert len(significant) == len([h for h in c.headlines])
        any_q += bool(significant)
        any_p += any(d.p_value < 0.05 for d in deltas)
    assert any_q / seeds <= 0.08, any_q
    assert any_p / seeds >= 0.6, any_p  # each row at 5% alone: 1 - 0.95^30 = 79% of A/A compares "find" something


def test_bh_keeps_a_real_difference_among_null_rows_and_drops_a_lucky_one():
    rng = random.Random(3)
    base = {(f"w{k}", "completion_time"): [rng.gauss(100, 5) for _ in range(5)] for k in range(20)}
    new = {(f"w{k}", "completion_time"): [rng.gauss(100, 5) for _ in range(5)] for k in range(20)}
    new[("w0", "completion_time")] = [v * 1.5 for v in base[("w0", "completion_time")]]  # a real change
    base[("w1", "completion_time")] = [95.0, 100.0, 105.0, 98.0, 102.0]  # a change p just under 0.05
    new[("w1", "completion_time")] = [102.0, 107.0, 112.0, 105.0, 108.0]
    c = compare_runs([make_run("a", base), make_run("b", new)])
    real, lucky = row(c, "w0", "completion_time").deltas[1], row(c, "w1", "completion_time").deltas[1]
    assert real.significance == wording.SIGNIFICANT
    assert 0.01 < lucky.p_value < 0.05 and lucky.q_value >= 0.05 and lucky.significance == wording.NOISE
    assert lucky.interval and lucky.marker == "~"
    assert [h.workload for h in c.headlines] == ["w0"]
    assert "over the 20 tested rows" in c.marker_legend and "Benjamini–Hochberg" in wording.MARKER_LEGEND


def test_runs_made_apart_get_the_note_only_when_a_row_is_significant():
    faster = {("g", "completion_time"): [8.0, 8.1, 7.9]}
    slow = {("g", "completion_time"): [10.0, 10.2, 9.9]}
    c = compare_runs([make_run("a", slow), make_run("b", faster)])
    [note] = [w for w in c.warnings if NOT_INTERLEAVED in w]
    assert note == (
        "runs a and b were made at different times, not interleaved: a change in the machine between "
        "them can look like a change in the storage (storbench run spark-transforms --target A --target B "
        "interleaves them)"
    )
    same = compare_runs([make_run("a", slow), make_run("b", slow)])
    assert not [w for w in same.warnings if NOT_INTERLEAVED in w]
    assert not [w for w in interleaved(slow, faster).warnings if NOT_INTERLEAVED in w]
    three = compare_runs([make_run("a", slow), make_run("b", faster), make_run("c", slow)])
    assert [w.split(" were")[0] for w in three.warnings if NOT_INTERLEAVED in w] == ["runs a and b"]


COLD = "first repetition took"


def test_a_cold_first_repetition_is_said_without_warmup():
    cold = {
        ("ycsb-a", "completion_time"): [11.6, 4.4, 7.1, 5.0, 6.2],
        ("join", "completion_time"): [5.0, 5.1, 4.9, 5.2],
    }
    c = compare_runs([make_run("a", cold)])
    assert [w for w in c.warnings if COLD in w] == [
        "run a: ycsb-a's first repetition took 11.6 s, the others 4.4–7.1 s: a cold start (JVM, caches) is averaged "
        "in; --warmup 1 runs an unrecorded first repetition"
    ]
    assert not [w for w in compare_runs([make_run("a", cold, warmup=1)]).warnings if COLD in w]
    pair = compare_runs([make_run("warm", {("join", "completion_time"): [5.0, 5.1, 4.9, 5.2]}), make_run("b", cold)])
    assert [w.split(":")[0] for w in pair.warnings if COLD in w] == ["run b"]


@pytest.mark.parametrize(
    "first, others",
    [
        (11.6, [4.4, 7.1]),  # two others: their spread means nothing
        (5.4, [5.0, 5.1, 5.05, 4.95]),  # beyond 3 sd but under 10% of their mean
        (8.0, [4.4, 7.1, 5.0, 8.5]),  # not the slowest
        (7.5, [4.0, 7.0, 5.0, 6.5]),  # slowest and 30% over their mean but within 3 sd of them
    ],
)
def test_no_cold_start_note_when_the_first_repetition_is_not_an_outlier(first, others):
    c = compare_runs([make_run("a", {("g", "completion_time"): [first, *others]})])
    assert not [w for w in c.warnings if COLD in w]


def test_the_noise_sentinels_metrics_are_no_rows_and_no_tests():
    base = {
        ("g", "completion_time"): [10.0, 10.1, 9.9],
        ("g", "noise_cpu_other_pct"): [1.0, 2.0, 1.5],
        ("g", "noise_steal_pct"): [0.0, 0.1, 0.0],
    }
    new = {
        ("g", "completion_time"): [10.0, 10.2, 9.8],
        ("g", "noise_cpu_other_pct"): [60.0, 70.0, 65.0],
        ("g", "noise_steal_pct"): [5.0, 6.0, 7.0],
    }
    c = compare_runs([make_run("a", base), make_run("b", new)])
    assert [r.metric for r in c.rows] == ["completion_time"]
    assert c.tested == [0, 1] and not c.headlines
    assert "noise_" not in render(c, "json")


def test_no_headline_says_what_the_repetitions_could_not_have_detected():
    same = {("fio-write", "fio_bw_mbps"): [100.0, 90.0, 110.0], ("fio-write", "completion_time"): [10.0, 10.5, 9.5]}
    c = interleaved(same, {key: [v * f for v, f in zip(values, (1.01, 0.99, 1.0))] for key, values in same.items()})
    assert c.headlines == []
    mdes = [
        row.deltas[1].mde_pct
        for row in c.rows
        if row.deltas[1] is not None and row.deltas[1].mde_pct is not None and c.leads(row) and row.phase != "prepare"
    ]
    text = c.no_headline_text()
    assert mdes and text.startswith("(no significant differences; changes under ")
    assert f"{min(mdes):.0f}%" in text and "could not be told from noise with these repetitions" in text
    assert "(no significant differences; changes under" in render(c, "table")


def test_no_headline_falls_back_to_every_tested_row_when_no_leading_row_was_tested():
    """fio's leading figures carry their job's labels; a workload whose leading rows cannot be tested (a time
    fixed by runtime_s) still says what its other rows could not detect."""
    same = {("fio-write", "completion_time"): [4.0, 4.0, 4.0], ("fio-write", "max_write_mbps"): [21.4, 21.5, 21.4]}
    c = interleaved(same, {key: [v * 1.001 for v in values] for key, values in same.items()})
    assert c.headlines == [] and c.no_headline_text().startswith("(no significant differences; changes under ")
