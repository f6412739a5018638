"""One self-contained HTML page: configurations, headlines, summary table, a grouped bar chart
per metric like the papers' figures and, given a series loader, each run's telemetry.

No network: the CSS is inline and the charts are SVG generated here; there is no JavaScript.
"""

from __future__ import annotations

from typing import Any, Callable

from storbench import __version__
from storbench.analysis.model import PREPARE, Comparison, Row
from storbench.report import _format as f
from storbench.report import limited, nodes, nodes_html, queries, series
from storbench.report import published as published_figures
from storbench.report.svg import PALETTE, BarSeries, bar_chart, esc
from storbench.results.metrics import DEVICE_HEADLINE
from storbench.report.registry import SeriesLoader, register

CSS = """
:root{--ink:#1f2937;--muted:#6b7280;--line:#e5e7eb;--soft:#f3f4f6;--accent:#2b5c8a;--good:#17794a;--bad:#b42318}
*{box-sizing:border-box}
body{margin:0;background:#f4f5f7;color:var(--ink);
font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans",sans-serif}
main{max-width:1200px;margin:0 auto;padding:28px 28px 48px}
h1{font-size:24px;line-height:1.25;margin:0 0 4px}
h2{font-size:17px;margin:0 0 14px}
h3{font-size:15px;margin:18px 0 8px}
.muted,.dir{color:var(--muted);font-weight:400}
.sub{color:var(--muted);margin:0}
section{background:#fff;border:1px solid var(--line);border-radius:10px;padding:20px 24px;margin:18px 0}
.alert{border-radius:8px;padding:12px 16px;margin:14px 0;font-weight:600}
.alert.bad{background:#fdecea;border:1px solid #f5c2bc;border-left:6px solid var(--bad);color:#7a1a12}
.alert.warn{background:#fff7e6;border:1px solid #f3d9a4;border-left:6px solid #c27c0e;color:#6b4406}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{padding:6px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
thead th{font-size:12px;color:var(--muted);font-weight:600;border-bottom:2px solid var(--line)}
td.num,th.num{text-align:right;white-space:nowrap}
tr.group th{background:var(--soft);color:var(--ink);font-size:13px;text-transform:none;letter-spacing:0}
tr.differs td,tr.differs th{background:#fff7e6}
table.config th,table.config td{padding:4px 10px;font-size:13px}table.config tbody th{font-weight:600;width:22%}
.range{color:#8a919c;font-size:12px;margin-right:4px}
.better{color:var(--good);font-weight:600}.worse{color:var(--bad);font-weight:600}.same{color:var(--muted)}
.mark{font-size:11px;color:var(--muted);margin-left:3px}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(210px,1fr));gap:12px}
.card{border:1px solid var(--line);border-radius:8px;padding:12px 14px;background:#fbfcfd}
.card .big{font-size:24px;font-weight:700;line-height:1.2}
.card .what{color:var(--ink)}.card .who{color:var(--muted);font-size:12px}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(460px,1fr));gap:24px 28px}
figure{margin:0 0 12px}
figcaption{font-weight:600;margin-bottom:6px}
svg.chart{display:block;width:100%;height:auto;font-family:inherit}
svg .tick{font-size:11px;fill:#6b7280}svg .axis{font-size:12px;fill:#374151}
svg .value{font-size:11px;fill:#111827;font-weight:600}svg .group{font-size:12px;fill:#374151}
svg .legend{font-size:12px;fill:#374151}svg .na{font-size:11px;fill:#9ca3af}
svg .whisker{stroke:#111827;stroke-opacity:.55;stroke-width:1.2;fill:none}
svg .wlabel{font-size:10px;fill:#4b5563}
details{margin-top:18px}summary{cursor:pointer;font-weight:600;color:var(--accent);margin-bottom:12px}
footer{color:var(--muted);font-size:12px;margin-top:8px}
table.nodes th,table.nodes td.run{white-space:nowrap}.scroll{overflow-x:auto}ul.cluster{margin:8px 0 12px}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
"""


def _verdict_class(verdict: str) -> str:
    return {"better": "better", "worse": "worse"}.get(verdict, "same")


def _header(c: Comparison) -> str:
    base = c.baseline
    kind = "Run report" if len(c.runs) == 1 else "Comparison"
    names = " vs ".join(r.name for r in reversed(c.runs)) if len(c.runs) > 1 else base.name
    suite = esc(base.suite) + (f" · paper {esc(base.paper)}" if base.paper else "")
    out = [
        f'<header><h1>{kind}: {esc(names)}</h1><p class="sub">Suite {suite} · scale {esc(base.scale or "?")}'
        + (f" · baseline <b>{esc(base.name)}</b>" if len(c.runs) > 1 else "")
        + "</p></header>"
    ]
    for note in c.warnings:
        cls = "bad" if note.startswith("NOT COMPARABLE") else "warn"
        out.append(f'<div class="alert {cls}" role="alert">⚠ {esc(note)}</div>')
    return "\n".join(out)


