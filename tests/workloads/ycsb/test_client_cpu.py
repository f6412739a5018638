"""The YCSB workloads' client CPU per operation: one scope per name, the same for both drivers (client_cpu.py).
Each driver's progress (the engine's per-second series, YCSB's status lines) and one set of /proc traces give
the same figures; no service, no process."""

from __future__ import annotations

import pytest

from storbench.engines.native_results import progress as engine_progress
from storbench.engines.native_results import result_samples
from storbench.telemetry.proc_cpu import CpuTrace, CpuWatch
from storbench.workloads.ycsb import NAMES, client_cpu, core_driver

T0 = 1_795_905_600.0  # 2026-11-28 22:40:00 UTC
# YCSB -s, status.interval=1: its clock in UTC (the JVM runs with -Duser.timezone=UTC); 2 s of JVM start and
# session open with nothing done, then 100 ops a second, its last line after the last operation
STATUS = """Command line: -db storbench.ycsb.CqlDb -t -threads 4 -s
Loading workload...
2026-11-28 22:40:00:000 0 sec: 0 operations; est completion in 0 second
2026-11-28 22:40:01:000 1 sec: 0 operations; est completion in 106751991167300 days 15 hours
CqlDb: session open in 1500 ms
2026-11-28 22:40:02:000 2 sec: 0 operations; est completion in 106751991167300 days 15 hours
2026-11-28 22:40:03:000 3 sec: 100 operations; 100 current ops/sec; [READ: Count=100, Max=1, Min=1, Avg=1]
2026-11-28 22:40:04:000 4 sec: 200 operations; 100 current ops/sec; [READ: Count=100, Max=1, Min=1, Avg=1]
2026-11-28 22:40:05:000 5 sec: 300 operations; 100 current ops/sec; [READ: Count=100, Max=1, Min=1, Avg=1]
2026-11-28 22:40:06:000 6 sec: 400 operations; 100 current ops/sec; [READ: Count=100, Max=1, Min=1, Avg=1]
2026-11-28 22:40:06:500 6 sec: 400 operations; 0 current ops/sec; [CLEANUP: Count=4]
[OVERALL], RunTime(ms), 6500
"""
# the engine's result for the same operations: its clock starts after it connected (t0 + 2 s), 100 a second
ENGINE = {
    "start_unix_ms": (T0 + 2) * 1000,
    "measure_start_unix_ms": (T0 + 2) * 1000,
    "measured_s": 4.0,
    "series": [{"t": t, "ops": 99, "errors": 1} for t in range(4)],
    "total": {"ops": 396, "errors": 4},
}
YCSB = {"progress": core_driver.progress(STATUS), "total": {"ops": 400, "errors": 0}}


def _watch(*traces: CpuTrace) -> CpuWatch:
    watch = CpuWatch()
    watch.traces = list(traces)
    return watch


# the client's CPU: 3 s at start-up, 10 ms per operation, 1 s at exit (read at exit: 8 s)
TRACE = CpuTrace(7, [(T0, 0.0), (T0 + 2, 3.0), (T0 + 6, 7.0), (T0 + 7, 8.0)], exit_cpu_s=8.0)


def test_ycsbs_status_lines_and_the_engines_series_are_the_same_progress():
    assert YCSB["progress"][:4] == [[T0, 0.0], [T0 + 1, 0.0], [T0 + 2, 0.0], [T0 + 3, 100.0]]
    assert YCSB["progress"][-1] == [T0 + 6.5, 400.0]
    # the engine's: 0 at its start, then each second's end; failed operations count as YCSB's threads count them
    assert engine_progress(ENGINE) == [
        [T0 + 2, 0.0],
        [T0 + 3, 100.0],
        [T0 + 4, 200.0],
        [T0 + 5, 300.0],
        [T0 + 6, 400.0],
    ]


def test_both_drivers_get_the_same_scope_from_the_same_code():
    native = client_cpu.scoped("native", ENGINE, _watch(TRACE))
    ycsb = client_cpu.scoped("ycsb", YCSB, _watch(TRACE))
    # the middle: from the 100th to the 300th operation (t0+3 .. t0+5), on both sides, whatever came before
    for cpu in (native, ycsb):
        assert cpu["middle"]["from_unix_s"] == T0 + 3 and cpu["middle"]["to_unix_s"] == T0 + 5
        assert cpu["middle"]["cpu_us_per_op"] == pytest.approx(10_000.0)  # start-up and exit left out
        assert cpu["process_cpu_us_per_op"] == pytest.approx(20_000.0)  # 8 s over 400: start-up and exit in
        assert cpu["source"] == native["source"]
    samples = {s.metric: s.value for s in client_cpu.samples("ycsb-c", ycsb)}
    assert samples == {
        "ycsb_client_cpu_us_per_op": pytest.approx(10_000.0),
        "ycsb_client_cpu_us_per_op_process": pytest.approx(20_000.0),
    }


def test_no_watch_no_figures_rather_than_another_scope_under_the_same_name():
    cpu = client_cpu.scoped("native", ENGINE, None)  # fanout=spark: the engines run on other hosts
    assert {s.metric: s.value for s in client_cpu.samples("ycsb-c", cpu)} == {
        "ycsb_client_cpu_us_per_op": None,
        "ycsb_client_cpu_us_per_op_process": None,
    }
    # the engine's own CPU figure (from its clock's start, rusage) is not sampled under the YCSB name any more
    result = {
        **ENGINE,
        "total": {**ENGINE["total"], "ops_per_s": 99.0, "latency": {"count": 0}},
        "ops": {},
        "errors": {},
        "cpu": {"cpu_us_per_op": 12.5},
        "load": {"model": "closed"},
    }
    assert not [s for s in result_samples("ycsb-c", result, NAMES) if "cpu" in s.metric]
