"""Per-query results (TPC-DS) in reports: rows labelled ``query`` are shown here, one line per query,
instead of one row per query and metric in the workload's table.

Each line has every run's query time, the change against the baseline, and a flag when a run's
query failed or did not match the reference answer (``query_ok`` below 1), was not checked
against one (``query_ok`` n/a: never OK), or did not run. Lines are sorted by the change (the
largest slow-down first); a single run is sorted by time. HTML adds a chart of the same order: one
bar per run per query, the change and the flag beside it. Above them, one line per run and stream
count from the workload's counts: "104 ran: 86 checked equal, 18 unchecked" (mismatched and failed
when there are any); JSON has the same as ``query_checks``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from storbench.analysis.model import Comparison, Row
from storbench.report import _format as f
from storbench.report.grid import align
from storbench.report.svg import PALETTE, esc

LABEL = "query"
SPARK_METRICS = (
    ("spark_input_mb", "input MB"),
    ("shuffle_read_mb", "shuffle read MB"),
    ("shuffle_read_blocked_s", "fetch wait s"),
)
# The workload's counts per stream count (storbench.workloads.tpcds.outcomes), in the summary's words
RAN = "queries_ran"
COUNTS = (
    ("queries_checked_equal", "checked equal"),
    ("queries_mismatched", "mismatched"),
    ("queries_failed", "failed"),
    ("queries_unchecked", "unchecked"),
)
FLAGS = {"failed": "FAILED", "unchecked": "unchecked", "missing": "not run"}  # a run's check → its flag


def is_query_row(row: Row) -> bool:
    return LABEL in row.labels


@dataclass
class QueryLine:
    workload: str
    set_name: str  # "streams=1" (the labels other than the query)
    query: str
    times: list[float | None]
    delta_pct: float | None  # the last run against the baseline
    delta_words: str
    verdict: str
    checks: list[str]  # per run: equal, failed (or mismatched), unchecked, missing (not run), "" (not recorded)
    spark: dict[str, list[float | None]] = field(default_factory=dict)

    @property
    def failed(self) -> list[bool]:
        return [check == "failed" for check in self.checks]


def _check(cell: Any) -> str:
    """A run's check of one query from its ``query_ok`` cell: 1 equal, 0 failed or mismatched, n/a unchecked."""
    if not cell.values:
        return "missing"
    if cell.aggregate is None:
        return "unchecked"
    return "equal" if cell.aggregate >= 1 else "failed"


def query_lines(c: Comparison) -> list[QueryLine]:
    by_key: dict[tuple[str, str, str], dict[str, Row]] = {}
    for row in c.rows:
        if is_query_row(row):
            rest = ", ".join(f"{k}={v}" for k, v in sorted(row.labels.items()) if k != LABEL)
            by_key.setdefault((row.workload, rest, row.labels[LABEL]), {})[row.metric] = row
    lines = []
    for (workload, rest, query), rows in by_key.items():
        time_row, ok_row = rows.get("query_time"), rows.get("query_ok")
        if time_row is None:
            continue
        delta = time_row.deltas[-1] if len(c.runs) > 1 else None
        checks = [_check(cell) for cell in ok_row.cells] if ok_row else [""] * len(time_row.cells)
        lines.append(
            QueryLine(
                workload,
                rest,
                query,
                [cell.aggregate for cell in time_row.cells],
                delta.pct if delta else None,
                f.delta_text(delta, False) if delta else "",
                delta.verdict if delta else "n/a",
                checks,
                {m: [cell.aggregate for cell in rows[m].cells] for m, _ in SPARK_METRICS if m in rows},
            )
        )
    return lines


def _sorted(lines: list[QueryLine], single: bool) -> list[QueryLine]:
    if single:
        return sorted(lines, key=lambda q: -(q.times[0] or 0.0))
    return sorted(lines, key=lambda q: (q.delta_pct is None, -(q.delta_pct or 0.0)))


def _sets(c: Comparison) -> list[tuple[str, str, list[QueryLine]]]:
    sets: dict[tuple[str, str], list[QueryLine]] = {}
    for line in query_lines(c):
        sets.setdefault((line.workload, line.set_name), []).append(line)
    return [(w, s, _sorted(lines, len(c.runs) == 1)) for (w, s), lines in sets.items()]


