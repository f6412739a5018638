"""The metric catalog is built from what workloads and the shared producers declare."""

import importlib

import pytest

from storbench.analysis import metrics
from storbench.analysis.metrics import CATALOG, build_catalog, declarations
from storbench.results.metrics import MetricSpec, metric, metric_table
from storbench.workloads import all_workloads

# One metric of each declaring module, as the reports know them.
FAMILIES = {
    "storbench.workloads.zoned": "zoned_iops_stddev",
    "storbench.telemetry.metrics": "max_read_mbps",
    "storbench.engines.eventlog": "shuffle_read_mb",
    "storbench.results.consistency": "ps_iops_cv",
    "storbench.engines.s3a": "s3a_put_requests",
    "storbench.workloads.spark_transforms": "rows",
    "storbench.workloads.terasort": "hsph",
    "storbench.workloads.tpcds": "query_time",
    "storbench.workloads.dfsio": "dfsio_throughput_mbps",
    "storbench.workloads.fio": "fio_clat_p99_9_ms",
    "storbench.workloads.rados_bench": "rados_stddev_iops",
    "storbench.workloads.objects": "obj_ttfb_p99_ms",
}


def test_the_catalog_holds_every_declared_metric():
    for cls in all_workloads().values():
        for spec in cls.metrics:
            assert CATALOG[spec.name] == spec, (cls.name, spec.name)
    for module in metrics.SHARED:
        for spec in importlib.import_module(module).METRICS:
            assert CATALOG[spec.name] == spec
    sources = dict(declarations())
    for source, name in FAMILIES.items():
        assert name in {spec.name for spec in sources[source]}, source
        assert name in CATALOG


def test_workload_families_declare_their_own_metrics():
    workloads = all_workloads()
    assert workloads["fio-randread"].metrics[0].name == "fio_bw_mbps"
    assert {s.name for s in workloads["rados-bench-seq"].metrics} >= {"rados_avg_iops", "rados_ops"}
    assert "obj_hwm_clients" in {s.name for s in workloads["objects-mixed"].metrics}


def test_sections_follow_the_order_their_sources_declare():
    sources = [source for source, _ in declarations()]
    placed = sorted(FAMILIES, key=metrics.section)
    assert [s for s in sources if s in FAMILIES] == placed  # each source's METRIC_SECTION, lowest first
    assert all(metrics.section(s) < metrics.UNPLACED for s in FAMILIES)  # every named section declares one
    names = list(CATALOG)
    # paper 004's zoned figures lead (a zoned run's headlines are its sentences), then paper 000's
    zoned = [spec.name for spec in dict(declarations())["storbench.workloads.zoned"]]
    assert names[: len(zoned) + 3] == [*zoned, "completion_time", "max_read_mbps", "max_write_mbps"]
    firsts = [names.index(FAMILIES[source]) for source in placed]
    assert firsts == sorted(firsts)


def test_a_conflicting_declaration_is_refused_naming_both():
    spec = metric("x_mbps", "X throughput", "MB/s", "max", "higher/lower")
    other = metric("x_mbps", "X throughput", "MB/s", "mean", "higher/lower")
    with pytest.raises(
        RuntimeError,
        match=r"'x_mbps' is declared differently by mod\.a and mod\.b "
        r"\(aggregation 'max' vs 'mean'\)",
    ):
        build_catalog([("mod.a", (spec,)), ("mod.b", (other,))])


def test_an_equal_declaration_keeps_the_first_place():
    a, b = metric("a", "A", "s", "mean", "faster/slower"), metric("b", "B", "s", "mean", "faster/slower")
    assert list(build_catalog([("one", (a, b)), ("two", (metric("b", "B", "s", "mean", "faster/slower"), a))])) == [
        "a",
        "b",
    ]


def test_a_table_row_says_direction_by_its_wording():
    (spec,) = metric_table("""
        # a comment
        lat_ms | Latency | ms | mean | lower/higher | overall
    """)
    assert spec == MetricSpec("lat_ms", "Latency", "ms", False, "mean", "lower", "higher", True)


@pytest.mark.parametrize(
    "row,message",
    [
        ("a | A | s | mean | quicker/slower", "wording 'quicker/slower' is not one of: higher/lower,"),
        ("a | A | s | average | faster/slower", "aggregation 'average' is not one of: max, min, mean, median, sum"),
        ("a | A | s | mean", r"name \| title \| unit \| aggregation \| better/worse \[\| flags\]"),
        (
            "a | A | s | mean | faster/slower | always",
            "the last column names overall, words-first, factor or nothing, not 'always'",
        ),
    ],
)
def test_a_bad_table_row_says_what_is_allowed(row, message):
    with pytest.raises(ValueError, match=message):
        metric_table(row)


def test_workload_metrics_are_a_workloads_own_declarations_and_none_for_a_stranger():
    assert metrics.workload_metrics("scan") == all_workloads()["scan"].metrics
    assert metrics.workload_metrics("scan")[0].name == "scan_rows_per_s"
    assert metrics.workload_metrics("no-such-workload") is None
