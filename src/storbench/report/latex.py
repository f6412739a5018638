"""LaTeX: one booktabs table per workload, to paste into a paper (``\\usepackage{booktabs}`` in its preamble).

Each table holds the metric, its unit, every run's aggregate with [min–max] over the repetitions and, for a
comparison, each run's change against the first (the baseline) with its 95% interval. Per-query and per-node
rows stay in the other formats.
"""

from __future__ import annotations

from storbench.analysis.model import Comparison
from storbench.report import _format as f
from storbench.report import nodes, queries
from storbench.report.registry import register

SPECIAL = {c: "\\" + c for c in "&%$#_{}"} | {
    "\\": r"\textbackslash{}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "–": "--",  # the figures' own symbols, as text mode can set them without extra packages
    "−": r"\ensuremath{-}",
    "×": r"\ensuremath{\times}",
    "÷": r"\ensuremath{\div}",
    "≥": r"\ensuremath{\geq}",
    "∞": r"\ensuremath{\infty}",
    "·": r"\ensuremath{\cdot}",
    "±": r"\ensuremath{\pm}",
}


def esc(text: object) -> str:
    return "".join(SPECIAL.get(c, c) for c in str(text))


def _row(cells: list[str]) -> str:
    return " & ".join(cells) + r" \\"


@register("latex", "one LaTeX table (booktabs) per workload, to paste into a paper")
def render_latex(comparison: Comparison) -> str:
    runs = comparison.runs
    base = runs[0].name
    out = [f"% {esc(f.title(comparison))}: storbench compare {' '.join(r.run_id for r in runs)}"]
    out += [f"% !! {esc(note)}" for note in comparison.warnings]
    for group, rows in comparison.groups():
        rows = [row for row in rows if not queries.is_query_row(row) and not nodes.is_node_row(row)]
        if not rows:
            continue
        head = ["Metric", "Unit", *[esc(r.name) for r in runs], *[f"{esc(r.name)} vs {esc(base)}" for r in runs[1:]]]
        out += [
            "",
            r"\begin{table}[ht]",
            r"\centering",
            rf"\caption{{{esc(group)}}}",
            r"\begin{tabular}{ll" + "r" * (len(head) - 2) + "}",
            r"\toprule",
            _row([rf"\textbf{{{h}}}" for h in head]),
            r"\midrule",
        ]
        for row in rows:
            values = [esc(f.cell_text(cell)) for cell in row.cells]
            changes = [esc(f.delta_ci_text(delta)) for delta in row.deltas[1:]]
            out.append(_row([esc(row.title), esc(row.unit), *values, *changes]))
        out += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    if len(runs) > 1:  # what the changes' markers mean
        out += ["", f"% {esc(comparison.marker_legend)}"]
    return "\n".join(out) + "\n"
