import pytest

from storbench.analysis import wording
from storbench.analysis.compare import OVERALL_WORKLOAD, compare_runs
from storbench.analysis.metrics import spec_for
from tests.analysis.factory import make_run, paper_runs


def row(comparison, workload, metric):
    matches = [r for r in comparison.rows if r.workload == workload and r.metric == metric]
    assert len(matches) == 1, (workload, metric, [(r.workload, r.metric) for r in comparison.rows])
    return matches[0]


def sentences(comparison):
    """The headlines' sentences in the paper's words, without the CI in parentheses that follows them."""
    return [h.text.split(" (95% CI ")[0] for h in comparison.headlines]


def pair(base_values, new_values, **kwargs):
    return compare_runs([make_run("ssd-a", base_values, **kwargs), make_run("ssd-b", new_values)])


def test_paper_000_summary_figures_in_the_papers_words():
    # Three repetitions each, built so the aggregates are paper 000's summary table.
    base = {
        ("groupby", "max_read_mbps"): [2000.0, 2192.34, 2100.0],
        ("groupby", "max_write_mbps"): [1500.0, 1511.34, 1400.0],
        ("groupby", "avg_read_latency_ms"): [44.05, 45.05, 46.05],
        ("groupby", "avg_write_latency_ms"): [200.87, 210.87, 220.87],
        ("groupby", "max_cpu_pct"): [78.0, 80.0, 79.0],
        ("repartition", "completion_time"): [1130.80, 1136.80, 1142.80],
    }
    new = {
        ("groupby", "max_read_mbps"): [6369.34, 6100.0, 6200.0],
        ("groupby", "max_write_mbps"): [3649.34, 3500.0, 3600.0],
        ("groupby", "avg_read_latency_ms"): [0.40, 0.41, 0.42],
        ("groupby", "avg_write_latency_ms"): [36.40, 36.41, 36.42],
        ("groupby", "max_cpu_pct"): [95.0, 93.0, 94.0],
        ("repartition", "completion_time"): [940.15, 941.15, 942.15],
    }
    c = pair(base, new)
    expected = {
        ("groupby", "max_read_mbps"): (2192.34, 6369.34, "190% higher", "2.9× higher"),
        ("groupby", "max_write_mbps"): (1511.34, 3649.34, "141% higher", "2.4× higher"),
        ("groupby", "avg_read_latency_ms"): (45.05, 0.41, "99% lower", "110× lower"),
        ("groupby", "avg_write_latency_ms"): (210.87, 36.41, "82% lower", "5.8× lower"),
        ("groupby", "max_cpu_pct"): (80.0, 95.0, "18% better usage", None),
        ("repartition", "completion_time"): (1136.80, 941.15, "17% faster", None),
    }
    for (workload, metric), (old, new_value, words, factor) in expected.items():
        r = row(c, workload, metric)
        assert r.cells[0].aggregate == pytest.approx(old)
        assert r.cells[1].aggregate == pytest.approx(new_value)
        assert r.deltas[0] is None
        delta = r.deltas[1]
        assert delta.words == words
        assert delta.factor_words == factor
        assert delta.rel == pytest.approx(new_value / old - 1)
        assert delta.significance == wording.SIGNIFICANT and delta.marker == "*"
    assert row(c, "groupby", "max_read_mbps").deltas[1].pct == pytest.approx(190.527, abs=1e-3)
    cells = row(c, "groupby", "max_read_mbps").cells[0]
    assert (cells.n, cells.min, cells.median, cells.max) == (3, 2000.0, 2100.0, 2192.34)
    assert cells.repetitions == [1, 2, 3] and cells.values == [2000.0, 2192.34, 2100.0]
    texts = sentences(c)
    assert "ssd-b vs ssd-a: groupby maximum read throughput 190% higher" in texts
    assert "ssd-b vs ssd-a: repartition time to complete 17% faster" in texts
    assert "ssd-b vs ssd-a: groupby average read latency 99% lower" in texts


def test_paper_000_completion_times_use_time_reduction():
    # 1 - new/old: 4%, 17%, 25% as the paper prints (old/new - 1 would give 20% and 33%).
    for old, new, words in (
        (504.27, 480.93, "4% faster"),
        (1136.80, 941.15, "17% faster"),
        (1597.23, 1195.58, "25% faster"),
    ):
        assert wording.delta_words(spec_for("completion_time"), new / old - 1) == words


