"""storbench's native KV load engine against YCSB core 0.17.0 itself, on the same Cassandra, in one run.

One local 1-node Cassandra 5.0 (``storbench services up cassandra``), loaded once by the native engine
(``ycsb-load``); then YCSB workloads A (50/50 read/update) and C (read only), zipfian, with the same
thread count and duration, alternately on the native engine (``driver=native``) and on YCSB core with
storbench's binding on the DataStax Java driver 4.x (``driver=ycsb``). Both run through the ycsb
workloads' own ``run``, so the figures are the samples a storbench run records: YCSB's
``[OVERALL] Throughput(ops/sec)`` and its p99, the engine's equivalents, and each client's CPU per
operation (its process's rusage; for YCSB the JVM's start-up is part of the tool's cost; also shown
without it, which its binding prints). Scope of the rates: the operations' time on both sides
(``timing=operations``: YCSB's RunTime less its session open, as the engine connects before its
clock starts); YCSB's own printed rate, which includes the open, is shown beside. An untimed native run of A
warms the server first. Goals (issue 14): throughput ≥ 1.3× YCSB's, client CPU per operation ≤ 0.5×
YCSB's; p99 is reported for both. Client and server share this machine's cores.

    .venv/bin/python benchmarks/kv_vs_ycsb.py [--quick]
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from storbench import api  # noqa: E402
from storbench.context import RunContext  # noqa: E402
from storbench.results.store import ResultStore  # noqa: E402
from storbench.targets import TargetOptions, parse_target  # noqa: E402
from storbench.workloads.base import get_workload  # noqa: E402

FIGURES = {"throughput": "ycsb_throughput_ops_s", "cpu_us_per_op": "ycsb_client_cpu_us_per_op",
           "p99_us": "ycsb_p99_latency_us"}


def params_for(name: str, **values) -> dict:
    workload = get_workload(name, "kv_vs_ycsb")
    return {p.name: p.default for p in workload.params} | values


def run_once(ctx: RunContext, name: str, params: dict) -> dict:
    """One run of workload ``name`` through its own run(): its overall figures (no op label)."""
    samples = get_workload(name, "kv_vs_ycsb").run(ctx, params)
    overall = {s.metric: s.value for s in samples if "op" not in s.labels and "error" not in s.labels}
    figures = {key: overall.get(metric) for key, metric in FIGURES.items()} | {"errors": overall["ycsb_errors"]}
    total = ctx.artifacts["ycsb"]["runs"][-1]["result"]["total"]
    # the recorded rate is over the operations' time for both drivers (timing=operations); YCSB's own
    # [OVERALL] figure also counts its client threads' DB init (the driver session's open): shown beside
    figures["printed"] = total.get("ycsb_ops_per_s", figures["throughput"])
    figures["open_ms"] = total.get("session_open_ms")
    cpu = ctx.artifacts["ycsb"]["runs"][-1]["result"]["cpu"]
    startup = cpu.get("startup_cpu_s")  # the JVM's CPU before its first operation
    figures["steady_cpu"] = ((cpu["cpu_s"] - startup) * 1e6 / total["ops"] if startup is not None
                             else figures["cpu_us_per_op"])
    return figures


def main() -> int:
    quick = "--quick" in sys.argv
    records, threads, seconds, rounds = (5000, 8, 15, 1) if quick else (20000, 16, 30, 2)
    work = Path(tempfile.mkdtemp(prefix="storbench-kvycsb-"))
    store = ResultStore(work / "home")
    state = api.service_up("cassandra", store, nodes=1, heap="1g")
    target = parse_target(state["uri"], TargetOptions(store.home))
    runs: dict[tuple[str, str], list[dict]] = {}
    try:
        target.precheck(0)
        target.claim("kvbench")
        ctx = RunContext(run_id="kvbench", target=target, root_uri=target.root_uri or "")
        common = {"recordcount": records, "threads": threads, "duration_s": float(seconds)}
        print(f"server: Cassandra 5.0, 1 node on loopback ({state['uri']}); machine: {os.cpu_count()} cores "
              f"(client and server share them); {records} rows, {threads} threads, {seconds} s per run, "
              f"{rounds} round(s), drivers alternating", flush=True)
        load = run_once(ctx, "ycsb-load", params_for("ycsb-load", **common))
        print(f"  load (native): {load['errors']:.0f} errors", flush=True)
        # untimed: the server's first minutes after a load (its JIT, a flush) would go to whoever runs first
        run_once(ctx, "ycsb-a", params_for("ycsb-a", **common | {"duration_s": float(seconds) / 2}))
        for round_ in range(rounds):
            for letter in ("a", "c"):
                # alternate which driver goes first, so neither always meets a warmer server
                order = ("native", "ycsb") if round_ % 2 == 0 else ("ycsb", "native")
                for driver in order:
                    figures = run_once(ctx, f"ycsb-{letter}", params_for(f"ycsb-{letter}", **common, driver=driver))
                    runs.setdefault((letter, driver), []).append(figures)
                    extra = (f"  (YCSB printed {figures['printed']:.0f} ops/s with its {figures['open_ms']} ms "
                             f"session open; {figures['steady_cpu']:.1f} us CPU/op without its start-up)"
                             if figures["open_ms"] is not None else "")
                    print(f"  round {round_ + 1} workload {letter.upper()} {driver:<6} "
                          f"{figures['throughput']:9.0f} ops/s {figures['cpu_us_per_op']:8.1f} us CPU/op "
                          f"p99 {figures['p99_us'] / 1000:8.2f} ms  errors {figures['errors']:.0f}{extra}", flush=True)
    finally:
        try:
            target.release()
        finally:
            api.service_down("cassandra", store)
            shutil.rmtree(work, ignore_errors=True)

    print()
    print("| workload | driver | ops/s (median) | client CPU µs/op | p99 ms | throughput vs YCSB | CPU/op vs YCSB |")
    print("|---|---|---:|---:|---:|---:|---:|")
    verdicts = []
    for letter in ("a", "c"):
        keys = (*FIGURES, "printed", "steady_cpu")
        med = {driver: {key: statistics.median(r[key] for r in runs[(letter, driver)]) for key in keys}
               for driver in ("native", "ycsb")}
        tp = med["native"]["throughput"] / med["ycsb"]["throughput"]
        cpu = med["native"]["cpu_us_per_op"] / med["ycsb"]["cpu_us_per_op"]
        for driver in ("native", "ycsb"):
            m = med[driver]
            ratios = (f"{tp:.3g}×", f"{cpu:.3g}×") if driver == "native" else ("1×", "1×")
            print(f"| {letter.upper()} | {driver} | {m['throughput']:,.0f} | {m['cpu_us_per_op']:,.1f} | "
                  f"{m['p99_us'] / 1000:,.2f} | {ratios[0]} | {ratios[1]} |")
        verdicts.append(
            f"workload {letter.upper()} ({threads} threads, {seconds} s): throughput {tp:.2f}× YCSB's (goal ≥ 1.3) "
            f"{'met' if tp >= 1.3 else 'MISSED'}; client CPU/op {cpu:.3f}× YCSB's (goal ≤ 0.5) "
            f"{'met' if cpu <= 0.5 else 'MISSED'}; against YCSB's printed rate (session open included): "
            f"{med['native']['throughput'] / med['ycsb']['printed']:.2f}×; CPU/op without YCSB's JVM start-up "
            f"{med['native']['cpu_us_per_op'] / med['ycsb']['steady_cpu']:.3f}×; "
            f"p99 native {med['native']['p99_us'] / 1000:.2f} ms, "
            f"YCSB {med['ycsb']['p99_us'] / 1000:.2f} ms")
    print()
    for line in verdicts:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
