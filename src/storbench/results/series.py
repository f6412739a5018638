"""A run's series as CSV (``telemetry.csv``, ``power.csv``): rows of numbers, ``t`` first.

The format of stored files belongs to the results layer: telemetry writes it, the store
reads it back for the reports.
"""

from __future__ import annotations

import csv
import io
from typing import Any


def to_csv(rates: list[dict[str, Any]]) -> str:
    """The series as CSV: ``t`` first, then every column in first-seen order; None is an empty cell."""
    columns = ["t"] + list(dict.fromkeys(key for row in rates for key in row if key != "t"))
    return _csv([columns]) + csv_lines(rates, columns)


def csv_lines(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """``rows`` as CSV lines (no header) in ``columns``, other keys left out; None is an empty cell."""
    return _csv([["" if row.get(c) is None else repr(float(row[c])) for c in columns] for row in rows])


def _csv(cells: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(cells)
    return out.getvalue()


def from_csv(text: str) -> list[dict[str, float | None]]:
    """Rows back from :func:`to_csv`: every cell a float, or None where it was empty."""
    return [
        {key: float(value) if value else None for key, value in row.items()}
        for row in csv.DictReader(io.StringIO(text))
    ]
