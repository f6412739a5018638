"""The HTML report opened in a real headless Chromium: the DOM holds every chart, the page paints."""

from html.parser import HTMLParser

import pytest

from storbench.analysis.compare import compare_runs
from storbench.report import render
from tests.analysis.factory import paper_runs, series_loader
from tests.report.chromium import distinct_colors, dump_dom, find_chromium, read_png, screenshot

pytestmark = [
    pytest.mark.real,  # headless Chromium
    pytest.mark.skipif(
        find_chromium() is None, reason="no chromium binary found; `scripts/setup.sh --test` installs Debian's chromium"
    ),
]


class _Charts(HTMLParser):
    """Each svg.chart in the rendered DOM with the tags inside it."""

    def __init__(self):
        super().__init__()
        self.charts, self.open = [], []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "svg" and "chart" in (attrs.get("class") or "").split():
            self.charts.append(
                {
                    "metric": attrs.get("data-metric"),
                    "run": attrs.get("data-run"),
                    "width": float(attrs.get("width") or 0),
                    "height": float(attrs.get("height") or 0),
                    "tags": [],
                }
            )
            self.open.append(self.charts[-1])
        elif self.open:
            self.open[-1]["tags"].append(tag)

    def handle_endtag(self, tag):
        if tag == "svg" and self.open:
            self.open.pop()


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    comparison = compare_runs(paper_runs())
    path = tmp_path_factory.mktemp("html") / "report.html"
    path.write_text(render(comparison, "html", series_loader=series_loader))
    return comparison, path


def test_chromium_dom_has_every_chart(page, tmp_path):
    comparison, path = page
    dom = dump_dom(path, tmp_path)
    parser = _Charts()
    parser.feed(dom)
    by_metric = {c["metric"]: c for c in parser.charts if c["run"] is None}
    assert set(comparison.metrics()) <= set(by_metric)
    for metric in comparison.metrics():
        chart = by_metric[metric]
        assert chart["width"] > 0 and chart["height"] > 0
        assert chart["tags"].count("rect") >= 2, metric  # at least one bar per run
        assert "text" in chart["tags"]
    for run in comparison.runs:
        for key in ("series:throughput", "series:cpu"):
            chart = next(c for c in parser.charts if c["metric"] == key and c["run"] == run.run_id)
            assert "path" in chart["tags"] and "rect" in chart["tags"]  # lines and shaded windows
    assert "190% higher" in dom and "NOT COMPARABLE" not in dom


def test_chromium_screenshot_is_not_blank(page, tmp_path):
    _, path = page
    png = screenshot(path, tmp_path / "report.png", tmp_path, size=(1280, 2000))
    assert png.stat().st_size > 10_000
    width, height, channels, rows = read_png(png)
    assert (width, height) == (1280, 2000)
    assert rows[5][:3] == bytes((0xF4, 0xF5, 0xF7))  # the page background, top left
    assert distinct_colors(rows, channels, step=4) > 200  # text, tables, bars: not a blank page
