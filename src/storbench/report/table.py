"""Aligned plain text for a terminal: configuration, warnings, headlines, one block per workload."""

from __future__ import annotations

import textwrap

from storbench.analysis.model import Comparison
from storbench.report import _format as f
from storbench.report import limited, nodes, queries
from storbench.report.grid import align
from storbench.report.registry import register


def _warning_lines(comparison: Comparison) -> list[str]:
    out = []
    for note in comparison.warnings:
        out += textwrap.wrap(note, 100, initial_indent="!! ", subsequent_indent="   ")
    return out + ([""] if out else [])


@register("table", "aligned plain text for a terminal (the default)")
def render_table(comparison: Comparison) -> str:
    runs = comparison.runs
    single = len(runs) == 1
    lines = [f.title(comparison), ""]
    lines += _warning_lines(comparison)

    lines.append("Configuration")
    config = [["", *[r.name + (" (baseline)" if r.index == 0 and not single else "") for r in runs]]]
    config += [
        [name + (" *" if differs else ""), *values]
        for name, values, differs in f.configuration(comparison)
        if name != "Label"
    ]
    lines += align(config) + [""]

    if not single:
        lines.append("Headlines")
        lines += [f"  - {h.text}" for h in comparison.headlines] or [f"  {comparison.no_headline_text()}"]
        lines.append("")

    base = runs[0].name
    bounds = limited.machine_lines(comparison)  # runs with nodes say it under their per-node tables
    for group, rows in comparison.groups():
        # per query and per node: one line each, below
        rows = [row for row in rows if not queries.is_query_row(row) and not nodes.is_node_row(row)]
        if not rows:
            continue
        lines.append(group)
        if single:
            table = [["Metric", "Unit", "Value [min–max]", "Median", "Stddev", "n"]]
            table += [
                [
                    row.title,
                    row.unit,
                    f.cell_text(row.cells[0]),
                    f.num(row.cells[0].median),
                    f.num(row.cells[0].stdev) if row.cells[0].n > 1 else "",
                    str(row.cells[0].n),
                ]
                for row in rows
            ]
            lines += align(table, right={2, 3, 4, 5})
        else:
            header = ["Metric", "Unit", base]
            for run in runs[1:]:
                header += [run.name, f"{run.name} vs {base}"]
            table = [header]
            for row in rows:
                cells = [row.title, row.unit, f.cell_text(row.cells[0])]
                for cell, delta in zip(row.cells[1:], row.deltas[1:]):
                    cells += [f.cell_text(cell), f.delta_ci_text(delta)]
                table.append(cells)
            lines += align(table, right={2, *range(3, len(header), 2)})
        lines += [f"  {line}" for line in bounds.get(group, [])]
        lines.append("")

    lines += queries.text_lines(comparison)
    lines += nodes.text_lines(comparison)
    lines.append(
        "Values: aggregate over repetitions (maximum for throughput and CPU, mean for latency and time) [min–max]."
    )
    if not single:
        lines.append("Deltas: new/old − 1 of the aggregates; 'faster' = less time (1 − new/old).")
        lines += textwrap.wrap(comparison.marker_legend, 100)
    if not comparison.comparable:
        lines.append("* in Configuration: differs between the runs.")
    return "\n".join(lines).rstrip() + "\n"
