"""GitHub Markdown: warnings, configuration table, headlines and one table per workload."""

from __future__ import annotations

from storbench.analysis.model import Comparison
from storbench.report import _format as f
from storbench.report import limited, nodes, queries
from storbench.report.grid import markdown_table
from storbench.report.registry import register


def esc(text: object) -> str:
    """Text in a table cell or line: pipes would split the cell, "<" could open an HTML tag."""
    out = str(text).replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`").replace("\n", " ")
    return out.replace("<", "&lt;").replace(">", "&gt;")


@register("md", "GitHub Markdown", aliases=("markdown",))
def render_markdown(comparison: Comparison) -> str:
    runs = comparison.runs
    single = len(runs) == 1
    lines = [f"# {esc(f.title(comparison))}", ""]
    for note in comparison.warnings:
        lines += [f"> **Warning:** {esc(note)}", ">"]
    if comparison.warnings:
        lines[-1] = ""

    lines += ["## Configuration", ""]
    header = ["", *[esc(r.name) + (" (baseline)" if r.index == 0 and not single else "") for r in runs]]
    body = [
        [f"**{esc(name)}** (differs)" if differs else esc(name), *[esc(v) for v in values]]
        for name, values, differs in f.configuration(comparison)
        if name != "Label"
    ]
    lines += markdown_table(header, body) + [""]

    if not single:
        lines += ["## Headlines", ""]
        lines += [f"- {esc(h.text)}" for h in comparison.headlines] or ["- No significant differences."]
        lines.append("")

    lines += ["## Results", ""]
    base = runs[0].name
    bounds = limited.machine_lines(comparison)  # runs with nodes say it under their per-node tables
    for group, rows in comparison.groups():
        # per query and per node: one line each, below
        rows = [row for row in rows if not queries.is_query_row(row) and not nodes.is_node_row(row)]
        if not rows:
            continue
        lines += [f"### {esc(group)}", ""]
        if single:
            head = ["Metric", "Unit", "Value [min–max]", "Median", "n"]
            body = [
                [
                    esc(row.title),
                    esc(row.unit),
                    esc(f.cell_text(row.cells[0])),
                    esc(f.num(row.cells[0].median)),
                    str(row.cells[0].n),
                ]
                for row in rows
            ]
            lines += markdown_table(head, body, right={2, 3, 4})
        else:
            head = ["Metric", "Unit", esc(base)]
            for run in runs[1:]:
                head += [esc(run.name), f"{esc(run.name)} vs {esc(base)}", "p"]
            body = []
            for row in rows:
                cells = [esc(row.title), esc(row.unit), esc(f.cell_text(row.cells[0]))]
                for cell, delta in zip(row.cells[1:], row.deltas[1:]):
                    cells += [
                        esc(f.cell_text(cell)),
                        esc(f.delta_ci_text(delta)),
                        esc(f.p_text(delta.p_value if delta else None)),
                    ]
                body.append(cells)
            lines += markdown_table(head, body, right={2, *range(3, len(head), 3)})
        if group in bounds:
            lines += ["", *(f"- {esc(line)}" for line in bounds[group])]
        lines.append("")

    lines += queries.markdown_lines(comparison, esc)
    lines += nodes.markdown_lines(comparison, esc)
    lines.append(
        "Values are aggregates over the repetitions (maximum for throughput and CPU, mean for latency "
        "and time to complete), with [min–max] over the repetitions."
    )
    if not single:
        lines += [
            "",
            'Deltas are new/old − 1 of the aggregates; "faster" is the reduction of time (1 − new/old). '
            + esc(comparison.marker_legend)
            + ".",
        ]
    return "\n".join(lines).rstrip() + "\n"
