"""The native engine's result as samples (engines/native_results.py), in the objects and the YCSB vocabulary:
no engine process, a result document of the engine's shape."""

import pytest

from storbench.engines.native_results import judge_errors, result_samples
from storbench.errors import WorkloadError
from storbench.workloads.objects import NAMES as OBJECTS
from storbench.workloads.ycsb import LOAD_NAMES, NAMES as YCSB

HIST = {
    "count": 4,
    "mean_ms": 1.5,
    "p50_ms": 1.25,
    "p90_ms": 2.0,
    "p95_ms": 2.5,
    "p99_ms": 3.0,
    "p99_9_ms": 3.5,
    "max_ms": 4.0,
}
EMPTY = {**{key: 0.0 for key in HIST}, "count": 0}


def _stats(ops, errors, hist):
    return {"ops": ops, "errors": errors, "ops_per_s": ops / 2, "mb_per_s": ops / 200, "latency": hist, "ttfb": hist}


def _result(model="closed"):
    return {
        "total": _stats(10, 3, HIST),
        "ops": {"get": _stats(10, 1, HIST), "put": _stats(0, 2, EMPTY)},
        "cpu": {"cpu_us_per_op": 12.5},
        "errors": {"timeout": {"count": 2, "example": "slow"}, "connect": {"count": 1, "example": "refused\nmore"}},
        "load": {"model": model, "not_issued": 7},
    }


def _by(samples):
    return {(s.metric, tuple(sorted(s.labels.items()))): (s.value, s.unit) for s in samples}


def test_objects_names_every_figure_in_ms_and_per_operation_with_its_rate():
    got = _by(result_samples("objects-mixed", _result("open"), OBJECTS, {"size": "4k"}))
    size = (("size", "4k"),)
    assert got[("obj_mbps", size)] == (0.05, "MB/s") and got[("obj_ops_per_s", size)] == (5.0, "ops/s")
    assert got[("obj_lat_p99_9_ms", size)] == (3.5, "ms") and got[("obj_ttfb_p50_ms", size)] == (1.25, "ms")
    assert got[("obj_cpu_us_per_op", size)] == (12.5, "us") and got[("obj_errors", size)] == (3.0, "errors")
    assert got[("obj_errors", (("error", "timeout"), *size))] == (2.0, "errors")
    assert got[("obj_not_issued", size)] == (7.0, "ops")  # open loop only
    assert got[("obj_ops_per_s", (("op", "get"), *size))] == (5.0, "ops/s")
    assert got[("obj_lat_p50_ms", (("op", "put"), *size))] == (None, "ms")  # nothing measured is no latency
    assert ("obj_errors", (("op", "get"), *size)) not in got  # objects count errors by kind, not per op
    closed = _by(result_samples("objects-put", _result(), OBJECTS, per_op=False))
    assert ("obj_not_issued", ()) not in closed and not any(dict(labels).get("op") for _, labels in closed)


def test_ycsb_names_latency_in_us_errors_per_operation_and_no_per_operation_rate():
    got = _by(result_samples("ycsb-a", _result(), YCSB))
    assert got[("ycsb_throughput_ops_s", ())] == (5.0, "ops/s") and got[("ycsb_operations", ())] == (10.0, "ops")
    assert got[("ycsb_avg_latency_us", ())] == (1500.0, "us") and got[("ycsb_p95_latency_us", ())] == (2500.0, "us")
    assert got[("ycsb_errors", (("op", "put"),))] == (2.0, "errors")
    assert got[("ycsb_errors", (("error", "connect"),))] == (1.0, "errors")
    assert ("ycsb_client_cpu_us_per_op", ()) not in got  # sampled from /proc by the family (ycsb/client_cpu.py)
    assert ("ycsb_throughput_ops_s", (("op", "get"),)) not in got
    assert got[("ycsb_max_latency_us", (("op", "put"),))] == (None, "us")
    load = _by(result_samples("ycsb-load", _result(), LOAD_NAMES))
    assert ("ycsb_load_throughput_ops_s", ()) in load and ("ycsb_throughput_ops_s", ()) not in load


def test_errors_above_the_allowed_share_fail_keeping_the_samples_below_it_a_note():
    samples = result_samples("objects-get", _result(), OBJECTS)
    notes = []
    judge_errors("objects-get", [_result()], samples, 50.0, notes)  # 3 of 13 failed: 23%
    assert notes == [
        "objects-get: 3 of 13 operations failed (timeout 2, connect 1); first: slow "
        "(at most 50% allowed: max_error_pct)"
    ]
    with pytest.raises(WorkloadError, match=r"3 of 13 operations failed") as failed:
        judge_errors("objects-get", [_result()], samples, 20.0, [])
    assert failed.value.samples == tuple(samples)