def check_summaries(c: Comparison) -> list[dict[str, Any]]:
    """Per workload, stream count and run: how many queries ran, and the four counts, with the summary line."""
    found: dict[tuple[str, str], dict[str, Row]] = {}
    for row in c.rows:
        if row.metric in (RAN, *(m for m, _ in COUNTS)) and not is_query_row(row):
            rest = ", ".join(f"{k}={v}" for k, v in sorted(row.labels.items()))
            found.setdefault((row.workload, rest), {})[row.metric] = row
    out = []
    for (workload, rest), rows in found.items():
        if RAN not in rows:
            continue
        for index, run in enumerate(c.runs):
            ran = rows[RAN].cells[index].aggregate
            if ran is None:
                continue
            counts = {m: rows[m].cells[index].aggregate if m in rows else None for m, _ in COUNTS}
            shown = [
                f"{'n/a' if counts[m] is None else f'{counts[m]:g}'} {words}"
                for m, words in COUNTS
                if m == "queries_checked_equal" or counts[m]
            ]
            text = f"{ran:g} ran: {', '.join(shown)}"
            out.append(
                {
                    "workload": workload,
                    "set": rest,
                    "run": run.name,
                    "ran": ran,
                    **{m.removeprefix("queries_"): counts[m] for m, _ in COUNTS},
                    "text": text,
                    "line": f"{workload} queries{f' ({rest})' if rest else ''}, run {run.name}: {text}",
                }
            )
    return out


def check_lines(c: Comparison) -> list[str]:
    """The summary lines: 'tpcds queries (streams=1), run a: 104 ran: 86 checked equal, 18 unchecked'."""
    return [entry["line"] for entry in check_summaries(c)]


def failures(c: Comparison) -> list[str]:
    """One sentence per run with failed or mismatched queries."""
    out = []
    for index, run in enumerate(c.runs):
        bad = [
            f"{q.query}" + (f" ({q.set_name})" if q.set_name else "")
            for _, _, lines in _sets(c)
            for q in lines
            if q.failed[index]
        ]
        if bad:
            noun = "query" if len(bad) == 1 else "queries"
            out.append(
                f"run {run.name}: {len(bad)} {noun} FAILED or mismatched: {', '.join(bad[:20])}"
                + (" …" if len(bad) > 20 else "")
            )
    return out


def _flag(q: QueryLine, names: list[str]) -> str:
    return ", ".join(f"{FLAGS[check]} in {name}" for name, check in zip(names, q.checks) if check in FLAGS)


def text_lines(c: Comparison) -> list[str]:
    names = [run.name for run in c.runs]
    out: list[str] = check_lines(c)
    out += [""] if out else []
    for workload, set_name, lines in _sets(c):
        order = "by time" if len(names) == 1 else "by change, largest slow-down first"
        out.append(f"{workload}: per-query times{f' ({set_name})' if set_name else ''}, s, sorted {order}")
        header = ["Query", *names] + ([f"{names[-1]} vs {names[0]}"] if len(names) > 1 else []) + ["Flag"]
        body = [
            [q.query, *[f.num(t) for t in q.times]] + ([q.delta_words] if len(names) > 1 else []) + [_flag(q, names)]
            for q in lines
        ]
        out += align([header, *body], right=set(range(1, len(names) + 1))) + [""]
    out += [f"!! {text}" for text in failures(c)]
    return out + ([""] if failures(c) else [])


def markdown_lines(c: Comparison, esc_md: Callable[[str], str]) -> list[str]:
    names = [run.name for run in c.runs]
    out: list[str] = []
    for text in failures(c):
        out += [f"> **{esc_md(text)}**", ""]
    checks = check_lines(c)
    out += [f"- {esc_md(line)}" for line in checks] + ([""] if checks else [])
    for workload, set_name, lines in _sets(c):
        out += [f"### {esc_md(workload)}: per-query times{esc_md(f' ({set_name})' if set_name else '')}", ""]
        header = ["Query", *[esc_md(n) + " (s)" for n in names]] + (["Change"] if len(names) > 1 else []) + ["Flag"]
        out.append("| " + " | ".join(header) + " |")
        out.append(
            "| " + " | ".join(["---"] + ["---:"] * len(names) + (["---"] if len(names) > 1 else []) + ["---"]) + " |"
        )
        for q in lines:
            cells = [q.query, *[f.num(t) for t in q.times]] + ([q.delta_words] if len(names) > 1 else [])
            out.append("| " + " | ".join(esc_md(x) for x in cells + [_flag(q, names)]) + " |")
        out.append("")
    return out


