"""Reports of a :class:`~storbench.analysis.model.Comparison`, one exporter module per format.

``render(comparison, fmt)`` with ``fmt`` one of ``table`` (terminal), ``md``, ``json``,
``csv`` or ``html``. For ``html`` a ``series_loader(run) -> (rows, windows)`` adds the
telemetry time series of each run.
"""

from __future__ import annotations

from typing import Any, Callable

from storbench.analysis.model import Comparison
from storbench.results.model import Run

SeriesLoader = Callable[[Run], "tuple[list[dict[str, Any]], list[dict[str, Any]]]"]
FORMATS = ("table", "md", "json", "csv", "html")


def render(comparison: Comparison, fmt: str, series_loader: SeriesLoader | None = None) -> str:
    if fmt == "table":
        from storbench.report.table import render_table

        return render_table(comparison)
    if fmt == "summary":  # after a run: the headline figures only
        from storbench.report.summary import summary_text

        return summary_text(comparison)
    if fmt == "verdict":  # after an interleaved experiment: warnings and headlines
        from storbench.report.verdict import verdict_text

        return verdict_text(comparison)
    if fmt in ("md", "markdown"):
        from storbench.report.markdown import render_markdown

        return render_markdown(comparison)
    if fmt == "json":
        from storbench.report.json_export import render_json

        return render_json(comparison)
    if fmt == "csv":
        from storbench.report.csv_export import render_csv

        return render_csv(comparison)
    if fmt == "html":
        from storbench.report.html import render_html

        return render_html(comparison, series_loader)
    raise ValueError(f"unknown report format {fmt!r}; allowed: {', '.join(FORMATS)}")
