"""The metrics of the run's timed window: time to complete and the host's telemetry.

The runner reports ``completion_time`` (the length of ``ctx.measure()``); everything in
:data:`WINDOW` comes from :func:`storbench.telemetry.window.window_metrics`, in this
order; a cluster adds :data:`CLUSTER`. MB is 10^6 bytes; latency in milliseconds; CPU and utilization in percent.

A maximum throughput (read, write, network, a cluster's) is the papers' peak of the throughput
series, each point averaged over 3 s: the most MB moved in any 3 seconds of the window over 3 s
(the window's average if it is shorter; ``window.peak_rate``). One sampling interval alone can
catch a burst (a throttled device's credit after idle, a page-cache flush: +6% in 1 s on a lab
device); 3 s keep a throttled device within 5% of its limit and find a peak that lasts 3 s exactly.
Maximum CPU and device utilization are the highest sampling interval's.
"""

from __future__ import annotations

from storbench.results.metrics import metric_table

METRIC_SECTION = 10  # where this section comes in reports (storbench.analysis.metrics)

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
    max_net_rx_mbps      | Maximum receive throughput | MB/s | max  | higher/lower
    max_net_tx_mbps      | Maximum send throughput    | MB/s | max  | higher/lower
    energy_j             | Energy                     | J    | mean | lower/higher
""")
WINDOW = METRICS[1:]  # all but completion_time
# Across the nodes of a cluster (storbench.telemetry.cluster); the rows above are then the
# maxima of the nodes' maxima, sums of MB moved and I/O-weighted average latencies. Cluster
# throughput is the peak of the nodes' summed MB/s, over 3 s as above.
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
