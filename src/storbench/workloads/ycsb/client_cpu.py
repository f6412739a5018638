"""The YCSB workloads' client CPU per operation, in two scopes, each measured the same way for both drivers.

The native engine and YCSB's JVM are both child processes of this one, sampled from /proc while they run
(``telemetry.proc_cpu``, one code path for both), so neither driver's own accounting decides what counts:

- ``ycsb_client_cpu_us_per_op``: over the steady middle of the run, the middle half of its operations on its
  own progress (the engine's per-second series, YCSB's status line each second): the CPU the client's
  threads ran between those two times ÷ the operations between them. Ramp-up (JVM start, class loading,
  connect, JIT, lazy prepares) and tail (drain, session close, exit) are out, on both sides alike.
- ``ycsb_client_cpu_us_per_op_process``: the whole client process(es), start to exit, read at exit ÷ all
  operations done (failed ones too, as the middle counts them).

Engines fanned out as Spark tasks run on other hosts: neither figure is sampled (None, and a note).
"""

from __future__ import annotations

from typing import Any

from storbench.engines.native_results import progress as engine_progress
from storbench.results.model import Sample
from storbench.telemetry.proc_cpu import CpuWatch, middle_cpu, process_cpu_s

MIDDLE = "ycsb_client_cpu_us_per_op"
PROCESS = "ycsb_client_cpu_us_per_op_process"


def scoped(driver: str, result: dict[str, Any], watch: CpuWatch | None) -> dict[str, Any]:
    """The client's CPU in both scopes from ``watch``'s traces and the driver's own progress points:
    {"middle": proc_cpu.middle_cpu(...) or None, "process_cpu_s", "process_cpu_us_per_op", "source"}."""
    traces = watch.traces if watch is not None else []
    points = (result.get("progress") or []) if driver == "ycsb" else engine_progress(result)
    whole = process_cpu_s(traces)
    done = result["total"]["ops"] + result["total"]["errors"]
    return {
        "source": "/proc, sampled every %gs" % watch.interval if watch is not None else None,
        "middle": middle_cpu(points, traces) if traces else None,
        "process_cpu_s": whole,
        "process_cpu_us_per_op": whole * 1e6 / done if whole is not None and done else None,
    }


def samples(workload: str, cpu: dict[str, Any]) -> list[Sample]:
    """The two figures as samples (None where not measured: reports show n/a)."""
    middle = cpu["middle"]
    return [
        Sample(workload, MIDDLE, middle["cpu_us_per_op"] if middle else None, "us"),
        Sample(workload, PROCESS, cpu["process_cpu_us_per_op"], "us"),
    ]
