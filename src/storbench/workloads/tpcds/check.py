"""Result checking for TPC-DS queries: a row count and an order-insensitive checksum per column,
compared between Spark's result and DuckDB's answer over the same files.

The checksum of a column is (values that are NULL, and for numbers their sum, for anything else
the sum of the CRC-32 of its text). Numbers compare with a tolerance, because the engines round
differently (Spark's avg of a decimal keeps 6 decimals, DuckDB's is a double); everything else,
the row count and the NULL counts compare exactly. Column names are not compared (the engines
name unaliased expressions differently), their number and order are.
"""

from __future__ import annotations

import datetime
import decimal
import math
import zlib
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

REL_TOL = 1e-6
ABS_TOL_PER_ROW = 1e-4


@dataclass
class ResultSummary:
    rows: int
    columns: list[dict[str, Any]] = field(default_factory=list)  # {"nulls": n, "sum": x} or {"nulls", "crc"}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "ResultSummary":
        return cls(int(data["rows"]), list(data.get("columns") or []))

    @property
    def checksum(self) -> str:
        """A short text form for reports: crc32 of the exact parts and the numbers to 6 digits."""
        parts = [str(self.rows)]
        for column in self.columns:
            value = column.get("sum")
            parts.append(
                f"{column['nulls']}:{column['crc']}"
                if "crc" in column
                else f"{column['nulls']}:{'' if value is None else f'{value:.6g}'}"
            )
        return f"{zlib.crc32('|'.join(parts).encode()):08x}"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool)


def _text(value: Any) -> str:
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def summarize(rows: Iterable[tuple[Any, ...]]) -> ResultSummary:
    rows = [tuple(row) for row in rows]
    width = len(rows[0]) if rows else 0
    columns = []
    for index in range(width):
        values = [row[index] for row in rows]
        present = [v for v in values if v is not None]
        nulls = len(values) - len(present)
        if present and all(_is_number(v) for v in present):
            total = math.fsum(float(v) for v in present)
            columns.append({"nulls": nulls, "sum": total if math.isfinite(total) else None})
        else:
            columns.append({"nulls": nulls, "crc": sum(zlib.crc32(_text(v).encode()) for v in present)})
    return ResultSummary(len(rows), columns)


def mismatch(expected: ResultSummary, got: ResultSummary) -> str | None:
    """Why ``got`` differs from ``expected`` (one short sentence), or None when they agree."""
    if got.rows != expected.rows:
        return f"{got.rows} rows, expected {expected.rows}"
    if got.rows == 0:
        return None
    if len(got.columns) != len(expected.columns):
        return f"{len(got.columns)} columns, expected {len(expected.columns)}"
    for index, (want, have) in enumerate(zip(expected.columns, got.columns), start=1):
        if want["nulls"] != have["nulls"]:
            return f"column {index}: {have['nulls']} NULLs, expected {want['nulls']}"
        if "sum" in want and "sum" in have:
            a, b = want["sum"], have["sum"]
            if (a is None) != (b is None) or (
                a is not None and not math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL_PER_ROW * got.rows)
            ):
                return f"column {index}: sum {b}, expected {a}"
        elif "crc" in want and "crc" in have:
            if want["crc"] != have["crc"]:
                return f"column {index}: values differ (checksum)"
        elif want["nulls"] != expected.rows:  # a column of only NULLs has no type to compare
            return f"column {index}: numbers on one side, text on the other"
    return None


# DuckDB's defaults differ from Spark's in two places the TPC-DS texts leave open: NULLs sort last
# (q33 orders by a sum that can be NULL, then keeps 100 rows) and x/0 is NaN or inf (q12's ratio).
# The reference answers use Spark's (and standard SQL's) behaviour: NULLs first, x/0 is NULL.
DUCKDB_SETTINGS = ("SET default_null_order = 'nulls_first'", "SET ieee_floating_point_ops = false")


def duckdb_answers(con: Any, texts: dict[str, str]) -> dict[str, dict[str, Any]]:
    """Query name → {"summary": ...} or {"error": ...}, DuckDB running its own dialect."""
    for setting in DUCKDB_SETTINGS:
        con.execute(setting)
    answers: dict[str, dict[str, Any]] = {}
    for name, text in texts.items():
        try:
            answers[name] = {"summary": summarize(con.execute(text).fetchall()).to_dict()}
        except Exception as exc:  # recorded: that query's check is then reported as not possible
            answers[name] = {"error": f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:200]}"}
    return answers
