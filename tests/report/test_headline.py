"""Each family's report leads with its paper's figures (Workload.headline), device telemetry after, in the run
summary, `show`, Markdown, HTML and compare; a headline figure the run lacks is left out; skipping judges a
lower device read rate as better (Workload.directions)."""

import json

import pytest

from storbench import api
from storbench.analysis.metrics import CATALOG, check_headlines
from storbench.results.store import ResultStore
from tests.report.stored_runs import skipping_pair, ycsb_run

# ycsb-a's rows in report order: its headline (no ops per watt: no power source), then time and devices, then the rest
YCSB_A = [
    "[OVERALL] Throughput(ops/sec)",
    "Operations per second per server CPU thread",
    "99thPercentileLatency(us)",
    "99thPercentileLatency(us) [op=READ]",
    "99thPercentileLatency(us) [op=UPDATE]",
    "Time to complete",
    "Maximum read throughput",
    "Maximum write throughput",
    "Average read latency",
    "Average write latency",
    "Maximum CPU utilization",
    "Server CPU threads",
    "AverageLatency(us)",
]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    store = ResultStore(tmp_path_factory.mktemp("headline-home"))
    ycsb_run(store)
    ycsb_run(store, "cassandra-sata", 0.4, "20250301-100001-cassandra-sata-003b")
    return store


def _order(text: str, titles: list[str]) -> list[int]:
    return [text.index(title) for title in titles]


def test_the_run_summary_leads_with_the_papers_figures(store):
    text = api.render(api.compare(["cassandra-nvme"], store), "summary", store)
    assert text.index("Headline figures") < text.index("Time and device telemetry") < text.index("Time s")
    head = text.split("Time and device telemetry")[0]
    assert "[OVERALL]" in head and "per server CPU thread" in head and "99thPercentileLatency(us)" in head
    assert "watt" not in text and "ops/W" not in text  # no power source: the figure is left out, not 0
    row = next(line for line in head.splitlines() if line.strip().startswith("ycsb-a"))
    assert row.split()[1:4] == ["41,000", "ops/s", "641.0"]
    assert "2,100 us (READ 2,000, UPDATE 2,600)" in row
    device = text.split("Time and device telemetry")[1]
    assert "Throughput" not in device  # the rate is the headline's, said once


@pytest.mark.parametrize("fmt", ["table", "md"])
def test_show_and_markdown_put_the_headline_rows_first(store, fmt):
    text = api.render(api.compare(["cassandra-nvme"], store), fmt, store)
    block = text[text.index("ycsb-a\n" if fmt == "table" else "### ycsb-a") : text.index("ycsb-c")]
    positions = _order(block, [title + (" " if fmt == "table" else " |") for title in YCSB_A])
    assert positions == sorted(positions)


def test_html_summary_shows_the_headline_then_devices_and_hides_the_rest(store):
    page = api.render(api.compare(["cassandra-nvme"], store), "html", store)
    summary = page[page.index("<h2>Summary</h2>") : page.index("All other metrics")]
    block = summary[summary.index(">ycsb-a<") : summary.index(">ycsb-c<")]
    positions = _order(block, [title + " <span" for title in YCSB_A[:11]])
    assert positions == sorted(positions)
    assert "AverageLatency(us)" not in summary and "Server CPU threads" not in summary
    charts = page[page.index("<h2>Charts</h2>") :]
    assert charts.index('data-metric="ycsb_throughput_ops_s"') < charts.index('data-metric="completion_time"')


def test_compare_says_the_papers_figure_first(store):
    comparison = api.compare(["cassandra-sata", "cassandra-nvme"], store)
    first = comparison.headlines[0]
    assert first.metric in ("ycsb_throughput_ops_s", "ycsb_load_throughput_ops_s"), first.text
    assert "more operations per second" in first.text
    text = api.render(comparison, "table", store)
    block = text[text.index("\nycsb-a\n") : text.index("\nycsb-c\n")]
    positions = _order(block, [title + " " for title in YCSB_A])
    assert positions == sorted(positions)


def test_skipping_colours_a_lower_device_read_rate_as_better(tmp_path):
    store = ResultStore(tmp_path)
    comparison = api.compare(skipping_pair(store), store)
    rows = {row["metric"]: row for row in json.loads(api.render(comparison, "json", store))["rows"]}
    delta = rows["max_read_mbps"]["deltas"][1]
    assert delta["words"].startswith("70% lower") and delta["verdict"] == "better"
    assert rows["max_read_mbps"]["direction"] == "lower is better"
    assert rows["target_read_mb"]["deltas"][1]["verdict"] == "better"
    page = api.render(comparison, "html", store)
    assert '<span class="better">70% lower' in page and '<span class="worse">70% lower' not in page


def test_a_headline_naming_an_undeclared_metric_fails_naming_the_workload():
    class Typo:
        name, __module__, headline, directions = "typo-bench", "storbench.workloads.typo", ("ycsb_troughput",), {}

    with pytest.raises(RuntimeError, match=r"typo-bench .*'ycsb_troughput'"):
        check_headlines(CATALOG, [Typo])
    Typo.headline, Typo.directions = (), {"max_read_mbps": "down/up"}
    with pytest.raises(ValueError, match="max_read_mbps: wording 'down/up'"):
        check_headlines(CATALOG, [Typo])
