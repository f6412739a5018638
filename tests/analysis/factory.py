"""Hand-built runs for analysis and report tests (no Spark, no store)."""

from __future__ import annotations

import math
import random
from typing import Any

from storbench.analysis.metrics import spec_for
from storbench.results.model import Run, Sample


def manifest(label: str, **overrides: Any) -> dict[str, Any]:
    base = {
        "schema_version": 1,
        "label": label,
        "suite": "spark-transforms",
        "paper": "000",
        "scale": "tiny",
        "repetitions": 3,
        "parameters": {"rows": 1000000, "partitions": 4, "format": "csv"},
        "workload_parameters": {"groupby": {"rows": 1000000}},
        "workload_versions": {"datagen": "1", "groupby": "1", "repartition": "1", "join": "1"},
        "config": {"target": f"file:///mnt/{label}/sb", "spark_master": "local[*]", "devices": ["sdb"]},
        "machine": {
            "hostname": "node1",
            "cpu_model": "AMD EPYC 7543 32-Core Processor",
            "cores": 64,
            "memory_gb": 251.5,
            "kernel": "5.15.0-73-generic",
            "filesystem": {"mount": f"/mnt/{label}", "type": "xfs", "source": "/dev/md0"},
            "devices": {
                "sdb": {
                    "model": "KIOXIA PM7-R" if "pm7" in label else "Vendor A SATA SSD",
                    "size_gb": 3840,
                    "rotational": False,
                }
            },
        },
        "software": {"storbench": "0.1.0", "spark": "4.3.0", "java": "17.0.12", "python": "3.11.2"},
        "spark_settings": {
            "spark.driver.memory": "5g",
            "spark.executor.memory": "20g",
            "spark.hadoop.fs.s3a.secret.key": "SECRET-NEVER-SHOWN",
        },
        "errors": [],
    }
    for key, value in overrides.items():
        base[key] = value
    return base


def make_run(
    label: str,
    values: dict[tuple[str, str], list[float | None]],
    prepare: dict[tuple[str, str], float | None] | None = None,
    status: str = "succeeded",
    run_id: str | None = None,
    **manifest_overrides: Any,
) -> Run:
    """A run whose ``values[(workload, metric)]`` are repetitions 1..n; ``prepare`` is repetition 0."""
    samples = []
    for (workload, metric), value in (prepare or {}).items():
        samples.append(Sample(workload, metric, value, spec_for(metric).unit, 0))
    for (workload, metric), reps in values.items():
        for rep, value in enumerate(reps, 1):
            samples.append(Sample(workload, metric, value, spec_for(metric).unit, rep))
    run_id = run_id or f"20250101-120000-{label}-abcd"
    return Run(
        run_id=run_id,
        label=label,
        suite="spark-transforms",
        status=status,
        started="2025-01-01T12:00:00Z",
        finished="2025-01-01T12:30:00Z",
        manifest=manifest(label, run_id=run_id, status=status, **manifest_overrides),
        samples=samples,
    )


# Paper 000's summary table: (Vendor A SATA, KIOXIA PM7-R).
PAPER_TIMES = {"groupby": (504.27, 480.93), "repartition": (1136.80, 941.15), "join": (1597.23, 1195.58)}
PAPER_OVERALL = {
    "max_read_mbps": (2192.34, 6369.34),
    "max_write_mbps": (1511.34, 3649.34),
    "avg_read_latency_ms": (45.05, 0.41),
    "avg_write_latency_ms": (210.87, 36.41),
    "max_cpu_pct": (80.0, 95.0),
}


def paper_runs(seed: int = 0) -> list[Run]:
    """Vendor A (baseline) and PM7-R with three repetitions shaped after paper 000's figures."""
    rng = random.Random(seed)
    runs = []
    for side, label in ((0, "sata-vendor-a"), (1, "pm7r-sas")):
        values: dict[tuple[str, str], list[float | None]] = {}
        for w_index, (workload, times) in enumerate(PAPER_TIMES.items()):
            t = times[side]
            values[(workload, "completion_time")] = [t * f for f in (0.98, 1.0, 1.02)]
            for metric, figures in PAPER_OVERALL.items():
                top = figures[side]
                if metric.startswith("max"):
                    peak = top * (1.0 if w_index == 1 else 0.8 + 0.05 * w_index)
                    values[(workload, metric)] = [
                        min(100.0, peak * (1 - 0.04 * k * rng.random()))
                        if metric == "max_cpu_pct"
                        else peak * (1 - 0.04 * k * rng.random())
                        for k in (1, 0, 2)
                    ]
                else:
                    values[(workload, metric)] = [top * f for f in (0.95, 1.0, 1.05)]
        prepare = {
            ("datagen", "completion_time"): 380.0 - 60 * side,
            ("datagen", "max_write_mbps"): None,
            ("datagen", "rows"): 1e10,
        }
        runs.append(make_run(label, values, prepare, run_id=f"20250101-12000{side}-{label}-00{side}f"))
    return runs


def series_loader(run: Run) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A telemetry series and windows like a real run's, derived from the run's own samples."""
    rng = random.Random(run.run_id)
    windows, t = [], 5.0
    per_op = {}
    for s in run.samples:
        if s.metric == "completion_time" and s.value:
            per_op.setdefault((s.repetition, s.workload), s.value / 20.0)
    for (rep, workload), length in sorted(per_op.items(), key=lambda item: item[0][0]):  # suite order
        windows.append({"workload": workload, "repetition": rep, "t0": t, "t1": t + length})
        t += length + 3.0
    fast = "pm7r" in run.label
    rows = []
    for i in range(int(t + 5)):
        active = next((w for w in windows if w["t0"] <= i <= w["t1"]), None)
        phase = 0.0 if active is None else math.sin(math.pi * (i - active["t0"]) / (active["t1"] - active["t0"]))
        read = (6000 if fast else 2100) * phase * (0.7 + 0.3 * rng.random())
        write = (3400 if fast else 1400) * phase * rng.random() * 0.8
        rows.append(
            {
                "t": float(i),
                "read_mbps": round(read, 1),
                "write_mbps": round(write, 1),
                "cpu_pct": round(min(100.0, 5 + (90 if fast else 75) * phase * (0.8 + 0.2 * rng.random())), 1),
                "iowait_pct": round((5 if fast else 22) * phase * rng.random(), 1),
                "net_mbps": None if i % 17 == 0 else round(50 * phase, 1),
                "mem_used_pct": 40.0 + phase * 20,
                "sdb.read_mbps": round(read, 1),
                "sdb.write_mbps": round(write, 1),
            }
        )
    rows[len(rows) // 2]["cpu_pct"] = None  # a sample that could not be read
    return rows, windows
