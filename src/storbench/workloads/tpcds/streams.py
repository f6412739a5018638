"""Running TPC-DS query streams on one Spark application: one thread per stream (PySpark's pinned
threads), each in its own FAIR scheduler pool, each query under its own job group so the event log
attributes Spark's metrics to it; a failed or mismatched query is recorded and the stream goes on."""

from __future__ import annotations

import random
import time
from typing import Any, Callable

from storbench.engines.eventlog import sub_group
from storbench.errors import InputError, WorkloadError
from storbench.workloads.tpcds.check import ResultSummary, mismatch, summarize


def permutation(names: list[str], seed: int, streams: int, stream: int) -> list[str]:
    order = list(names)
    random.Random(seed * 1_000_003 + streams * 1_009 + stream).shuffle(order)
    return order


def stream_counts(params: dict[str, Any]) -> list[int]:
    counts = []
    for item in params["streams"]:
        try:
            value = int(str(item))
        except ValueError:
            value = 0
        if value < 1:
            raise InputError(f"--set: streams has {item!r}; use stream counts of at least 1, e.g. streams=1,2,5")
        counts.append(value)
    return list(dict.fromkeys(counts))


def run_streams(
    spark: Any,
    texts: dict[str, str],
    answers: dict[str, Any],
    orders: list[list[str]],
    parent: str,
    n: int,
    on_query: Callable[[], None] = lambda: None,
    calls: Callable[[], int] | None = None,
) -> dict[str, Any]:
    """``orders`` run as concurrent streams (one thread each, its own FAIR pool); per stream its results;
    ``on_query`` after each query of any stream (from that stream's thread); ``calls``: the metastore's calls
    so far (one stream only), each query's share recorded."""
    from pyspark import InheritableThread

    streams: list[dict[str, Any]] = [{"order": order, "results": {}} for order in orders]

    def one(index: int) -> None:
        stream = streams[index]
        sc = spark.sparkContext
        sc.setLocalProperty("spark.scheduler.pool", f"tpcds-stream-{index + 1}")
        start = time.monotonic()
        for name in stream["order"]:
            group = sub_group(parent, {"query": name, "streams": str(n)})
            sc.setJobGroup(group, f"TPC-DS {name} (stream {index + 1} of {n})")
            before = calls() if calls else None
            stream["results"][name] = _run_query(spark, name, texts[name], answers.get(name))
            if calls:
                stream["results"][name]["metastore_calls"] = calls() - before
            on_query()
        stream["seconds"] = time.monotonic() - start

    started = time.monotonic()
    if n == 1:
        one(0)
    else:
        threads = [InheritableThread(target=one, args=(k,)) for k in range(n)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    elapsed = time.monotonic() - started
    spark.sparkContext.setJobGroup(parent, parent)
    spark.sparkContext.setLocalProperty("spark.scheduler.pool", None)  # back to the default pool
    unfinished = [k + 1 for k, s in enumerate(streams) if "seconds" not in s]
    if unfinished:
        raise WorkloadError(f"tpcds: stream(s) {unfinished} of {n} stopped early")
    return {"streams": streams, "elapsed": elapsed}


def _error_text(exc: BaseException) -> str:
    java = getattr(exc, "java_exception", None)
    text = str(java.toString()) if java is not None else f"{type(exc).__name__}: {exc}"
    first = next((line.strip() for line in text.splitlines() if line.strip()), type(exc).__name__)
    return first[:300]


def _run_query(spark: Any, name: str, text: str, answer: dict[str, Any] | None) -> dict[str, Any]:
    start = time.monotonic()
    try:
        frame = spark.sql(text)
        rows = frame.collect()
    except Exception as exc:  # a failed query is recorded, the stream goes on
        return {"status": "failed", "seconds": time.monotonic() - start, "error": _error_text(exc)}
    seconds = time.monotonic() - start
    summary = summarize(rows)
    out = {
        "status": "unchecked",
        "seconds": seconds,
        "rows": summary.rows,
        "checksum": summary.checksum,
        "planning_s": planning_seconds(frame),
    }
    if answer and "summary" in answer:
        why = mismatch(ResultSummary.from_dict(answer["summary"]), summary)
        out.update(status="mismatch", why=why) if why else out.update(status="ok")
    elif answer:
        out["why"] = answer.get("why") or f"no reference answer: DuckDB failed: {answer['error']}"
    return out


def planning_seconds(frame: Any) -> float | None:
    """The query's planning time: Spark's own phase times (QueryPlanningTracker: parsing, analysis, where the
    catalog is asked for the tables, optimization, planning) summed; None when Spark does not say."""
    try:
        phases = frame._jdf.queryExecution().tracker().phases()
        entries = phases.iterator()
        total = 0
        while entries.hasNext():
            total += entries.next()._2().durationMs()
    except Exception:  # py4j: a Spark without the tracker
        return None
    return total / 1000 if phases.size() else None