def test_slower_no_change_and_float_guard():
    c = pair(
        {("join", "completion_time"): [99.0, 100.0, 101.0], ("groupby", "completion_time"): [100.0] * 3},
        {("join", "completion_time"): [111.0, 112.0, 113.0], ("groupby", "completion_time"): [101.5] * 3},
    )
    slower = row(c, "join", "completion_time").deltas[1]
    assert (slower.words, slower.verdict, slower.significance) == ("12% slower", "worse", wording.SIGNIFICANT)
    same = row(c, "groupby", "completion_time").deltas[1]
    assert (same.words, same.verdict) == ("no change", "no change")
    assert wording.delta_words(spec_for("max_read_mbps"), 1.17 / 1.0 - 1) == "17% higher"
    assert wording.delta_words(spec_for("max_read_mbps"), -0.019) == "no change"
    assert wording.delta_words(spec_for("max_read_mbps"), 0.02) == "2% higher"


def test_significance_verdicts():
    c = pair(
        {("a", "max_read_mbps"): [100.0, 200.0, 150.0], ("b", "max_read_mbps"): [100.0, 101.0]},
        {("a", "max_read_mbps"): [120.0, 190.0, 160.0], ("b", "max_read_mbps"): [150.0, 151.0]},
    )
    noisy = row(c, "a", "max_read_mbps").deltas[1]
    assert noisy.significance == wording.NOISE and noisy.marker == "~" and noisy.p_value > 0.05
    few = row(c, "b", "max_read_mbps").deltas[1]
    assert few.significance == wording.TOO_FEW and few.p_value is None and few.marker == "?"
    # Only too-few-repetition differences: the headline says so.
    c = pair({("b", "max_read_mbps"): [100.0]}, {("b", "max_read_mbps"): [150.0]})
    assert [h.text for h in c.headlines] == [
        "ssd-b vs ssd-a: b maximum read throughput 50% higher (too few repetitions)"
    ]


def test_none_values_zero_baseline_and_missing_rows():
    c = pair(
        {
            ("g", "avg_read_latency_ms"): [None, None, None],
            ("g", "max_read_mbps"): [0.0, 0.0, 0.0],
            ("g", "max_write_mbps"): [10.0, None, 12.0],
        },
        {
            ("g", "avg_read_latency_ms"): [1.0, 2.0, 3.0],
            ("g", "max_read_mbps"): [5.0, 6.0, 7.0],
            ("g", "max_write_mbps"): [20.0, 22.0, None],
            ("g", "completion_time"): [1.0, 1.0, 1.0],
        },
    )
    lat = row(c, "g", "avg_read_latency_ms")
    assert lat.cells[0].aggregate is None and lat.cells[0].n == 0 and lat.cells[0].values == [None] * 3
    assert (lat.deltas[1].words, lat.deltas[1].significance) == ("n/a", "n/a")
    zero = row(c, "g", "max_read_mbps").deltas[1]
    assert zero.words == "n/a" and zero.rel is None
    write = row(c, "g", "max_write_mbps")
    assert (write.cells[0].n, write.cells[0].aggregate, write.cells[1].aggregate) == (2, 12.0, 22.0)
    assert write.deltas[1].significance == wording.TOO_FEW
    missing = row(c, "g", "completion_time")
    assert missing.cells[0].n == 0 and missing.cells[0].aggregate is None and missing.deltas[1].words == "n/a"


def test_prepare_steps_and_overall_rows():
    c = compare_runs(paper_runs())
    datagen = row(c, "datagen", "completion_time")
    assert datagen.phase == "prepare" and datagen.group == "datagen (prepare)"
    assert datagen.cells[0].repetitions == [0] and datagen.deltas[1].words == "15% faster"
    assert datagen.deltas[1].significance == wording.TOO_FEW
    overall = row(c, OVERALL_WORKLOAD, "max_read_mbps")
    assert overall.phase == "overall"
    assert overall.cells[0].aggregate == pytest.approx(2192.34)
    assert overall.cells[1].aggregate == pytest.approx(6369.34)
    assert overall.deltas[1].words == "190% higher"
    assert row(c, OVERALL_WORKLOAD, "avg_read_latency_ms").cells[1].aggregate == pytest.approx(0.41)
    assert not [r for r in c.rows if r.workload == OVERALL_WORKLOAD and r.metric == "completion_time"]
    assert sentences(c)[:5] == [
        "pm7r-sas vs sata-vendor-a: maximum read throughput 190% higher",
        "pm7r-sas vs sata-vendor-a: maximum write throughput 141% higher",
        "pm7r-sas vs sata-vendor-a: average read latency 99% lower",
        "pm7r-sas vs sata-vendor-a: average write latency 82% lower",
        "pm7r-sas vs sata-vendor-a: maximum CPU utilization 18% better usage",
    ]
    assert c.metrics()[:3] == ["completion_time", "max_read_mbps", "max_write_mbps"]
    assert [g for g, _ in c.groups()] == ["datagen (prepare)", "groupby", "repartition", "join", OVERALL_WORKLOAD]


