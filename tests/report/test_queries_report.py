"""Per-query (TPC-DS) results in reports: one line per query sorted by change, failures flagged."""

from storbench.analysis.compare import compare_runs
from storbench.report import render
from storbench.results.model import Sample
from storbench.workloads.tpcds import Tpcds
from tests.analysis.factory import make_run


def _run(label, times, failed=()):
    run = make_run(label, {("tpcds", "total_time"): [sum(t for t in times.values())]})
    for query, seconds in times.items():
        bad = query in failed
        labels = {"query": query, "streams": "1"}
        run.samples += [Sample("tpcds", "query_time", None if bad else seconds, "s", 1, labels),
                        Sample("tpcds", "query_ok", 0.0 if bad else 1.0, "ok", 1, labels),
                        Sample("tpcds", "spark_input_mb", 5.0, "MB", 1, labels)]
    return run


def test_per_query_lines_sorted_by_change_and_failures_flagged():
    base = _run("a", {"q1": 1.0, "q2": 2.0, "q3": 3.0})
    new = _run("b", {"q1": 2.0, "q2": 1.0, "q3": 3.0}, failed=("q3",))
    comparison = compare_runs([base, new])
    table = render(comparison, "table")
    section = table[table.index("tpcds: per-query times (streams=1)"):]
    assert section.index("q1") < section.index("q2") < section.index("q3")  # slow-down first, n/a last
    assert "FAILED in b" in section and "1 query FAILED or mismatched: q3" in table
    assert "Query time [" not in table and "Spark input [" not in table  # not one row per query and metric
    assert "Total time of the streams" in table
    markdown = render(comparison, "md")
    assert "| q3 | 3.00 | n/a | n/a | FAILED in b |" in markdown and "FAILED in b" in markdown
    html = render(comparison, "html")
    assert 'data-metric="queries:tpcds:streams=1"' in html and "FAILED in b" in html
    assert "Spark metrics per query" in html
    assert '"query": "q3"' in render(comparison, "json")  # the machine-readable formats keep every row


class _Ctx:
    def __init__(self):
        self.notes = []


def test_a_failed_query_is_recorded_not_skipped():
    ok = {"status": "ok", "seconds": 1.5}
    result = {"elapsed": 4.0, "streams": [{"seconds": 4.0, "order": ["q1", "q2"], "results": {
        "q1": ok, "q2": {"status": "failed", "seconds": 0.1, "error": "AnalysisException: no such table"}}}]}
    ctx = _Ctx()
    samples = Tpcds()._samples(ctx, ["q1", "q2"], 1, result, 0.01, 2, None)
    by = {(s.metric, s.labels.get("query")): s.value for s in samples}
    assert by[("query_time", "q1")] == 1.5 and by[("query_ok", "q1")] == 1.0
    assert by[("query_time", "q2")] is None and by[("query_ok", "q2")] == 0.0
    assert by[("queries_failed", None)] == 1.0
    assert ctx.notes == ["tpcds: 1 of 2 queries failed with 1 stream(s): q2 (failed: AnalysisException: "
                         "no such table)"]
