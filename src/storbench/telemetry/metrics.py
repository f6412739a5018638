"""The metrics of the run's timed window: time to complete and the host's telemetry.

The runner reports ``completion_time`` (the length of ``ctx.measure()``); everything in
:data:`WINDOW` comes from :func:`storbench.telemetry.window.window_metrics`, in this
order; a cluster adds :data:`CLUSTER`. MB is 10^6 bytes; latency in milliseconds; CPU and utilization in percent.
"""

from __future__ import annotations

from storbench.results.metrics import metric_table

METRICS = metric_table("""
    completion_time      | Time to complete           | s    | mean | faster/slower
    max_read_mbps        | Maximum read throughput    | MB/s | max  | higher/lower             | overall
    max_write_mbps       | Maximum write throughput   | MB/s | max  | higher/lower             | overall
    avg_read_latency_ms  | Average read latency       | ms   | mean | lower/higher             | overall
    avg_write_latency_ms | Average write latency      | ms   | mean | lower/higher             | overall
    max_cpu_pct          | Maximum CPU utilization    | %    | max  | better usage/worse usage | overall
    avg_cpu_pct          | Average CPU utilization    | %    | mean | better usage/worse usage | overall
    read_mb              | Data read from devices     | MB   | mean | less/more
    written_mb           | Data written to devices    | MB   | mean | less/more
    max_util_pct         | Maximum device utilization | %    | max  | lower/higher             | overall
    max_net_mbps         | Maximum network throughput | MB/s | max  | higher/lower             | overall
    energy_j             | Energy                     | J    | mean | lower/higher
""")
WINDOW = METRICS[1:]  # all but completion_time
# Across the nodes of a cluster (storbench.telemetry.cluster); the rows above are then the
# maxima of the nodes' maxima, sums of MB moved and I/O-weighted average latencies.
CLUSTER = metric_table("""
    cluster_read_mbps    | Cluster read throughput    | MB/s | max  | higher/lower             | overall
    cluster_write_mbps   | Cluster write throughput   | MB/s | max  | higher/lower             | overall
    node_spread_pct      | Spread between nodes       | %    | mean | lower/higher
""")
# Power (storbench.telemetry.power): measured per window where a node has a power source, derived from
# the same window's figures; n/a, never estimated, where none (the manifest's ``power`` says why).
POWER = metric_table("""
    avg_power_w          | Average power              | W      | mean | lower/higher
    max_power_w          | Maximum power              | W      | max  | lower/higher             | overall
    power_above_idle_w   | Power above idle           | W      | mean | lower/higher
    ops_per_watt         | Operations per watt        | ops/W  | mean | more/fewer
    joules_per_gb        | Energy per GB moved        | J/GB   | mean | lower/higher
    gb_per_kwh           | GB moved per kWh           | GB/kWh | mean | more/less
""")
METRICS = METRICS + CLUSTER + POWER
