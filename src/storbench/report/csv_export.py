"""One CSV row per (workload, metric, run): the run's aggregate, spread and delta vs the baseline."""

from __future__ import annotations

import csv
import io

from storbench.analysis.model import Comparison
from storbench.report.registry import register

COLUMNS = [
    "workload",
    "phase",
    "metric",
    "title",
    "unit",
    "direction",
    "aggregation",
    "run_index",
    "label",
    "run_id",
    "status",
    "baseline",
    "n",
    "aggregate",
    "min",
    "median",
    "max",
    "mean",
    "stdev",
    "values",
    "delta_pct",
    "delta_words",
    "factor",
    "t",
    "df",
    "p_value",
    "significance",
    "comparable",
    # after the older columns: q (Benjamini–Hochberg), the test, the 95% CI on the ratio, the MDE (%)
    "q_value",
    "test",
    "ci_low",
    "ci_high",
    "mde_pct",
]


def _v(value: object) -> object:
    return "" if value is None else value


@register("csv", "one row per metric and run")
def render_csv(comparison: Comparison) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in comparison.rows:
        for cell, delta in zip(row.cells, row.deltas):
            run = comparison.runs[cell.run_index]
            writer.writerow(
                [
                    row.workload,
                    row.phase,
                    row.metric,
                    row.title,
                    row.unit,
                    row.spec.direction,
                    row.spec.aggregation,
                    cell.run_index,
                    run.label,
                    run.run_id,
                    run.status,
                    "yes" if cell.run_index == 0 else "no",
                    cell.n,
                    _v(cell.aggregate),
                    _v(cell.min),
                    _v(cell.median),
                    _v(cell.max),
                    _v(cell.mean),
                    _v(cell.stdev),
                    ";".join("" if v is None else repr(v) for v in cell.values),
                    "" if delta is None or delta.pct is None else round(delta.pct, 6),
                    "" if delta is None else delta.words,
                    "" if delta is None else _v(delta.factor_words),
                    "" if delta is None else _v(delta.t),
                    "" if delta is None else _v(delta.df),
                    "" if delta is None else _v(delta.p_value),
                    "" if delta is None else delta.significance,
                    "yes" if comparison.comparable else "no",
                    *(
                        [""] * 5
                        if delta is None
                        else [_v(delta.q_value), _v(delta.test), _v(delta.ci_low), _v(delta.ci_high), _v(delta.mde_pct)]
                    ),
                ]
            )
    return out.getvalue()
