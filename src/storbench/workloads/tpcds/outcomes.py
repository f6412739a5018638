"""What a TPC-DS stream run says of each query: its time, its outcome, and the four counts.

A query's outcome is one of four: checked equal (status "ok": its result matched DuckDB's answer on the
same files), mismatched, failed (an error), or unchecked (no reference answer). Only checked equal is
OK: ``query_ok`` is 1 for it, 0 for mismatched or failed, and None (n/a) for unchecked, which was not
compared with anything, so that it reads neither as OK nor as a failure (and compare's aggregate of
it stays n/a). ``queries_ran`` and the four counts per stream count give the reports' line
"104 ran: 86 checked equal, 18 unchecked" (:mod:`storbench.report.queries`).
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from storbench.results.model import Sample
from storbench.workloads.tpcds.queries import select_queries

OUTCOMES = ("ok", "mismatch", "failed", "unchecked")  # a query execution's status (streams.py)
COUNTS = (
    ("queries_checked_equal", "ok"),
    ("queries_mismatched", "mismatch"),
    ("queries_failed", "failed"),
    ("queries_unchecked", "unchecked"),
)


def checked(params: dict[str, Any]) -> list[str]:
    """The queries of ``queries`` that ``check_queries`` asks to check against DuckDB."""
    wanted = set(select_queries(params["check_queries"]))
    return [name for name in select_queries(params["queries"]) if name in wanted]


def references(
    answers: dict[str, Any],
    names: list[str],
    to_check: list[str],
    sf: float,
    local: bool,
    data_uri: str,
    check_max_sf: float,
) -> dict[str, Any]:
    """DuckDB's answer for each query (``{"summary"}`` or ``{"error"}``), or ``{"why"}`` it has none."""
    if sf > check_max_sf:
        why = f"scale factor {sf:g} is above check_max_sf={check_max_sf:g}"
    elif not local:
        why = f"DuckDB cannot read {data_uri} from this machine"
    else:
        why = "not in check_queries"
    return {
        name: answers[name] if name in to_check and name in answers else {"why": f"no reference answer: {why}"}
        for name in names
    }


def outcome_of(runs: list[dict[str, Any]]) -> str:
    """A query's outcome over its N executions (one per stream): the worst of them."""
    return next((o for o in ("failed", "mismatch", "unchecked") if any(r["status"] == o for r in runs)), "ok")


def run_samples(
    workload: str,
    notes: list[str],
    names: list[str],
    n: int,
    result: dict[str, Any],
    sf: float,
    cores: int,
    single: dict[str, Any] | None,
) -> list[Sample]:
    """The samples of one stream count's run; failures and unchecked queries also go to ``notes``."""
    labels = {"streams": str(n)}
    out, failed, times = [], [], []
    counts = dict.fromkeys(OUTCOMES, 0)
    unchecked: dict[str, list[str]] = {}  # why → queries
    for name in names:
        runs = [s["results"][name] for s in result["streams"]]
        outcome = outcome_of(runs)
        counts[outcome] += 1
        ran = outcome in ("ok", "unchecked")
        seconds = [r["seconds"] for r in runs] if ran else []
        times += seconds
        query = {"query": name, **labels}
        out += [
            Sample(workload, "query_time", statistics.median(seconds) if ran else None, "s", labels=query),
            Sample(workload, "query_ok", {"ok": 1.0, "unchecked": None}.get(outcome, 0.0), "ok", labels=query),
        ]
        out += _catalog_samples(workload, runs if ran else [], query)
        first = next(r for r in runs if r["status"] == outcome)
        if not ran:
            failed.append(f"{name} ({outcome}: {first.get('error') or first.get('why')})")
        elif outcome == "unchecked":
            unchecked.setdefault(first.get("why") or "no reference answer", []).append(name)
    out.append(Sample(workload, "queries_ran", float(len(names)), "queries", labels=labels))
    out += [Sample(workload, metric, float(counts[status]), "queries", labels=labels) for metric, status in COUNTS]
    for k, stream in enumerate(result["streams"], start=1):
        out.append(Sample(workload, "stream_time", stream["seconds"], "s", labels={**labels, "stream": str(k)}))
    elapsed = result["elapsed"]
    out += [
        Sample(workload, "total_time", elapsed, "s", labels=labels),
        Sample(
            workload,
            "geomean_query_time",
            math.exp(statistics.fmean(math.log(max(t, 1e-6)) for t in times)) if times else None,
            "s",
            labels=labels,
        ),
        Sample(
            workload,
            "gb_per_core_hour",
            sf * n / cores / elapsed * 3600 if elapsed else None,
            "GB/core-h",
            labels=labels,
        ),
    ]
    if n > 1 and single:
        mean_stream = statistics.fmean(s["seconds"] for s in result["streams"])
        out.append(
            Sample(workload, "stream_degradation_pct", (mean_stream / single["elapsed"] - 1) * 100, "%", labels=labels)
        )
    if failed:
        notes.append(
            f"{workload}: {len(failed)} of {len(names)} queries failed with {n} stream(s): "
            + "; ".join(failed[:10])
            + (" …" if len(failed) > 10 else "")
        )
    if unchecked:
        notes.append(
            f"{workload}: {counts['unchecked']} of {len(names)} queries unchecked with {n} stream(s): "
            + "; ".join(
                f"{why}: {', '.join(qs[:10])}" + (" …" if len(qs) > 10 else "") for why, qs in unchecked.items()
            )
        )
    return out


def _catalog_samples(workload: str, runs: list[dict[str, Any]], labels: dict[str, str]) -> list[Sample]:
    """Per query: its planning time (median over the streams) and, on storbench's metastore with one stream,
    the metastore calls it made; absent where not measured."""
    out = []
    for key, metric, unit in (("planning_s", "planning_time", "s"), ("metastore_calls", "metastore_calls", "calls")):
        values = [r[key] for r in runs if r.get(key) is not None]
        if values:
            out.append(Sample(workload, metric, float(statistics.median(values)), unit, labels=labels))
    return out
