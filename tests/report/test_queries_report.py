"""Per-query (TPC-DS) results in reports: one line per query sorted by change, failures and unchecked queries
flagged, and the four counts' line ("3 ran: 1 checked equal, 1 failed, 1 unchecked") in every format."""

import json

from storbench.analysis.compare import compare_runs
from storbench.report import render
from storbench.results.model import Sample
from storbench.workloads.tpcds.outcomes import run_samples
from tests.analysis.factory import make_run


def _run(label, times, failed=(), unchecked=()):
    """A run as the workload records one: per query a time and query_ok (1, 0 failed, None unchecked), and the
    counts per stream count."""
    run = make_run(label, {("tpcds", "total_time"): [sum(t for t in times.values())]})
    for query, seconds in times.items():
        bad = query in failed
        labels = {"query": query, "streams": "1"}
        run.samples += [
            Sample("tpcds", "query_time", None if bad else seconds, "s", 1, labels),
            Sample("tpcds", "query_ok", 0.0 if bad else None if query in unchecked else 1.0, "ok", 1, labels),
            Sample("tpcds", "spark_input_mb", 5.0, "MB", 1, labels),
        ]
    counts = {
        "queries_ran": len(times),
        "queries_checked_equal": len(times) - len(failed) - len(unchecked),
        "queries_mismatched": 0,
        "queries_failed": len(failed),
        "queries_unchecked": len(unchecked),
    }
    run.samples += [
        Sample("tpcds", metric, float(value), "queries", 1, {"streams": "1"}) for metric, value in counts.items()
    ]
    return run


def test_per_query_lines_sorted_by_change_and_failures_flagged():
    base = _run("a", {"q1": 1.0, "q2": 2.0, "q3": 3.0})
    new = _run("b", {"q1": 2.0, "q2": 1.0, "q3": 3.0}, failed=("q3",))
    comparison = compare_runs([base, new])
    table = render(comparison, "table")
    section = table[table.index("tpcds: per-query times (streams=1)") :]
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


def test_unchecked_is_never_ok_and_the_four_counts_make_the_summary_line_everywhere():
    base = _run("a", {"q1": 1.0, "q2": 2.0, "q3": 3.0})
    new = _run("b", {"q1": 1.0, "q2": 2.0, "q3": 3.0}, failed=("q3",), unchecked=("q2",))
    comparison = compare_runs([base, new])
    lines = {
        "a": "tpcds queries (streams=1), run a: 3 ran: 3 checked equal",
        "b": "tpcds queries (streams=1), run b: 3 ran: 1 checked equal, 1 failed, 1 unchecked",
    }
    table = render(comparison, "table")
    assert lines["a"] in table and lines["b"] in table
    q2 = next(line for line in table.splitlines() if line.lstrip().startswith("q2 "))
    assert q2.rstrip().endswith("unchecked in b") and "FAILED" not in q2  # n/a, not OK and not a failure
    assert "2 queries FAILED" not in table and "1 query FAILED or mismatched: q3" in table
    markdown = render(comparison, "md")
    assert f"- {lines['b']}" in markdown and "| q2 | 2.00 | 2.00 | no change | unchecked in b |" in markdown
    html = render(comparison, "html")
    assert f"<li>{lines['b']}</li>" in html and "unchecked in b" in html
    checks = json.loads(render(comparison, "json"))["query_checks"]
    assert [
        (c["run"], c["ran"], c["checked_equal"], c["mismatched"], c["failed"], c["unchecked"], c["text"])
        for c in checks
    ] == [
        ("a", 3, 3, 0, 0, 0, "3 ran: 3 checked equal"),
        ("b", 3, 1, 0, 1, 1, "3 ran: 1 checked equal, 1 failed, 1 unchecked"),
    ]
    summary = render(compare_runs([new]), "summary")  # what `storbench run` prints at its end
    assert lines["b"] in summary
    # a run with every query unchecked (the paper's scale: no DuckDB answer) says so, not "104/104 OK"
    paper = render(compare_runs([_run("p", {"q1": 1.0, "q2": 2.0}, unchecked=("q1", "q2"))]), "table")
    assert "run p: 2 ran: 0 checked equal, 2 unchecked" in paper


class _Ctx:
    def __init__(self):
        self.notes = []


def _result(*runs):
    return {"elapsed": 4.0, "streams": [{"seconds": 4.0, "order": [q for q, _ in runs], "results": dict(runs)}]}


def test_a_failed_query_is_recorded_not_skipped():
    ok = {"status": "ok", "seconds": 1.5}
    result = _result(
        ("q1", ok), ("q2", {"status": "failed", "seconds": 0.1, "error": "AnalysisException: no such table"})
    )
    notes = []
    samples = run_samples("tpcds", notes, ["q1", "q2"], 1, result, 0.01, 2, None)
    by = {(s.metric, s.labels.get("query")): s.value for s in samples}
    assert by[("query_time", "q1")] == 1.5 and by[("query_ok", "q1")] == 1.0
    assert by[("query_time", "q2")] is None and by[("query_ok", "q2")] == 0.0
    assert by[("queries_failed", None)] == 1.0 and by[("queries_checked_equal", None)] == 1.0
    assert notes == ["tpcds: 1 of 2 queries failed with 1 stream(s): q2 (failed: AnalysisException: no such table)"]


def test_four_outcomes_four_counts_and_unchecked_is_null():
    why = "no reference answer: scale factor 100 is above check_max_sf=1"
    result = _result(
        ("q1", {"status": "ok", "seconds": 1.0}),
        ("q2", {"status": "mismatch", "seconds": 2.0, "why": "3 rows, expected 4"}),
        ("q3", {"status": "failed", "seconds": 0.1, "error": "boom"}),
        ("q4", {"status": "unchecked", "seconds": 4.0, "why": why}),
        ("q5", {"status": "unchecked", "seconds": 5.0, "why": why}),
    )
    notes = []
    samples = run_samples("tpcds", notes, ["q1", "q2", "q3", "q4", "q5"], 1, result, 0.01, 2, None)
    by = {(s.metric, s.labels.get("query")): s.value for s in samples}
    assert [by[("query_ok", q)] for q in ("q1", "q2", "q3", "q4", "q5")] == [1.0, 0.0, 0.0, None, None]
    assert [by[("query_time", q)] for q in ("q1", "q2", "q3", "q4", "q5")] == [1.0, None, None, 4.0, 5.0]
    assert [
        by[(m, None)]
        for m in ("queries_ran", "queries_checked_equal", "queries_mismatched", "queries_failed", "queries_unchecked")
    ] == [5.0, 1.0, 1.0, 1.0, 2.0]
    assert notes[1] == f"tpcds: 2 of 5 queries unchecked with 1 stream(s): {why}: q4, q5"
    # over N streams a query's outcome is its worst execution's: one unchecked stream of two is not OK
    two = {
        "elapsed": 3.0,
        "streams": [
            {"seconds": 3.0, "order": ["q1"], "results": {"q1": {"status": s, "seconds": 1.0}}}
            for s in ("ok", "unchecked")
        ],
    }
    by = {(s.metric, s.labels.get("query")): s.value for s in run_samples("tpcds", [], ["q1"], 2, two, 0.01, 2, None)}
    assert by[("query_ok", "q1")] is None and by[("queries_unchecked", None)] == 1.0
