"""Derived power figures come from the same window's samples, and each workload's operations rate."""

from __future__ import annotations

import pytest

from storbench.results.model import Sample
from storbench.telemetry.power.derived import derived_samples
from storbench.workloads.base import all_workloads


def _s(metric, value, **labels):
    return Sample("w", metric, value, "", 1, labels)


def test_per_node_and_cluster_rows():
    samples = [
        _s("energy_j", 500.0),
        _s("avg_power_w", 250.0),
        _s("read_mb", 1500.0),
        _s("written_mb", 500.0),
        _s("energy_j", 100.0, node="worker-1"),
        _s("avg_power_w", 50.0, node="worker-1"),
        _s("written_mb", 0.0, node="worker-1"),
        _s("energy_j", 9.0, devices="shuffle"),
    ]  # another label set: not a power row
    out = {
        (s.metric, s.labels.get("node")): s.value
        for s in derived_samples("w", 1, samples, 1000.0, {None: 200.0, "worker-1": 45.0})
    }
    assert out == {
        ("ops_per_watt", None): 4.0,
        ("joules_per_gb", None): 250.0,
        ("gb_per_kwh", None): pytest.approx(2.0 / (500 / 3.6e6)),
        ("power_above_idle_w", None): 50.0,
        ("power_above_idle_w", "worker-1"): 5.0,
    }  # no data moved on worker-1: no per-GB figure


def test_without_power_nothing_is_derived():
    samples = [_s("energy_j", None), _s("read_mb", 10.0)]
    assert derived_samples("w", 1, samples, 1000.0, {None: 100.0}) == []


def test_operations_rates_of_workloads():
    fio, objects = all_workloads()["fio-randread"](), all_workloads()["objects-mixed"]()
    fio_samples = [
        Sample("fio-randread", "fio_iops", 900.0, "IOPS", 1, {"ioengine": "libaio", "dir": "read"}),
        Sample("fio-randread", "fio_iops", 100.0, "IOPS", 1, {"ioengine": "libaio", "dir": "write"}),
        Sample("fio-randread", "fio_iops", 450.0, "IOPS", 1, {"job": "0", "dir": "read"}),
        Sample("fio-randread", "fio_iops_stddev", 7.0, "IOPS", 1, {}),
    ]
    assert fio.ops_per_s({}, fio_samples, 3.0) == 1000.0
    object_samples = [
        Sample("o", "obj_ops_per_s", 300.0, "ops/s", 1, {}),
        Sample("o", "obj_ops_per_s", 200.0, "ops/s", 1, {"op": "GET"}),
    ]
    assert objects.ops_per_s({}, object_samples, 3.0) == 300.0
    assert all_workloads()["groupby"]().ops_per_s({"rows": 200_000}, [], 4.0) == 50_000.0


@pytest.mark.parametrize(
    "metric, new, old, said",
    [
        ("ops_per_watt", 49.0, 3.0, "16× more operations per watt"),  # paper 003: SSDs 49 Ops/Watt, HDDs 3
        ("ops_per_watt", 3.0, 49.0, "16× fewer operations per watt"),
        ("ops_per_watt", 1.45, 1.0, "45% more operations per watt"),
        ("gb_per_kwh", 30.0, 10.0, "3.0× more GB moved per kWh"),
        ("joules_per_gb", 5.0, 10.0, "energy per GB moved 50% lower"),
        ("ops_per_watt", 1.01, 1.0, "operations per watt no change"),
    ],
)
def test_compare_says_efficiency_like_the_paper(metric, new, old, said):
    from storbench.analysis import wording
    from storbench.analysis.metrics import spec_for

    spec = spec_for(metric)
    words = wording.delta_words(spec, wording.relative_change(new, old))
    assert wording.phrase(spec, wording.lower_first(spec.title), words) == said
