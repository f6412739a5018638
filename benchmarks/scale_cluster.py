"""A SIMULATED cluster run for the scale benchmarks and their tests: ``nodes`` nodes' telemetry at 1 s, no
cluster ever ran it.

``cluster_run(store, nodes, seconds, slow)`` stores one run the way a cluster run is stored (``ResultStore``'s
``create_run``, samples, ``telemetry.csv`` with the cluster's columns and each node's ``<label>.<column>``
beside them, ``windows.json``, ``slowest_nodes`` and ``config.nodes`` in the manifest), two operations
(``fio-write`` for the first half, ``fio-read`` for the second) and returns its run id. The nodes named in
``slow`` run at a third of the others' throughput; the manifest names the first of them the slowest node of
each operation, as the telemetry's own judgement would.
"""

from __future__ import annotations

import math
import random
from typing import Any

from storbench.results.model import Sample
from storbench.results.series import to_csv
from storbench.results.store import ResultStore

COLUMNS = ("read_mbps", "write_mbps", "cpu_pct", "util_pct", "net_mbps")


def node_label(k: int) -> str:
    return f"worker-{k}"


def _rows(nodes: int, seconds: int, slow: set[str], rng: random.Random) -> list[dict[str, Any]]:
    half = seconds // 2
    rows = []
    for t in range(1, seconds + 1):
        writing = t <= half
        row: dict[str, Any] = {"t": float(t)}
        per: dict[str, dict[str, float]] = {}
        for k in range(1, nodes + 1):
            label = node_label(k)
            speed = (1 / 3 if label in slow else 1.0) * (0.85 + 0.3 * rng.random()) * (1 + 0.05 * math.sin(t / 60 + k))
            mbps = round(400 * speed, 2)
            per[label] = {
                "read_mbps": 0.0 if writing else mbps,
                "write_mbps": mbps if writing else 0.0,
                "cpu_pct": round(20 + 50 * speed * rng.random(), 2),
                "util_pct": round(min(100.0, 60 * speed + 30 * rng.random()), 2),
                "net_mbps": round(mbps * 0.9, 2),
            }
        for key, combine in (("read_mbps", sum), ("write_mbps", sum), ("net_mbps", sum), ("util_pct", max)):
            row[key] = round(combine(v[key] for v in per.values()), 2)
        row["cpu_pct"] = round(sum(v["cpu_pct"] for v in per.values()) / nodes, 2)
        for label, values in per.items():
            row.update({f"{label}.{key}": value for key, value in values.items()})
        rows.append(row)
    return rows


def _samples(workload: str, way: str, rows: list[dict[str, Any]], nodes: int) -> list[Sample]:
    out = []
    for k in range(1, nodes + 1):
        label = node_label(k)
        series = [row[f"{label}.{way}_mbps"] for row in rows]
        values = {
            f"max_{way}_mbps": max(series),
            ("written_mb" if way == "write" else "read_mb"): sum(series),
            "max_cpu_pct": max(row[f"{label}.cpu_pct"] for row in rows),
            "max_util_pct": max(row[f"{label}.util_pct"] for row in rows),
        }
        units = {"max_cpu_pct": "%", "max_util_pct": "%"}
        out += [
            Sample(workload, m, v, units.get(m, "MB/s" if m.endswith("mbps") else "MB"), 1, {"node": label})
            for m, v in values.items()
        ]
    cluster = [row[f"{way}_mbps"] for row in rows]
    out += [
        Sample(workload, "completion_time", float(len(rows)), "s", 1),
        Sample(workload, f"max_{way}_mbps", max(cluster), "MB/s", 1),
        Sample(workload, f"cluster_{way}_mbps", sum(cluster) / len(cluster), "MB/s", 1),
        Sample(workload, "node_spread_pct", 66.7, "%", 1),
    ]
    return out


def cluster_run(
    store: ResultStore, nodes: int, seconds: int, slow: tuple[str, ...] = ("worker-17", "worker-58"), seed: int = 28
) -> str:
    rng = random.Random(seed)
    slow = tuple(s for s in slow if int(s.split("-")[1]) <= nodes) or (node_label(nodes),)
    rows = _rows(nodes, seconds, set(slow), rng)
    half = seconds // 2
    windows = [
        {"workload": "fio-write", "repetition": 1, "t0": 0.0, "t1": float(half)},
        {"workload": "fio-read", "repetition": 1, "t0": float(half), "t1": float(seconds)},
    ]
    label = f"sim-{nodes}-nodes"
    run_id = f"20260101-000000-{label}-{nodes % 65536:04x}"
    config = {
        "target": "hdfs://namenode:8020/sb",
        "devices": ["vda"],
        "telemetry_interval_s": 1.0,
        "nodes": [
            {
                "label": node_label(k),
                "name": f"n{k:03d}",
                "role": "worker",
                "host": f"10.0.{k // 250}.{k % 250}",
                "devices": ["vda"],
            }
            for k in range(1, nodes + 1)
        ],
    }
    manifest = {
        "label": label,
        "suite": "simulated-cluster",
        "scale": "sim",
        "repetitions": 1,
        "parameters": {},
        "config": config,
        "machine": {"hostname": "driver", "cores": 8, "nodes": {}},
        "errors": [],
        "workload_versions": {"fio-write": "1", "fio-read": "1"},
    }
    writer = store.create_run(run_id, manifest)
    writer.add_samples(
        _samples("fio-write", "write", rows[:half], nodes) + _samples("fio-read", "read", rows[half:], nodes)
    )
    writer.write_series(to_csv(rows), windows)
    writer.update_manifest(
        slowest_nodes=[
            {"workload": w["workload"], "repetition": 1, "node": slow[0], "spread_pct": 66.7} for w in windows
        ],
        telemetry_gaps=[],
    )
    writer.finish("succeeded")
    return run_id