def _configuration(c: Comparison) -> str:
    single = len(c.runs) == 1
    head = "".join(
        f"<th>{esc(r.name)}{'' if single or r.index else ' <span class=dir>(baseline)</span>'}</th>" for r in c.runs
    )
    body = []
    for name, values, differs in f.configuration(c):
        if name == "Label":
            continue
        cells = "".join(f"<td>{esc(v)}</td>" for v in values)
        body.append(f"<tr{' class=differs' if differs else ''}><th>{esc(name)}</th>{cells}</tr>")
    note = '<p class="muted">Highlighted rows differ between the runs.</p>' if not single else ""
    return (
        f"<section><h2>Configuration</h2><table class=config><thead><tr><th></th>{head}</tr></thead>"
        f"<tbody>{''.join(body)}</tbody></table>{note}</section>"
    )


def _headlines(c: Comparison) -> str:
    if len(c.runs) == 1:
        return ""
    cards = []
    for h in c.headlines:
        row = next(
            (r for r in c.rows if r.workload == h.workload and r.metric == h.metric and r.phase != PREPARE), None
        )
        delta = row.deltas[h.run_index] if row else None
        cls = _verdict_class(delta.verdict) if delta else "same"
        who = f"{c.runs[h.run_index].name} vs {c.baseline.name}"
        cards.append(
            f'<div class="card"><div class="big {cls}">{esc(h.words)}</div>'
            f'<div class="what">{esc(h.subject[:1].upper() + h.subject[1:])}</div>'
            + (f'<div class="who">{esc(h.interval)}</div>' if h.interval else "")
            + f'<div class="who">{esc(who)}</div></div>'
        )
    inner = "".join(cards) or '<p class="muted">No significant differences.</p>'
    return f'<section><h2>Headlines</h2><div class="cards">{inner}</div></section>'


def _value(cell: Any) -> str:
    rng = f.spread(cell)
    return (f'<span class="range">{esc(rng)}</span> ' if rng else "") + esc(f.num(cell.aggregate))


def _primary(c: Comparison) -> Callable[[Row], bool]:
    """The rows each workload leads with (its paper's figures, Workload.headline) and, after them, paper 000's time
    and device figures: shown first (rows come in that order); the rest one click away. No such row: every row."""

    def shown(row: Row) -> bool:
        return c.leads(row) or row.metric in DEVICE_HEADLINE

    return shown if any(shown(row) for row in c.rows) else (lambda row: True)


def _table(c: Comparison, keep: Callable[[Row], bool]) -> str:
    single = len(c.runs) == 1
    head = "<th>Metric</th><th>Unit</th>" + "".join(f'<th class="num">{esc(r.name)}</th>' for r in c.runs[:1])
    for run in c.runs[1:]:
        head += f'<th class="num">{esc(run.name)}</th><th>vs {esc(c.baseline.name)}</th><th class="num">p</th>'
    if single:
        head += '<th class="num">Median</th><th class="num">n</th>'
    width = 3 * len(c.runs) + (2 if single else 0)
    body = []
    for group, rows in c.groups():
        rows = [row for row in rows if keep(row) and not queries.is_query_row(row) and not nodes.is_node_row(row)]
        if rows:
            body.append(f'<tr class="group"><th colspan="{width}">{esc(group)}</th></tr>')
        for row in rows:
            cells = (
                f"<td>{esc(row.title)} <span class=dir>({esc(row.spec.aggregation)})</span></td>"
                f"<td>{esc(row.unit)}</td><td class=num>{_value(row.cells[0])}</td>"
            )
            for cell, delta in zip(row.cells[1:], row.deltas[1:]):
                assert delta is not None
                mark = "" if delta.verdict in ("no change", "n/a") else delta.marker
                tip = (
                    delta.significance
                    + (f", p = {f.p_text(delta.p_value)}" if delta.p_value is not None else "")
                    + (f", q = {f.p_text(delta.q_value)}" if delta.q_value is not None else "")
                    + (f", {delta.interval}" if delta.interval else "")
                    + (f", smallest detectable change {delta.mde_pct:.1f}%" if delta.mde_pct is not None else "")
                )
                ci = f.ci_text(delta)
                cells += (
                    f'<td class=num>{_value(cell)}</td><td title="{esc(tip)}">'
                    f'<span class="{_verdict_class(delta.verdict)}">{esc(f.delta_text(delta, False))}</span>'
                    f"<span class=mark>{esc(mark)}</span>"
                    + (f" <span class=dir>{esc(ci)}</span>" if ci else "")
                    + f"</td><td class=num>{esc(f.p_text(delta.p_value))}</td>"
                )
            if single:
                cells += f"<td class=num>{esc(f.num(row.cells[0].median))}</td><td class=num>{row.cells[0].n}</td>"
            body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _summary(c: Comparison) -> str:
    primary = _primary(c)
    more = {
        row.metric
        for row in c.rows
        if not primary(row) and not queries.is_query_row(row) and not nodes.is_node_row(row)
    }
    extra = (
        f"<details><summary>All other metrics ({len(more)})</summary>"
        f"{_table(c, lambda row: not primary(row))}</details>"
        if more
        else ""
    )
    legend = (
        "Values are aggregates over the repetitions by each metric's rule (max or mean), "
        "with the min–max range in grey."
    )
    if len(c.runs) > 1:
        legend += (
            " Deltas are new/old − 1 of the aggregates; “faster” is the reduction in time, 1 − new/old. "
            + c.marker_legend
            + "."
        )
    return (
        f'<section><h2>Summary</h2>{_table(c, primary)}{extra}{_bounds(c)}<p class="muted">{esc(legend)}</p></section>'
    )


