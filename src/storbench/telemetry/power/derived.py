"""The papers' efficiency figures from one window's own samples: no other window, no estimate.

* ``ops_per_watt``: the workload's operations per second (its own rate metric, see
  ``Workload.ops_per_s``) over the window's average watts (paper 003's Ops/Watt); for the
  unlabelled row only (this machine, or the cluster), where the operations were counted.
* ``joules_per_gb`` and ``gb_per_kwh``: energy against the data the devices moved (read + written)
  in the same window, per node and across nodes.
* ``power_above_idle_w``: the average watts minus the idle baseline's (``--idle-s``).
"""

from __future__ import annotations

from typing import Mapping

from storbench.results.model import Sample

KWH_J = 3.6e6


def _key(sample: Sample) -> str | None:
    return sample.labels.get("node") if set(sample.labels) <= {"node"} else "?"


def derived_samples(
    workload: str,
    repetition: int,
    samples: list[Sample],
    ops_per_s: float | None,
    idle_w: Mapping[str | None, float | None],
) -> list[Sample]:
    """Derived power figures for each group (None: the unlabelled row; a node label) that has a measured
    average power; ``idle_w`` maps the same groups to the idle baseline's watts."""
    groups: dict[str | None, dict[str, float | None]] = {}
    for sample in samples:
        key = _key(sample)
        if key != "?":
            groups.setdefault(key, {})[sample.metric] = sample.value
    out = []
    for key, values in groups.items():
        watts, energy = values.get("avg_power_w"), values.get("energy_j")
        if watts is None or energy is None:
            continue
        labels = {"node": key} if key is not None else {}
        figures: dict[str, float | None] = {}
        if key is None and ops_per_s is not None and watts > 0:
            figures["ops_per_watt"] = ops_per_s / watts
        moved = (values.get("read_mb") or 0.0) + (values.get("written_mb") or 0.0)
        if ("read_mb" in values or "written_mb" in values) and moved > 0 and energy > 0:
            figures["joules_per_gb"] = energy / (moved / 1000)
            figures["gb_per_kwh"] = (moved / 1000) / (energy / KWH_J)
        if idle_w.get(key) is not None:
            figures["power_above_idle_w"] = watts - (idle_w[key] or 0.0)
        units = {"ops_per_watt": "ops/W", "joules_per_gb": "J/GB", "gb_per_kwh": "GB/kWh", "power_above_idle_w": "W"}
        out += [
            Sample(workload, metric, value, units[metric], repetition, dict(labels))
            for metric, value in figures.items()
        ]
    return out
