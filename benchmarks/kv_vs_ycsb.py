"""storbench's native KV load engine against YCSB core 0.17.0 itself, on the same Cassandra, in one run.

One Cassandra 5.0 node (``storbench services up cassandra``, or the one up under --service-home), loaded
once by the native engine (``ycsb-load``) into a keyspace of the benchmark's own (dropped at the end); then
YCSB workloads A (50/50 read/update) and C (read only), zipfian, with the same thread count and duration,
on the native engine (``driver=native``) and on YCSB core with storbench's binding on the DataStax Java
driver 4.x (``driver=ycsb``), the order of the two rotated each round (benchmarks/harness.py). Both run
through the ycsb workloads' own ``run``, so the figures are the samples a storbench run records.

One scope for both sides:

- throughput over the operations' time (``timing=operations``): the engine's measured time, which starts
  after it connected; YCSB's RunTime less its session open (YCSB's own printed rate, open included, is
  shown per round);
- client CPU per operation over the steady middle of each run (``ycsb_client_cpu_us_per_op``): both clients
  are this process's children, sampled from /proc by the same code (storbench.telemetry.proc_cpu) while they
  run; the CPU their threads ran between the moments each had done a quarter and three quarters of its own
  operations (its own progress: the engine's per-second series, YCSB's status line each second) ÷ the
  operations between them. Ramp-up (JVM start, connect, JIT, lazy prepares) and tail (drain, session close,
  exit) are out on both sides;
- the whole client process beside it, labelled as such (``ycsb_client_cpu_us_per_op_process``: /proc at its
  exit, start-up and exit in), reported without a goal.

Each run also prints the CPU other processes used meanwhile (the noise sentinel's ``noise_other_cpu_pct``:
everything outside this benchmark's processes and the Cassandra service) and the load average before and after.

An untimed native run of A warms the server first. Goals (issue 14), from the per-round ratios' median:
throughput ≥ 1.3× YCSB's and client CPU per operation ≤ 0.5× YCSB's, on A and on C; p99 is reported.
Client and server share this machine's cores.

Ops per client core on a server that is not the limit (issue 28): workload C again, as an open loop at a fixed
rate both sides sustain (``target_ops_s``: the engine's open-loop schedule, YCSB's own ``-target``), same
threads, same duration; the figure is operations per client CPU-second over the steady middle (1 / CPU per
operation, scoped as above), goal ≥ 10× YCSB's; the whole process's is reported beside it. Each round prints
both sides' achieved rates (at the target: the server kept up).

    .venv/bin/python benchmarks/kv_vs_ycsb.py [--quick] [--rounds N] [--service-home HOME]
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from harness import parser, ratios, rotated, scope, service, verdict  # noqa: E402 (sets sys.path)
from storbench.context import RunContext, WindowRecord  # noqa: E402
from storbench.engines.native import NativeEngine  # noqa: E402
from storbench.errors import WorkloadError  # noqa: E402
from storbench.targets import TargetOptions, parse_target  # noqa: E402
from storbench.telemetry.sentinel import NoiseSentinel  # noqa: E402
from storbench.workloads.base import get_workload  # noqa: E402

LETTERS = ("a", "c")
MIDDLE, PROCESS = "ycsb_client_cpu_us_per_op", "ycsb_client_cpu_us_per_op_process"


def params_for(name: str, **values) -> dict:
    workload = get_workload(name, "kv_vs_ycsb")
    return {p.name: p.default for p in workload.params} | values


def run_once(ctx: RunContext, name: str, params: dict, noise: NoiseSentinel) -> dict:
    """One run of workload ``name`` through its own run(): its overall figures, both CPU scopes, and the CPU
    other processes used meanwhile (% of one core)."""
    ctx.window = WindowRecord.for_params(params)  # what the run loop makes for each workload window
    start = noise.mark()
    try:
        samples = get_workload(name, "kv_vs_ycsb").run(ctx, params)
    except WorkloadError as failed:  # one line, the keyspace and the service still cleaned up on the way out
        sys.exit(f"{name} driver={params['driver']}: {failed} (load average {load_average()})")
    other = noise.window(start, noise.mark())["noise_other_cpu_pct"]
    overall = {s.metric: s.value for s in samples if "op" not in s.labels and "error" not in s.labels}
    total = ctx.artifacts["ycsb"]["runs"][-1]["result"]["total"]
    rate = "ycsb_load_throughput_ops_s" if name == "ycsb-load" else "ycsb_throughput_ops_s"
    figures = {
        "throughput": overall.get(rate),
        "p99_us": overall.get("ycsb_p99_latency_us"),
        "errors": overall["ycsb_errors"],
        "printed": total.get("ycsb_ops_per_s"),
        "open_ms": total.get("session_open_ms"),
        "middle": overall.get(MIDDLE),
        "process": overall.get(PROCESS),
        "other_cpu_pct": other,
    }
    missing = [key for key in ("throughput", "middle", "process") if not figures[key]]
    if missing and name != "ycsb-load":
        sys.exit(
            f"{name} driver={params['driver']}: no {' or '.join(missing)} figure recorded (CPU per operation "
            f"from /proc over the run's steady middle needs a run long enough to show progress)"
        )
    return figures


def row(side: str, r: dict) -> str:
    """One side of a round: rate, both CPU scopes, p99, errors, the other processes' CPU meanwhile."""
    p99 = f", p99 {r['p99_us'] / 1000:.2f} ms" if r.get("p99_us") is not None else ""
    printed = f" (printed {r['printed']:.0f} with its {r['open_ms']} ms session open)" if r.get("open_ms") else ""
    other = f"{r['other_cpu_pct']:.0f}%" if r["other_cpu_pct"] is not None else "n/a"
    return (
        f"{side} {r['throughput']:.0f} ops/s{printed}, CPU/op {r['middle']:.1f} µs steady middle, "
        f"{r['process']:.1f} µs whole process{p99}, {r['errors']:.0f} errors; other processes {other} of a core"
    )


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


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
    before = load_average()
    try:
        with service("cassandra", work / "home", args.service_home, nodes=1, heap="1g") as state:
            # the run's own processes: this one's tree and the Cassandra service's (its state file)
            noise = NoiseSentinel(services=(args.service_home or work / "home") / "services")
            # the target logs in with the role the service state holds (cassandra_login)
            target = parse_target(state["uri"], TargetOptions(args.service_home or work / "home"))
            target.precheck(0)
            target.claim(run_id)
            try:
                native = NativeEngine()  # the workloads run their driver=native side through the run's engine
                native.start()
                ctx = RunContext(
                    run_id=run_id, target=target, root_uri=target.root_uri or "", engines={native.name: native}
                )
                common = {"recordcount": records, "threads": threads, "duration_s": seconds, "operationcount": ops}
                scope(
                    f"storbench native KV engine (driver=native) vs YCSB (driver=ycsb), YCSB workloads A and C, "
                    f"zipfian, {records} rows, {size} per run, on one Cassandra 5.0 node ({state['uri']})",
                    peer="YCSB core 0.17.0 with storbench's DataStax Java driver 4.x binding",
                    parallelism=f"{threads} client threads in one client process each, closed loops (then C as "
                    f"an open loop at {rate:g} ops/s for both); client and server share this "
                    f"machine's {os.cpu_count()} cores",
                    startup="outside for both: rates over the operations' time (the engine's after it "
                    "connected, YCSB's RunTime less its session open); CPU/op over each run's steady "
                    "middle (its 2nd and 3rd quarter of operations), both clients sampled from /proc "
                    "by the same code; the whole client process (start-up and exit in) reported beside",
                    cache="one load by the native engine, an untimed native run of A, then every run continues "
                    "on the same table (no restore); writes counted on Cassandra's acknowledgement",
                    clock="the engine's monotonic clock; YCSB's RunTime(ms); CPU from /proc (threads' "
                    "schedstat every 0.2 s, /proc/PID/stat at exit) against each client's own progress",
                )
                print(f"load average before: {before}", flush=True)
                load = run_once(ctx, "ycsb-load", params_for("ycsb-load", **common), noise)
                print(f"load (native): {load['errors']:.0f} errors", flush=True)
                # untimed: the server's first minutes after a load (its JIT, a flush) would go to whoever runs first
                run_once(
                    ctx,
                    "ycsb-a",
                    params_for("ycsb-a", **common | {"duration_s": seconds / 2, "operationcount": ops // 2}),
                    noise,
                )
                for letter in LETTERS:

                    def side(driver: str):
                        return lambda k: run_once(
                            ctx, f"ycsb-{letter}", params_for(f"ycsb-{letter}", **common, driver=driver), noise
                        )

                    runs[letter] = rotated({"native": side("native"), "ycsb": side("ycsb")}, args.rounds)
                    for k, (ours, peer) in enumerate(zip(runs[letter]["native"], runs[letter]["ycsb"])):
                        print(
                            f"round {k + 1} workload {letter.upper()}: {row('native', ours)}; {row('YCSB', peer)}",
                            flush=True,
                        )

                def paced(driver: str):
                    return lambda k: run_once(
                        ctx,
                        "ycsb-c",
                        params_for("ycsb-c", **common | {"operationcount": rate_ops}, driver=driver, target_ops_s=rate),
                        noise,
                    )

                runs["open"] = rotated({"native": paced("native"), "ycsb": paced("ycsb")}, args.rounds)
                for k, (ours, peer) in enumerate(zip(runs["open"]["native"], runs["open"]["ycsb"])):
                    print(
                        f"round {k + 1} workload C at {rate:g} ops/s: {row('native', ours)}; {row('YCSB', peer)}",
                        flush=True,
                    )
            finally:
                target.release()  # drops the benchmark's keyspace
                noise.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    for letter in LETTERS:
        ours, peer = runs[letter]["native"], runs[letter]["ycsb"]
        name = f"workload {letter.upper()} ({threads} threads, {size})"
        verdict(
            f"{name} throughput, native / YCSB",
            ratios([r["throughput"] for r in ours], [r["throughput"] for r in peer]),
            goal=1.3,
        )
        verdict(
            f"{name} client CPU per operation over the steady middle (/proc), native / YCSB",
            ratios([r["middle"] for r in ours], [r["middle"] for r in peer]),
            goal=0.5,
            at_least=False,
        )
        verdict(
            f"{name} client CPU per operation of the whole process (/proc, start-up and exit in), native / YCSB",
            ratios([r["process"] for r in ours], [r["process"] for r in peer]),
            goal=None,
        )
        verdict(
            f"{name} p99 latency, native / YCSB",
            ratios([r["p99_us"] for r in ours], [r["p99_us"] for r in peer]),
            goal=None,
        )
    ours, peer = runs["open"]["native"], runs["open"]["ycsb"]
    name = f"workload C open loop at {rate:g} ops/s ({threads} threads, {rate_size}) ops per client core-second"
    verdict(
        f"{name} over the steady middle (/proc), native / YCSB",
        ratios([1e6 / r["middle"] for r in ours], [1e6 / r["middle"] for r in peer]),
        goal=10,
    )
    verdict(
        f"{name} of the whole process (/proc), native / YCSB",
        ratios([1e6 / r["process"] for r in ours], [1e6 / r["process"] for r in peer]),
        goal=None,
    )
    print(f"load average after: {load_average()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