def _bounds(c: Comparison) -> str:
    """What limited each operation on the machine (runs with nodes: in their per-node section)."""
    said = "".join(
        f"<li><b>{esc(group)}</b> {esc(line)}</li>"
        for group, lines in limited.machine_lines(c).items()
        for line in lines
    )
    return f"<h3>What limited each operation</h3><ul>{said}</ul>" if said else ""


def _metric_chart(c: Comparison, metric: str, rows: list[Row]) -> str:
    spec, unit = rows[0].spec, rows[0].unit
    measured = [r for r in rows if any(cell.aggregate is not None for cell in r.cells)]
    rows = measured or rows  # a group no run measured (all n/a) is left out of the figure
    bars = [
        BarSeries(
            run.name,
            [r.cells[i].aggregate for r in rows],
            [r.cells[i].min if r.cells[i].n > 1 else None for r in rows],
            [r.cells[i].max if r.cells[i].n > 1 else None for r in rows],
            PALETTE[i % len(PALETTE)],
        )
        for i, run in enumerate(c.runs)
    ]
    svg = bar_chart(metric, f"{spec.title} ({unit})", unit, [r.group for r in rows], bars)
    rule = {"max": "maximum", "mean": "mean", "min": "minimum", "sum": "sum"}.get(spec.aggregation, spec.aggregation)
    scope = f" [{rows[0].scope_words}]" if rows[0].scope_words else ""  # an energy chart says what it covers
    return (
        f'<figure><figcaption>{esc(spec.title + scope)} <span class="dir">({esc(unit)}, {esc(spec.direction)}; '
        f"bars: {esc(rule)} over repetitions, whiskers: min–max)</span></figcaption>{svg}</figure>"
    )


def _charts(c: Comparison) -> str:
    main, more = [], []
    # the workloads' headline figures first, in their order, then paper 000's time and device ones
    lead = list(dict.fromkeys(c.headline_metrics() + [m for m in c.metrics() if m in DEVICE_HEADLINE])) or c.metrics()
    for metric in lead + [m for m in c.metrics() if m not in lead]:
        rows = [r for r in c.rows if r.metric == metric and not r.labels]
        rows = rows or [
            r for r in c.rows if r.metric == metric and not queries.is_query_row(r) and not nodes.is_node_row(r)
        ]
        if not rows:  # per-query and per-node rows have their own charts (report.queries, report.nodes_html)
            continue
        (main if metric in lead else more).append(_metric_chart(c, metric, rows))
    extra = (
        f'<details><summary>More metrics ({len(more)} charts)</summary><div class="charts">{"".join(more)}'
        "</div></details>"
        if more
        else ""
    )
    return f'<section><h2>Charts</h2><div class="charts">{"".join(main)}</div>{extra}</section>'


def _series(c: Comparison, loader: SeriesLoader | None) -> str:
    if loader is None or not c.source_runs:
        return ""
    prepared = []
    for info, run in zip(c.runs, c.source_runs):
        try:
            rows, windows = loader(run)
            prepared.append(
                series.prepare(
                    info.run_id, info.name, list(rows or []), list(windows or []), nodes.titles(run.manifest)
                )
            )
        except Exception as exc:  # a missing or damaged series must not lose the rest of the report
            broken = series.prepare(info.run_id, info.name, [], [])
            broken.note = f"Telemetry series unavailable: {type(exc).__name__}: {exc}"
            prepared.append(broken)
    t_max = max(s.t_max for s in prepared)
    top = max(s.throughput_max for s in prepared)
    parts = [series.section(s, t_max, top) for s in prepared]
    note = (
        '<p class="muted">All runs share the time and throughput axes. Shaded: the timed operations '
        "(#n = repetition); the legend names each shade.</p>"
        if len(prepared) > 1
        else ""
    )
    return f"<section><h2>Telemetry over time</h2>{note}{''.join(parts)}</section>"


@register("html", "a self-contained page with charts and the runs' telemetry series", series=True)
def render_html(comparison: Comparison, series_loader: SeriesLoader | None = None) -> str:
    c = comparison
    # results first (a newcomer reads from the top), the configuration they were measured on after them
    body = "\n".join(
        filter(
            None,
            [
                _header(c),
                _headlines(c),
                _summary(c),
                _charts(c),
                published_figures.html_section(c),
                queries.html_section(c),
                nodes_html.html_section(c),
                _series(c, series_loader),
                _configuration(c),
            ],
        )
    )
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{esc(f.title(c))}</title><style>{CSS}</style></head>\n<body><main>\n{body}\n"
        f"<footer>Generated by storbench {esc(__version__)} from stored runs "
        f"{esc(', '.join(r.run_id for r in c.runs))}.</footer>\n</main></body></html>\n"
    )
