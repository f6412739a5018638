"""storbench's native KV load engine against YCSB core 0.17.0 itself, on the same Cassandra, in one run.

One Cassandra 5.0 node (``storbench services up cassandra``, or the one up under --service-home), loaded
once by the native engine (``ycsb-load``) into a keyspace of the benchmark's own (dropped at the end); then
YCSB workloads A (50/50 read/update) and C (read only), zipfian, with the same thread count and duration,
on the native engine (``driver=native``) and on YCSB core with storbench's binding on the DataStax Java
driver 4.x (``driver=ycsb``), the order of the two rotated each round (benchmarks/harness.py). Both run
through the ycsb workloads' own ``run``, so the figures are the samples a storbench run records.

One scope for both sides, in-window:

- throughput over the operations' time (``timing=operations``): the engine's measured time, which starts
  after it connected; YCSB's RunTime less its session open (YCSB's own printed rate, open included, is
  shown per round);
- client CPU per operation from the operations' start: the engine's CPU from its clock's start (rusage);
  YCSB's process CPU less its CPU at session open (``startup_cpu_s``, which its binding prints: JVM start,
  class loading, session open). YCSB's side also holds its exit after the last operation (small; it counts
  against YCSB). The whole-process CPU (JVM start-up included) is no longer the verdict's figure.

An untimed native run of A warms the server first. Goals (issue 14), from the per-round ratios' median:
throughput ≥ 1.3× YCSB's and client CPU per operation ≤ 0.5× YCSB's, on A and on C; p99 is reported.
Client and server share this machine's cores.

Ops per client core on a server that is not the limit (issue 28): workload C again, as an open loop at a fixed
rate both sides sustain (``target_ops_s``: the engine's open-loop schedule, YCSB's own ``-target``), same
threads, same duration; the figure is operations per client CPU-second in-window (1 / CPU per operation,
scoped as above), goal ≥ 10× YCSB's. Each round prints both sides' achieved rates (at the target: the server
kept up).

    .venv/bin/python benchmarks/kv_vs_ycsb.py [--quick] [--rounds N] [--service-home HOME]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from harness import parser, ratios, rotated, scope, service, verdict  # noqa: E402 (sets sys.path)
from storbench.context import RunContext  # noqa: E402
from storbench.targets import TargetOptions, parse_target  # noqa: E402
from storbench.workloads.base import get_workload  # noqa: E402

LETTERS = ("a", "c")


def params_for(name: str, **values) -> dict:
    workload = get_workload(name, "kv_vs_ycsb")
    return {p.name: p.default for p in workload.params} | values


def run_once(ctx: RunContext, name: str, params: dict) -> dict:
    """One run of workload ``name`` through its own run(): its overall figures, CPU per op in-window."""
    samples = get_workload(name, "kv_vs_ycsb").run(ctx, params)
    overall = {s.metric: s.value for s in samples if "op" not in s.labels and "error" not in s.labels}
    result = ctx.artifacts["ycsb"]["runs"][-1]["result"]
    total, cpu = result["total"], result["cpu"]
    rate = "ycsb_load_throughput_ops_s" if name == "ycsb-load" else "ycsb_throughput_ops_s"
    figures = {"throughput": overall.get(rate), "p99_us": overall.get("ycsb_p99_latency_us"),
               "errors": overall["ycsb_errors"], "printed": total.get("ycsb_ops_per_s"),
               "open_ms": total.get("session_open_ms")}
    if params["driver"] == "native":
        figures["cpu_us_per_op"] = overall.get("ycsb_client_cpu_us_per_op")  # the engine's CPU in its window
    else:
        startup = cpu.get("startup_cpu_s")  # the JVM's CPU when its session was open, before any operation
        if startup is None or not total["ops"]:
            sys.exit(f"{name}: YCSB's binding printed no CPU at session open (or did no operation): its CPU "
                     f"cannot be scoped to the operations")
        figures["cpu_us_per_op"] = (cpu["cpu_s"] - startup) * 1e6 / total["ops"]
    if figures["throughput"] is None or figures["cpu_us_per_op"] is None:
        sys.exit(f"{name} driver={params['driver']}: no throughput or CPU figure recorded")
    return figures


def main() -> int:
    args = parser(__doc__).parse_args()
    # quick: a count, not a duration (YCSB's time limit counts its session open, which alone can take 2-3 s here)
    records, threads, seconds, ops = (2000, 4, 0.0, 1000) if args.quick else (20000, 16, 30.0, 0)
    size = f"{ops} operations" if ops else f"{seconds:g} s"
    # the open loop's rate: well below either side's closed-loop rate here (the server is not the limit)
    rate, rate_ops = (300.0, 300) if args.quick else (500.0, 0)
    rate_size = f"{rate_ops} operations" if rate_ops else size
    work = Path(tempfile.mkdtemp(prefix="storbench-kvycsb-"))
    run_id = f"kvbench{os.getpid()}"  # its own keyspace (storbench_kvbenchPID), also on a shared service
    runs: dict[str, dict[str, list[dict]]] = {}
    try:
        with service("cassandra", work / "home", args.service_home, nodes=1, heap="1g") as state:
            # the target logs in with the role the service state holds (cassandra_login)
            target = parse_target(state["uri"], TargetOptions(args.service_home or work / "home"))
            target.precheck(0)
            target.claim(run_id)
            try:
                ctx = RunContext(run_id=run_id, target=target, root_uri=target.root_uri or "")
                common = {"recordcount": records, "threads": threads, "duration_s": seconds, "operationcount": ops}
                scope(f"storbench native KV engine (driver=native) vs YCSB (driver=ycsb), YCSB workloads A and C, "
                      f"zipfian, {records} rows, {size} per run, on one Cassandra 5.0 node ({state['uri']})",
                      peer="YCSB core 0.17.0 with storbench's DataStax Java driver 4.x binding",
                      parallelism=f"{threads} client threads in one client process each, closed loops (then C as "
                                  f"an open loop at {rate:g} ops/s for both); client and server share this "
                                  f"machine's {os.cpu_count()} cores",
                      startup="outside for both: rates over the operations' time (the engine's after it "
                              "connected, YCSB's RunTime less its session open); CPU/op in-window (the engine's "
                              "from its clock's start, YCSB's process CPU less its CPU at session open: JVM start "
                              "and session open out, its exit after the last operation in)",
                      cache="one load by the native engine, an untimed native run of A, then every run continues "
                            "on the same table (no restore); writes counted on Cassandra's acknowledgement",
                      clock="the engine's monotonic clock; YCSB's RunTime(ms); CPU from rusage")
                load = run_once(ctx, "ycsb-load", params_for("ycsb-load", **common))
                print(f"load (native): {load['errors']:.0f} errors", flush=True)
                # untimed: the server's first minutes after a load (its JIT, a flush) would go to whoever runs first
                run_once(ctx, "ycsb-a", params_for("ycsb-a", **common | {"duration_s": seconds / 2,
                                                                        "operationcount": ops // 2}))
                for letter in LETTERS:
                    def side(driver: str):
                        return lambda k: run_once(ctx, f"ycsb-{letter}",
                                                  params_for(f"ycsb-{letter}", **common, driver=driver))
                    runs[letter] = rotated({"native": side("native"), "ycsb": side("ycsb")}, args.rounds)
                    for k, (ours, peer) in enumerate(zip(runs[letter]["native"], runs[letter]["ycsb"])):
                        print(f"round {k + 1} workload {letter.upper()}: native {ours['throughput']:.0f} ops/s, "
                              f"{ours['cpu_us_per_op']:.1f} µs CPU/op, p99 {ours['p99_us'] / 1000:.2f} ms, "
                              f"{ours['errors']:.0f} errors; YCSB {peer['throughput']:.0f} ops/s (printed "
                              f"{peer['printed']:.0f} with its {peer['open_ms']} ms session open), "
                              f"{peer['cpu_us_per_op']:.1f} µs CPU/op, p99 {peer['p99_us'] / 1000:.2f} ms, "
                              f"{peer['errors']:.0f} errors", flush=True)
                def paced(driver: str):
                    return lambda k: run_once(ctx, "ycsb-c", params_for("ycsb-c", **common | {
                        "operationcount": rate_ops}, driver=driver, target_ops_s=rate))
                runs["open"] = rotated({"native": paced("native"), "ycsb": paced("ycsb")}, args.rounds)
                for k, (ours, peer) in enumerate(zip(runs["open"]["native"], runs["open"]["ycsb"])):
                    print(f"round {k + 1} workload C at {rate:g} ops/s: native {ours['throughput']:.0f} ops/s, "
                          f"{ours['cpu_us_per_op']:.1f} µs CPU/op, {ours['errors']:.0f} errors; YCSB "
                          f"{peer['throughput']:.0f} ops/s, {peer['cpu_us_per_op']:.1f} µs CPU/op, "
                          f"{peer['errors']:.0f} errors", flush=True)
            finally:
                target.release()  # drops the benchmark's keyspace
    finally:
        shutil.rmtree(work, ignore_errors=True)

    for letter in LETTERS:
        ours, peer = runs[letter]["native"], runs[letter]["ycsb"]
        name = f"workload {letter.upper()} ({threads} threads, {size})"
        verdict(f"{name} throughput, native / YCSB",
                ratios([r["throughput"] for r in ours], [r["throughput"] for r in peer]), goal=1.3)
        verdict(f"{name} client CPU per operation in-window, native / YCSB",
                ratios([r["cpu_us_per_op"] for r in ours], [r["cpu_us_per_op"] for r in peer]), goal=0.5,
                at_least=False)
        verdict(f"{name} p99 latency, native / YCSB",
                ratios([r["p99_us"] for r in ours], [r["p99_us"] for r in peer]), goal=None)
    ours, peer = runs["open"]["native"], runs["open"]["ycsb"]
    verdict(f"workload C open loop at {rate:g} ops/s ({threads} threads, {rate_size}) ops per client core-second "
            f"in-window, native / YCSB",
            ratios([1e6 / r["cpu_us_per_op"] for r in ours], [1e6 / r["cpu_us_per_op"] for r in peer]), goal=10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
