"""The metric catalog: unit, direction, aggregation over repetitions and the paper's wording.

Paper 000 aggregates throughput and CPU as the maximum of the repetitions and latency
and completion time as their mean; ``aggregation`` encodes that rule per metric.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class MetricSpec:
    name: str
    title: str  # as the paper names it
    unit: str
    higher_is_better: bool
    aggregation: str  # "max" | "mean" | "min" | "sum"
    better_word: str  # "faster", "higher", "lower", "better usage"
    worse_word: str
    # True when one figure over all timed operations means something (paper 000's summary
    # table and headlines give maximum throughput, average latency and maximum CPU overall).
    overall: bool = False

    @property
    def direction(self) -> str:
        return "higher is better" if self.higher_is_better else "lower is better"


_CATALOG = [
    MetricSpec("completion_time", "Time to complete", "s", False, "mean", "faster", "slower"),
    MetricSpec("max_read_mbps", "Maximum read throughput", "MB/s", True, "max", "higher", "lower", True),
    MetricSpec("max_write_mbps", "Maximum write throughput", "MB/s", True, "max", "higher", "lower", True),
    MetricSpec("avg_read_latency_ms", "Average read latency", "ms", False, "mean", "lower", "higher", True),
    MetricSpec("avg_write_latency_ms", "Average write latency", "ms", False, "mean", "lower", "higher", True),
    MetricSpec("max_cpu_pct", "Maximum CPU utilization", "%", True, "max", "better usage", "worse usage", True),
    MetricSpec("avg_cpu_pct", "Average CPU utilization", "%", True, "mean", "better usage", "worse usage", True),
    MetricSpec("read_mb", "Data read from devices", "MB", False, "mean", "less", "more"),
    MetricSpec("written_mb", "Data written to devices", "MB", False, "mean", "less", "more"),
    MetricSpec("max_util_pct", "Maximum device utilization", "%", False, "max", "lower", "higher", True),
    MetricSpec("max_net_mbps", "Maximum network throughput", "MB/s", True, "max", "higher", "lower", True),
    MetricSpec("energy_j", "Energy", "J", False, "mean", "lower", "higher"),
    MetricSpec("rows", "Rows", "rows", True, "max", "more", "fewer"),
    MetricSpec("dataset_mb", "Dataset size", "MB", True, "max", "larger", "smaller"),
    # Spark's own task metrics per operation (diagnostics beside the paper's device metrics).
    MetricSpec("spark_task_time_s", "Spark task time", "s", False, "mean", "lower", "higher"),
    MetricSpec("spark_input_mb", "Spark input", "MB", False, "mean", "less", "more"),
    MetricSpec("spark_output_mb", "Spark output", "MB", False, "mean", "less", "more"),
    MetricSpec("shuffle_read_mb", "Shuffle read", "MB", False, "mean", "less", "more"),
    MetricSpec("shuffle_write_mb", "Shuffle write", "MB", False, "mean", "less", "more"),
    MetricSpec("shuffle_read_blocked_s", "Shuffle read blocked time", "s", False, "mean", "lower", "higher"),
    MetricSpec("spill_memory_mb", "Spilled to memory", "MB", False, "mean", "less", "more"),
    MetricSpec("spill_disk_mb", "Spilled to disk", "MB", False, "mean", "less", "more"),
    MetricSpec("gc_time_s", "JVM GC time", "s", False, "mean", "lower", "higher"),
    MetricSpec("spark_tasks", "Spark tasks", "tasks", False, "mean", "fewer", "more"),
    # TeraGen/TeraSort/TeraValidate and TPCx-HS (papers 001, 002)
    MetricSpec("records", "Records", "records", True, "max", "more", "fewer"),
    MetricSpec("records_per_s", "Records per second", "records/s", True, "mean", "higher", "lower"),
    MetricSpec("data_mbps", "Data rate (size / time)", "MB/s", True, "mean", "higher", "lower"),
    MetricSpec("gb_per_core_hour", "Data processed per core-hour", "GB/core-h", True, "mean", "higher", "lower"),
    MetricSpec("hs_elapsed_s", "TPCx-HS elapsed time", "s", False, "mean", "faster", "slower"),
    MetricSpec("hsph", "HSph@SF", "HSph@SF", True, "mean", "higher", "lower"),
    # TPC-DS (paper 001; storbench.workloads.tpcds): per-query rows carry the labels query and streams
    MetricSpec("query_time", "Query time", "s", False, "median", "faster", "slower"),
    MetricSpec("query_ok", "Query ran and matched DuckDB's answer", "ok", True, "min", "better", "worse"),
    MetricSpec("total_time", "Total time of the streams", "s", False, "mean", "faster", "slower"),
    MetricSpec("stream_time", "Stream time", "s", False, "mean", "faster", "slower"),
    MetricSpec("geomean_query_time", "Geometric mean of query times", "s", False, "mean", "faster", "slower"),
    MetricSpec("stream_degradation_pct", "Multi-stream degradation vs one stream", "%", False, "mean", "lower",
               "higher"),
    MetricSpec("queries_failed", "Queries failed or mismatched", "queries", False, "max", "fewer", "more"),
    MetricSpec("generate_s", "Generator time", "s", False, "mean", "faster", "slower"),
    MetricSpec("layout_s", "Layout write time", "s", False, "mean", "faster", "slower"),
    MetricSpec("register_s", "Catalog registration time", "s", False, "mean", "faster", "slower"),
    MetricSpec("analyze_s", "Statistics collection time", "s", False, "mean", "faster", "slower"),
    MetricSpec("partitions", "Catalog partitions", "partitions", False, "max", "fewer", "more"),
    # TestDFSIO (papers 002, 004): the paper reports the mean and stddev across runs
    MetricSpec("dfsio_throughput_mbps", "TestDFSIO throughput", "MB/s", True, "mean", "higher", "lower"),
    MetricSpec("dfsio_avg_io_rate_mbps", "TestDFSIO average I/O rate", "MB/s", True, "mean", "higher", "lower"),
    MetricSpec("dfsio_io_rate_stddev_mbps", "TestDFSIO I/O rate stddev", "MB/s", False, "mean", "more consistent",
               "less consistent"),
    MetricSpec("dfsio_total_mb", "TestDFSIO data processed", "MB", True, "max", "more", "less"),
    # --- fio (papers 002, 004; storbench.workloads.fio) -- owned by the fio workloads ---
    # fio's own figures for the whole job (group aggregate), MB = 10^6 bytes; samples carry
    # ioengine/direct (and fallback) labels, per-job ones a job label.
    MetricSpec("fio_bw_mbps", "fio bandwidth", "MB/s", True, "mean", "higher", "lower"),
    MetricSpec("fio_iops", "fio IOPS", "IOPS", True, "mean", "higher", "lower"),
    MetricSpec("fio_io_mb", "fio data transferred", "MB", True, "mean", "more", "less"),
    MetricSpec("fio_runtime_s", "fio measured runtime", "s", False, "mean", "shorter", "longer"),
    MetricSpec("fio_lat_mean_ms", "fio mean latency (submission + completion)", "ms", False, "mean", "lower",
               "higher"),
    MetricSpec("fio_clat_p50_ms", "fio completion latency p50", "ms", False, "mean", "lower", "higher"),
    MetricSpec("fio_clat_p90_ms", "fio completion latency p90", "ms", False, "mean", "lower", "higher"),
    MetricSpec("fio_clat_p99_ms", "fio completion latency p99", "ms", False, "mean", "lower", "higher"),
    MetricSpec("fio_clat_p99_9_ms", "fio completion latency p99.9", "ms", False, "mean", "lower", "higher"),
    # consistency (paper 004): standard deviation of fio's per-second series
    MetricSpec("fio_bw_stddev_mbps", "fio per-second bandwidth stddev", "MB/s", False, "mean", "more consistent",
               "less consistent"),
    MetricSpec("fio_iops_stddev", "fio per-second IOPS stddev", "IOPS", False, "mean", "more consistent",
               "less consistent"),
    # --- end of fio ---
    # --- rados bench (paper 004; storbench.workloads.rados_bench) -- owned by the rados workloads ---
    # rados bench's own summary figures (its MB/sec is MiB/s, converted to MB/s = 10^6 B/s here);
    # the fio driver (driver=fio) reports the same metrics from fio's figures.
    MetricSpec("rados_bw_mbps", "Bandwidth", "MB/s", True, "mean", "higher", "lower"),
    MetricSpec("rados_avg_iops", "Average IOPS", "IOPS", True, "mean", "higher", "lower"),
    MetricSpec("rados_stddev_iops", "Stddev IOPS", "IOPS", False, "mean", "more consistent", "less consistent"),
    MetricSpec("rados_max_iops", "Max IOPS", "IOPS", True, "mean", "higher", "lower"),
    MetricSpec("rados_min_iops", "Min IOPS", "IOPS", True, "mean", "higher", "lower"),
    MetricSpec("rados_avg_lat_ms", "Average latency", "ms", False, "mean", "lower", "higher"),
    MetricSpec("rados_max_lat_ms", "Max latency", "ms", False, "mean", "lower", "higher"),
    MetricSpec("rados_ops", "Operations completed", "ops", True, "mean", "more", "fewer"),
    # --- consistency of any per-second series (paper 004; storbench.analysis.consistency) ---
    MetricSpec("ps_iops_mean", "Per-second IOPS mean", "IOPS", True, "mean", "higher", "lower"),
    MetricSpec("ps_iops_stddev", "Per-second IOPS stddev", "IOPS", False, "mean", "more consistent",
               "less consistent"),
    MetricSpec("ps_iops_cv", "Per-second IOPS CV (stddev/mean)", "%", False, "mean", "more consistent",
               "less consistent"),
    MetricSpec("ps_iops_min", "Per-second IOPS min", "IOPS", True, "mean", "higher", "lower"),
    MetricSpec("ps_iops_max", "Per-second IOPS max", "IOPS", True, "mean", "higher", "lower"),
    MetricSpec("ps_iops_p1", "Per-second IOPS p1", "IOPS", True, "mean", "higher", "lower"),
    MetricSpec("ps_iops_p99", "Per-second IOPS p99", "IOPS", True, "mean", "higher", "lower"),
    MetricSpec("ps_iops_stalls", "Stalls (seconds under half the median IOPS)", "s", False, "mean", "fewer",
               "more"),
    MetricSpec("ps_mbps_mean", "Per-second throughput mean", "MB/s", True, "mean", "higher", "lower"),
    MetricSpec("ps_mbps_stddev", "Per-second throughput stddev", "MB/s", False, "mean", "more consistent",
               "less consistent"),
    MetricSpec("ps_mbps_cv", "Per-second throughput CV (stddev/mean)", "%", False, "mean", "more consistent",
               "less consistent"),
    MetricSpec("ps_mbps_min", "Per-second throughput min", "MB/s", True, "mean", "higher", "lower"),
    MetricSpec("ps_mbps_max", "Per-second throughput max", "MB/s", True, "mean", "higher", "lower"),
    MetricSpec("ps_mbps_p1", "Per-second throughput p1", "MB/s", True, "mean", "higher", "lower"),
    MetricSpec("ps_mbps_p99", "Per-second throughput p99", "MB/s", True, "mean", "higher", "lower"),
    MetricSpec("ps_mbps_stalls", "Stalls (seconds under half the median throughput)", "s", False, "mean",
               "fewer", "more"),
    # --- end of rados bench and consistency ---
    # --- objects (paper 001's COSBench stages; storbench.workloads.objects, native engine) ---
    # MB = 10^6 bytes; latency from each request's intended start (open loop) or its send (closed).
    MetricSpec("obj_mbps", "Object throughput", "MB/s", True, "max", "higher", "lower"),
    MetricSpec("obj_ops_per_s", "Object operations per second", "ops/s", True, "max", "higher", "lower"),
    MetricSpec("obj_lat_p50_ms", "Object latency p50", "ms", False, "mean", "lower", "higher"),
    MetricSpec("obj_lat_p90_ms", "Object latency p90", "ms", False, "mean", "lower", "higher"),
    MetricSpec("obj_lat_p99_ms", "Object latency p99", "ms", False, "mean", "lower", "higher"),
    MetricSpec("obj_lat_p99_9_ms", "Object latency p99.9", "ms", False, "mean", "lower", "higher"),
    MetricSpec("obj_lat_max_ms", "Object latency max", "ms", False, "mean", "lower", "higher"),
    MetricSpec("obj_ttfb_p50_ms", "Object time to first byte p50", "ms", False, "mean", "lower", "higher"),
    MetricSpec("obj_ttfb_p99_ms", "Object time to first byte p99", "ms", False, "mean", "lower", "higher"),
    MetricSpec("obj_cpu_us_per_op", "Client CPU per operation", "us", False, "mean", "lower", "higher"),
    MetricSpec("obj_hwm_mbps", "Throughput high-water mark", "MB/s", True, "max", "higher", "lower"),
    MetricSpec("obj_hwm_ops_per_s", "Operations high-water mark", "ops/s", True, "max", "higher", "lower"),
    MetricSpec("obj_hwm_clients", "Clients at the high-water mark", "clients", False, "mean", "fewer", "more"),
    MetricSpec("obj_ops", "Object operations", "ops", True, "mean", "more", "fewer"),
    MetricSpec("obj_errors", "Object operation errors", "errors", False, "mean", "fewer", "more"),
    MetricSpec("obj_not_issued", "Scheduled requests never started (open loop)", "ops", False, "mean", "fewer",
               "more"),
    # --- end of objects ---
]

CATALOG: dict[str, MetricSpec] = {spec.name: spec for spec in _CATALOG}


def spec_for(metric: str, unit: str = "") -> MetricSpec:
    """The spec of a metric; an unknown metric is lower-is-better-by-mean only if its unit is time."""
    if metric in CATALOG:
        return CATALOG[metric]
    if unit in ("s", "ms", "us"):
        return MetricSpec(metric, metric.replace("_", " "), unit, False, "mean", "lower", "higher")
    return MetricSpec(metric, metric.replace("_", " "), unit, True, "mean", "higher", "lower")
