"""Stored runs for report tests: written through ResultStore as a run writes them (manifest, samples, index).

``ycsb_run`` is shaped after paper 003's suite (load, a, c; per-operation latencies labelled ``op``), with no
power source (so no ops-per-watt figure); ``skipping_pair`` is a skipping off/on A/B whose "on" side reads less.
"""

from __future__ import annotations

from storbench.results.model import Sample
from storbench.results.store import ResultStore
from tests.analysis.factory import manifest

DEVICE = {
    "completion_time": ("s", 30.0),
    "max_read_mbps": ("MB/s", 410.0),
    "max_write_mbps": ("MB/s", 220.0),
    "avg_read_latency_ms": ("ms", 0.8),
    "avg_write_latency_ms": ("ms", 1.9),
    "max_cpu_pct": ("%", 71.0),
}
YCSB = {"ycsb-load": {"INSERT": 1.0}, "ycsb-a": {"READ": 1.0, "UPDATE": 1.3}, "ycsb-c": {"READ": 0.9}}


def _store(store: ResultStore, run_id: str, label: str, samples: list[Sample], **overrides) -> str:
    writer = store.create_run(run_id, manifest(label, **overrides))
    writer.add_samples(samples)
    writer.finish("succeeded")
    return run_id


def ycsb_run(
    store: ResultStore,
    label: str = "cassandra-nvme",
    speed: float = 1.0,
    run_id: str = "20250301-100000-cassandra-nvme-003a",
) -> str:
    samples = []
    for workload, ops in YCSB.items():
        for rep, wobble in ((1, 0.98), (2, 1.0), (3, 1.02)):
            for metric, (unit, value) in DEVICE.items():
                samples.append(Sample(workload, metric, value * wobble, unit, rep))
            rate = "ycsb_load_throughput_ops_s" if workload == "ycsb-load" else "ycsb_throughput_ops_s"
            samples += [
                Sample(workload, rate, 41_000.0 * speed * wobble, "ops/s", rep),
                Sample(workload, "ycsb_ops_per_server_thread", 641.0 * speed * wobble, "ops/s/thread", rep),
                Sample(workload, "ycsb_server_threads", 64.0, "threads", rep),
                Sample(workload, "ycsb_p99_latency_us", 2_100.0 / speed * wobble, "us", rep),
                Sample(workload, "ycsb_avg_latency_us", 700.0 / speed * wobble, "us", rep),
            ]
            for op, factor in ops.items():
                samples += [
                    Sample(
                        workload, "ycsb_p99_latency_us", 2_000.0 * factor / speed * wobble, "us", rep, labels={"op": op}
                    ),
                    Sample(
                        workload, "ycsb_avg_latency_us", 650.0 * factor / speed * wobble, "us", rep, labels={"op": op}
                    ),
                ]
    return _store(
        store,
        run_id,
        label,
        samples,
        suite="ycsb-003",
        paper="003",
        parameters={"recordcount": 100_000},
        workload_parameters={},
        workload_versions={workload: "1" for workload in YCSB},
        config={"target": "cassandra://127.0.0.1:9042/ycsb", "devices": ["nvme0n1"]},
    )


def skipping_pair(store: ResultStore) -> list[str]:
    """skipping off (baseline) and on: on reads 10× fewer bytes, at a lower device read rate, and runs faster."""
    ids = []
    for index, (mode, read_mb, mbps, seconds) in enumerate((("off", 800.0, 400.0, 6.0), ("on", 80.0, 120.0, 2.0))):
        samples = [
            Sample("skipping-range", metric, value * wobble, unit, rep)
            for rep, wobble in ((1, 0.99), (2, 1.0), (3, 1.01))
            for metric, unit, value in (
                ("completion_time", "s", seconds),
                ("max_read_mbps", "MB/s", mbps),
                ("target_read_mb", "MB", read_mb),
                ("rows_scanned", "rows", 1e6),
            )
        ]
        ids.append(
            _store(
                store,
                f"20250301-11000{index}-skip-{mode}-00{index}b",
                f"skip-{mode}",
                samples,
                suite="skipping",
                paper="001",
                parameters={"skipping": mode},
                workload_parameters={},
                workload_versions={"skipping-range": "1"},
            )
        )
    return ids