def test_not_comparable_lists_exactly_the_differing_keys():
    values = {("g", "completion_time"): [1.0, 1.1, 1.2]}
    a = make_run("a", values)
    b = make_run(
        "b",
        values,
        workload_versions={"datagen": "1", "groupby": "2", "repartition": "1", "join": "1"},
        parameters={"rows": 2000000, "partitions": 4, "format": "csv"},
    )
    c = compare_runs([a, b])
    assert not c.comparable
    assert [(d.kind, d.key, d.values) for d in c.differences] == [
        ("workload_version", "groupby", ["1", "2"]),
        ("parameter", "rows", [1000000, 2000000]),
    ]
    assert c.warnings[0].startswith("NOT COMPARABLE")
    assert "workload version groupby: 1 (a) vs 2 (b)" in c.warnings[0]
    assert "parameter rows: 1000000 (a) vs 2000000 (b)" in c.warnings[0]
    assert compare_runs([a, make_run("c", values)]).comparable


def test_runs_whose_windows_ran_under_other_rules_are_not_comparable():
    values = {("datagen", "completion_time"): [1.0, 1.1, 1.2]}
    flushed = make_run("a", values, window_rules={"datagen": {"flush": "syncfs"}})
    cached = make_run("b", values, window_rules={"datagen": {"flush": "off"}})
    c = compare_runs([flushed, cached])
    assert [(d.kind, d.key, d.values) for d in c.differences] == [("window", "datagen.flush", ["syncfs", "off"])]
    assert "window datagen.flush: syncfs (a) vs off (b)" in c.warnings[0]
    assert c.runs[0].window_rules == {"datagen": {"flush": "syncfs"}}
    again = make_run("c", values, window_rules={"datagen": {"flush": "syncfs"}})
    assert compare_runs([flushed, again]).comparable


def test_run_facts_failed_runs_and_single_run():
    a = make_run("a", {("g", "completion_time"): [1.0]})
    b = make_run(
        "a",
        {("g", "completion_time"): [2.0]},
        status="failed",
        run_id="r2",
        errors=[{"workload": "g", "repetition": 2, "error": "boom"}],
    )
    c = compare_runs([a, b])
    assert [r.name for r in c.runs] == [f"a ({a.run_id})", "a (r2)"]
    assert c.comparable and len(c.warnings) == 1 and "failed" in c.warnings[0] and "boom" in c.warnings[0]
    info = c.runs[0]
    assert info.machine["cpu_model"].startswith("AMD EPYC") and info.machine["filesystem"]["type"] == "xfs"
    assert info.engine_settings["spark"] == {"master": "local[*]", "driver_memory": "5g", "executor_memory": "20g"}
    assert info.software["spark"] == "4.3.0" and info.scale == "tiny" and info.target == "file:///mnt/a/sb"
    assert "SECRET" not in repr(c.to_dict())
    single = compare_runs([a])
    assert single.headlines == [] and single.differences == []
    assert all(r.deltas == [None] for r in single.rows)


def test_three_runs_compare_with_the_first():
    c = compare_runs(
        [make_run(label, {("g", "max_read_mbps"): [v]}) for label, v in (("x", 100.0), ("y", 200.0), ("z", 50.0))]
    )
    r = row(c, "g", "max_read_mbps")
    assert [d.words if d else None for d in r.deltas] == [None, "100% higher", "50% lower"]


def test_credentials_in_target_are_redacted():
    run = make_run("a", {("g", "completion_time"): [1.0]})
    run.manifest["config"]["target"] = "s3://key:secret@bucket/prefix"
    assert compare_runs([run]).runs[0].target == "s3://***@bucket/prefix"


def test_no_runs_is_an_error():
    with pytest.raises(ValueError):
        compare_runs([])
