import csv
import io
import json
import re
from html.parser import HTMLParser

import pytest

from storbench.analysis.compare import compare_runs
from storbench.errors import InputError
from storbench.report import FORMATS, render
from storbench.report.csv_export import COLUMNS
from storbench.report.svg import Line, line_chart, nice_ticks
from tests.analysis.factory import make_run, paper_runs, series_loader


@pytest.fixture
def paper():
    return compare_runs(paper_runs())


@pytest.fixture
def not_comparable():
    values = {("groupby", "completion_time"): [10.0, 11.0, 12.0], ("groupby", "max_read_mbps"): [100.0, None, 90.0]}
    return compare_runs(
        [
            make_run("a", values),
            make_run("b", values, parameters={"rows": 5, "partitions": 4, "format": "csv"}, status="interrupted"),
        ]
    )


def test_table_has_blocks_numbers_and_words(paper):
    text = render(paper, "table")
    for expected in (
        "groupby",
        "repartition",
        "join",
        "all operations",
        "datagen (prepare)",
        "Maximum read throughput",
        "MB/s",
        "2,192",
        "6,369",
        "190% higher (×2.9) *",
        "99% lower (÷110) *",
        "17% faster *",
        "[2,104–2,192]",
        "AMD EPYC 7543",
        "xfs on /dev/md0",
        "Spark driver memory",
        "5g",
        "20g",
        "pm7r-sas vs sata-vendor-a: maximum read throughput 190% higher",
        "Benjamini–Hochberg over the 23 tested rows",
        "Welch otherwise",
        "* [+162%..+215%]",
    ):
        assert expected in text, expected
    lines = text.splitlines()
    at = lines.index("groupby")
    header, rule, row = lines[at + 1], lines[at + 2], lines[at + 4]
    assert "Maximum read throughput" in row
    assert row.index("190%") == header.index("pm7r-sas vs") == rule.rindex(" ") + 1  # aligned columns
    assert row.index("5,095 [") + len("5,095 [4,701–5,095]") == header.index("pm7r-sas ") + len("pm7r-sas")
    assert "SECRET" not in text


def test_markdown_tables(paper):
    text = render(paper, "md")
    assert text.startswith("# storbench comparison")
    assert "## Configuration" in text and "## Headlines" in text
    assert (
        "| Maximum read throughput | MB/s | 2,192 [2,104–2,192] | 6,369 [5,949–6,369] | 190% higher (×2.9) * "
        "[+162%..+215%] |" in text
    )
    assert "| Spark executor memory | 20g | 20g |" in text
    for line in text.splitlines():
        if line.startswith("|"):
            assert line.endswith("|")


def test_json_is_complete_and_loads(paper):
    data = json.loads(render(paper, "json"))
    assert data["schema"] == "storbench.comparison/2" and data["comparable"] is True
    assert [r["label"] for r in data["runs"]] == ["sata-vendor-a", "pm7r-sas"]
    row = next(r for r in data["rows"] if r["workload"] == "all operations" and r["metric"] == "max_read_mbps")
    assert row["cells"][0]["aggregate"] == pytest.approx(2192.34)
    assert row["deltas"][0] is None
    assert row["deltas"][1]["words"] == "190% higher" and row["deltas"][1]["p_value"] < 0.05
    assert len(row["cells"][1]["values"]) == 3
    assert (
        data["headlines"][0]["text"]
        == "pm7r-sas vs sata-vendor-a: maximum read throughput 190% higher (95% CI +162% to +215%, Welch, detects ≥12%)"
    )
    assert data["headlines"][0]["words"] == "190% higher"
    assert data["headlines"][0]["interval"] == "95% CI +162% to +215%, Welch, detects ≥12%"
    delta = row["deltas"][1]
    assert (
        delta["test"] == "welch"
        and delta["q_value"] >= delta["p_value"]
        and delta["ratio"] == pytest.approx(2.9053, abs=1e-4)
    )
    assert delta["ci_low"] < 2.9053 < delta["ci_high"] and delta["mde_pct"] > 0
    assert "SECRET" not in json.dumps(data)


def test_csv_one_row_per_workload_metric_run(paper, not_comparable):
    rows = list(csv.DictReader(io.StringIO(render(paper, "csv"))))
    assert list(rows[0]) == COLUMNS
    assert len(rows) == len(paper.rows) * 2
    hit = [r for r in rows if r["workload"] == "repartition" and r["metric"] == "completion_time"]
    assert [r["label"] for r in hit] == ["sata-vendor-a", "pm7r-sas"]
    assert float(hit[0]["aggregate"]) == pytest.approx(1136.8) and hit[0]["delta_words"] == ""
    assert hit[1]["delta_words"] == "17% faster" and float(hit[1]["p_value"]) < 0.05
    assert hit[1]["values"].count(";") == 2
    bad = list(csv.DictReader(io.StringIO(render(not_comparable, "csv"))))
    assert {r["comparable"] for r in bad} == {"no"}
    assert next(r for r in bad if r["metric"] == "max_read_mbps")["values"] == "100.0;;90.0"