def _chart(c: Comparison, workload: str, set_name: str, lines: list[QueryLine]) -> str:
    names = [run.name for run in c.runs]
    bar, gap, left, right, width = 7, 6, 70, 190, 760
    row_h = bar * len(names) + gap
    top = 26
    height = top + row_h * len(lines) + 10
    longest = max([t for q in lines for t in q.times if t is not None] or [1.0])
    scale = (width - left - right) / longest
    label = f"{workload}: per-query time (s){f', {set_name}' if set_name else ''}"
    parts = [
        f'<svg class="chart" data-metric="queries:{esc(workload)}:{esc(set_name)}" '
        f'xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{esc(label)}"><title>{esc(label)}</title>'
    ]
    x = left
    for i, name in enumerate(names):  # legend
        parts.append(
            f'<rect x="{x}" y="6" width="12" height="12" fill="{PALETTE[i % len(PALETTE)]}"/>'
            f'<text x="{x + 16}" y="16" class="legend">{esc(name)}</text>'
        )
        x += 30 + 7 * len(name)
    for row, q in enumerate(lines):
        y0 = top + row * row_h
        failed, flagged = any(q.failed), _flag(q, names)
        fill = ' fill="#b42318"' if failed else ' fill="#b54708"' if flagged else ""
        parts.append(
            f'<text x="{left - 6}" y="{y0 + row_h / 2 + 2:.1f}" text-anchor="end" class="group"{fill}>'
            f"{esc(q.query)}</text>"
        )
        for i, value in enumerate(q.times):
            y = y0 + i * bar
            if value is None:
                parts.append(f'<text x="{left + 2}" y="{y + bar - 1}" class="na">n/a</text>')
                continue
            parts.append(
                f'<rect x="{left}" y="{y}" width="{max(1.0, value * scale):.1f}" height="{bar - 1}" '
                f'fill="{PALETTE[i % len(PALETTE)]}"><title>{esc(q.query)} {esc(names[i])}: '
                f"{esc(f.num(value))} s</title></rect>"
            )
        note = flagged or q.delta_words
        color = (
            "#b42318"
            if failed or (q.verdict == "worse" and not flagged)
            else "#b54708"
            if flagged
            else "#17794a"
            if q.verdict == "better"
            else "#6b7280"
        )
        parts.append(
            f'<text x="{width - right + 8}" y="{y0 + row_h / 2 + 2:.1f}" class="wlabel" fill="{color}">'
            f"{esc(note)}</text>"
        )
    return "".join(parts) + "</svg>"


def html_section(c: Comparison) -> str:
    sets = _sets(c)
    if not sets:
        return ""
    alerts = "".join(f'<div class="alert bad" role="alert">⚠ {esc(text)}</div>' for text in failures(c))
    checks = check_lines(c)
    alerts += f'<ul class="checks">{"".join(f"<li>{esc(line)}</li>" for line in checks)}</ul>' if checks else ""
    order = "by time" if len(c.runs) == 1 else "by change against the baseline, the largest slow-down first"
    figures = "".join(
        f"<figure><figcaption>{esc(w)}{esc(f' ({s})' if s else '')} <span class=dir>(sorted "
        f"{esc(order)}; red: failed or mismatched; amber: unchecked or not run)</span></figcaption>{_chart(c, w, s, lines)}</figure>"
        for w, s, lines in sets
    )
    return f"<section><h2>Per-query times</h2>{alerts}{figures}{_spark_table(c, sets)}</section>"


def _spark_table(c: Comparison, sets: list[tuple[str, str, list[QueryLine]]]) -> str:
    names = [run.name for run in c.runs]
    head = "<th>Query</th>" + "".join(
        f'<th class="num">{esc(label)} {esc(n)}</th>' for _, label in SPARK_METRICS for n in names
    )
    body = []
    for workload, set_name, lines in sets:
        body.append(
            f'<tr class="group"><th colspan="{1 + len(SPARK_METRICS) * len(names)}">{esc(workload)} '
            f"{esc(set_name)}</th></tr>"
        )
        for q in lines:
            cells = "".join(
                f"<td class=num>{esc(f.num(v))}</td>"
                for m, _ in SPARK_METRICS
                for v in q.spark.get(m, [None] * len(names))
            )
            body.append(f"<tr><td>{esc(q.query)}</td>{cells}</tr>")
    return (
        f"<details><summary>Spark metrics per query (from the event log)</summary><table><thead><tr>{head}"
        f"</tr></thead><tbody>{''.join(body)}</tbody></table></details>"
    )
