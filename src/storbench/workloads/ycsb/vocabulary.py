"""The ycsb family's parameters, metrics and the names its figures go by (paper 003's throughput, latency,
operations per server thread), beside the workloads that take and report them."""

from __future__ import annotations

from dataclasses import replace

from storbench.results.metrics import metric_table
from storbench.engines.native_results import Vocabulary
from storbench.workloads.params import Param


CONSISTENCY = ("ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM", "EACH_QUORUM", "LOCAL_ONE")
DISTRIBUTIONS = ("zipfian", "latest", "uniform", "hotspot")

PARAMS = (
    Param("recordcount", int, 1000, "rows loaded (YCSB recordcount)", minimum=1),
    Param("operationcount", int, 0, "operations per run, all processes together (0: duration_s)", minimum=0),
    Param("duration_s", float, 10.0, "measured seconds per run when operationcount is 0", minimum=0),
    Param(
        "threads",
        int,
        16,
        "client threads per engine process (YCSB -threads); sweep with --sweep threads=..",
        minimum=1,
    ),
    Param("consistency", str, "ONE", "CQL consistency level of every request", choices=CONSISTENCY),
    Param("fieldcount", int, 10, "fields per row (the usertable has field0..field9)", minimum=1),
    Param("fieldlength", int, 100, "bytes per field", minimum=1),
    Param(
        "requestdistribution",
        str,
        "",
        "override the workload's distribution (empty: YCSB's own)",
        choices=("", *DISTRIBUTIONS),
    ),
    Param("drivers", int, 1, "engine processes started together", minimum=1),
    Param(
        "fanout",
        str,
        "local",
        "where driver processes run: local processes or Spark barrier tasks",
        choices=("local", "spark"),
    ),
    Param("timeout_s", float, 12.0, "per-request timeout in seconds", minimum=0.1),
    Param(
        "restore",
        str,
        "none",
        "snapshot: restore every node to the post-load state before each run",
        choices=("none", "snapshot"),
    ),
    Param(
        "driver",
        str,
        "native",
        "who runs the workload: storbench's native engine, or YCSB core 0.17.0 itself "
        "(the reference tool, with storbench's Java-driver binding)",
        choices=("native", "ycsb"),
    ),
    Param(
        "target_ops_s",
        float,
        0.0,
        "an open loop at this many operations per second, all processes together "
        "(YCSB -target); 0: a closed loop (each thread's next operation when its last one ends)",
        minimum=0,
    ),
    Param(
        "max_error_pct",
        float,
        1.0,
        "the run fails when more than this % of its operations failed (errors are counted by kind either way)",
        minimum=0,
        maximum=100,
    ),
)

OPS = ("READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE")
METRICS = metric_table("""
    # more/fewer: compare says these as paper 003 does, "39× more operations per second" (analysis.wording)
    ycsb_throughput_ops_s      | [OVERALL] Throughput(ops/sec)                     | ops/s        | mean | more/fewer
    ycsb_load_throughput_ops_s | Load throughput (ops/sec)                         | ops/s        | mean | more/fewer
    ycsb_ops_per_server_thread | Operations per second per server CPU thread       | ops/s/thread | mean | more/fewer
    ycsb_ops_per_node_thread   | Operations per second per CPU thread of one node  | ops/s/thread | mean | more/fewer
    ycsb_server_threads        | Server CPU threads                                | threads      | mean | more/fewer
    ycsb_operations            | Operations                                        | ops          | mean | more/fewer
    ycsb_avg_latency_us        | AverageLatency(us)                                | us           | mean | lower/higher
    ycsb_p95_latency_us        | 95thPercentileLatency(us)                         | us           | mean | lower/higher
    ycsb_p99_latency_us        | 99thPercentileLatency(us)                         | us           | mean | lower/higher
    ycsb_max_latency_us        | MaxLatency(us)                                    | us           | max  | lower/higher
    ycsb_errors                | Errors                                            | errors       | mean | fewer/more
    # both drivers' client sampled from /proc alike (client_cpu.py): the run's steady middle, the whole process
    ycsb_client_cpu_us_per_op  | Client CPU per operation, steady middle of run    | us           | mean | lower/higher
    ycsb_client_cpu_us_per_op_process | Client CPU per operation, whole client process    | us           | mean | lower/higher
""")
LATENCY = (("avg", "mean_ms"), ("p95", "p95_ms"), ("p99", "p99_ms"), ("max", "max_ms"))
# the engine's result in YCSB's names: per operation type, the operations, latencies and errors (no rate)
NAMES = Vocabulary(
    rate="ycsb_throughput_ops_s",
    ops="ycsb_operations",
    errors="ycsb_errors",
    cpu=None,
    latency_unit="us",
    op_rate=False,
    op_errors=True,
    latency=tuple((f"ycsb_{name}_latency_us", key) for name, key in LATENCY),
)
LOAD_NAMES = replace(NAMES, rate="ycsb_load_throughput_ops_s")