def test_every_format_shows_the_not_comparable_warning(not_comparable):
    for fmt in ("table", "md", "html"):
        text = render(not_comparable, fmt)
        assert "NOT COMPARABLE" in text and "parameter rows: 1000000 (a) vs 5 (b)" in text, fmt
        assert "interrupted" in text, fmt
    data = json.loads(render(not_comparable, "json"))
    assert data["comparable"] is False
    assert data["differences"] == [{"kind": "parameter", "key": "rows", "values": [1000000, 5]}]
    assert any("interrupted" in w for w in data["warnings"])
    assert render(not_comparable, "table").index("NOT COMPARABLE") < render(not_comparable, "table").index("groupby")


def test_single_run_summary_in_every_format():
    comparison = compare_runs(paper_runs()[:1])
    for fmt in FORMATS:
        text = render(comparison, fmt)
        assert "sata-vendor-a" in text and "1,137" in text or fmt in ("json", "csv")
        assert "n/a" in text or fmt in ("json", "csv")
    assert "run report" in render(comparison, "table")
    assert "vs" not in render(comparison, "md").split("## Results")[1]


class _Collect(HTMLParser):
    def __init__(self):
        super().__init__()
        self.charts, self.stack, self.scripts, self.links = {}, [], 0, 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "svg" and "chart" in (attrs.get("class") or "").split():
            key = (attrs["data-metric"], attrs.get("data-run"))
            self.charts[key] = {"width": attrs.get("width"), "children": set()}
            self.stack.append(key)
        elif self.stack:
            self.charts[self.stack[-1]]["children"].add(tag)
        self.scripts += tag == "script"
        self.links += tag == "link" or "http" in (attrs.get("src") or "")

    def handle_endtag(self, tag):
        if tag == "svg" and self.stack:
            self.stack.pop()


def test_html_is_self_contained_with_a_chart_per_metric(paper):
    page = render(paper, "html", series_loader=series_loader)
    parser = _Collect()
    parser.feed(page)
    assert parser.scripts == 0 and parser.links == 0
    for metric in paper.metrics():
        chart = parser.charts[(metric, None)]
        assert "rect" in chart["children"] and int(chart["width"]) > 0
    for run in paper.runs:
        assert "path" in parser.charts[("series:throughput", run.run_id)]["children"]
        assert "path" in parser.charts[("series:cpu", run.run_id)]["children"]
    assert "190% higher" in page and "6,369" in page and "AMD EPYC 7543" in page


def test_html_escapes_text_and_survives_a_broken_loader():
    weird = 'a<b>&c"x'
    comparison = compare_runs(
        [make_run("l1", {(weird, "max_read_mbps"): [1.0]}), make_run("l2", {(weird, "max_read_mbps"): [3.0]})]
    )

    def broken(run):
        raise OSError("<no telemetry.csv>")

    page = render(comparison, "html", series_loader=broken)
    assert weird not in page and "a&lt;b&gt;&amp;c&quot;x" in page
    assert "&lt;no telemetry.csv&gt;" in page and "<no telemetry.csv>" not in page
    md = render(comparison, "md")
    assert "a&lt;b&gt;" in md


def test_html_without_series_and_empty_series(paper):
    assert "Telemetry over time" not in render(paper, "html")
    page = render(paper, "html", series_loader=lambda run: ([], []))
    assert "No telemetry series was recorded" in page


def test_unknown_format():
    with pytest.raises(InputError, match=r"^--format 'pdf': allowed: csv, html, json, latex, md, table"):
        render(compare_runs(paper_runs()[:1]), "pdf")


def test_nice_ticks():
    assert nice_ticks(6369.34 * 1.08) == [0, 2000, 4000, 6000, 8000]
    assert nice_ticks(0.43) == [0, 0.1, 0.2, 0.3, 0.4, 0.5]
    assert nice_ticks(0) == [0, 1]


def test_na_is_na_in_every_format_never_zero():
    """A figure with no value (CPU per operation of a run that completed none) reads n/a, null, empty, a gap."""
    cpu = ("objects-get", "obj_cpu_us_per_op")
    comparison = compare_runs([make_run("a", {cpu: [None, None, None]}), make_run("b", {cpu: [5.0, 6.0, 7.0]})])
    for fmt in ("table", "md"):
        row = next(line for line in render(comparison, fmt).splitlines() if "Client CPU per operation" in line)
        assert re.search(r" us[ |]+n/a[ |]+6\.00 \[5\.00–7\.00\]", row) and " 0 " not in row, row
    data = json.loads(render(comparison, "json"))
    cells = next(r for r in data["rows"] if r["metric"] == cpu[1])["cells"]
    assert cells[0]["aggregate"] is None and cells[0]["values"] == [None, None, None]
    rows = [r for r in csv.DictReader(io.StringIO(render(comparison, "csv"))) if r["metric"] == cpu[1]]
    assert (rows[0]["aggregate"], rows[0]["values"]) == ("", ";;")
    chart = render(comparison, "html").split(f'data-metric="{cpu[1]}"')[1].split("</svg>")[0]
    assert chart.count("</title></rect>") == 1 and 'class="na">n/a</text>' in chart  # b's bar only; a: "n/a"


def test_a_none_in_a_time_series_breaks_its_line():
    svg = line_chart("k", "MB/s", "MB/s", [1.0, 2.0, 3.0, 4.0], [Line("read", [5.0, 6.0, None, 7.0])], [])
    path = svg.split('<path d="')[1].split('"')[0]
    assert path.count("M") == 2 and path.count("L") == 1, path  # 1→2 drawn, nothing at 3 (not a drop to 0)
