"""The comparison as JSON: runs, differences, headlines and every row's values, aggregates,
deltas and p-values (:meth:`Comparison.to_dict`)."""

from __future__ import annotations

import json
import math
from typing import Any

from storbench.analysis.model import Comparison
from storbench.report.queries import check_summaries
from storbench.report.registry import register


def _finite(value: Any) -> Any:
    """JSON has no NaN or Infinity (a t statistic of two constant samples): they become null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


@register("json", "every figure and warning as JSON")
def render_json(comparison: Comparison) -> str:
    data = comparison.to_dict()
    checks = check_summaries(comparison)  # TPC-DS: "104 ran: 86 checked equal, 18 unchecked" per run
    if checks:
        data["query_checks"] = checks
    return json.dumps(_finite(data), indent=2, default=str, allow_nan=False) + "\n"
