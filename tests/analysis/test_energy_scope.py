"""Energy figures carry their power scope in every format, and compare refuses to compare them across scopes."""

from __future__ import annotations

import json

import pytest

from storbench.analysis.compare import compare_runs
from storbench.report import render
from storbench.telemetry.power import NodePower
from storbench.telemetry.power.scope import default_line, scope_text
from tests.analysis.factory import make_run

RAPL = {"source": "rapl", "scope": "cpu-package", "from": "collector", "gaps": [], "idle_w": None}
IPMI = {"source": "ipmi", "scope": "node-psu", "host": "10.0.0.9", "gaps": [], "idle_w": None}
METER = {"source": "command", "scope": "unknown", "command": "meter", "gaps": [], "idle_w": None}
TIMES = {"slow": [12.0, 12.1, 11.9], "fast": [4.0, 4.1, 3.9]}
PER_WATT = {"slow": [3.0, 3.1, 2.9], "fast": [49.0, 50.0, 48.0]}


def _runs(power_a, power_b):
    return [
        make_run(
            label,
            {
                ("ycsb-a", "completion_time"): TIMES[label],
                ("ycsb-a", "ops_per_watt"): PER_WATT[label],
                ("ycsb-a", "energy_j"): [100.0, 101.0, 99.0],
            },
            run_id=f"20250101-12000{k}-{label}-abcd",
            power=power,
        )
        for k, (label, power) in enumerate((("slow", power_a), ("fast", power_b)))
    ]


def _row(comparison, metric):
    return next(r for r in comparison.rows if r.metric == metric and r.workload == "ycsb-a")


@pytest.mark.parametrize(
    "info, said",
    [
        (RAPL, "CPU package (RAPL)"),
        ({**RAPL, "scope": "dram"}, "DRAM (RAPL)"),
        (IPMI, "node PSU (IPMI DCMI)"),
        ({"source": "redfish", "scope": "node-psu"}, "node PSU (Redfish)"),
        (METER, "as declared: unknown"),
        ({**METER, "scope": "wall", "scope_declared": True}, "wall (as declared)"),
        ({**IPMI, "scope": "wall", "scope_declared": True}, "wall (IPMI DCMI, as declared)"),
        ({"source": "none", "why": "no RAPL counters"}, None),
    ],
)
def test_scope_words(info, said):
    assert scope_text(info) == said


def test_one_scope_is_said_in_every_format_and_compared():
    comparison = compare_runs(_runs(RAPL, RAPL))
    row = _row(comparison, "ops_per_watt")
    assert row.title == "Operations per watt [scope: CPU package (RAPL)]" and row.deltas[1].verdict == "better"
    assert _row(comparison, "completion_time").title == "Time to complete"  # other figures: no scope
    assert [h.text for h in comparison.headlines if h.metric == "ops_per_watt"] == [
        "fast vs slow: ycsb-a: 16× more operations per watt [scope: CPU package (RAPL)] (95% CI 15× to 18×, Welch, detects ≥13%)"
    ]
    assert not any("energy" in w for w in comparison.warnings)
    table, md, html = (render(comparison, fmt) for fmt in ("table", "md", "html"))
    for text in (table, md):
        assert (
            "Operations per watt [scope: CPU package (RAPL)]" in text and "Energy [scope: CPU package (RAPL)]" in text
        )
        assert "Power scope" in text and "CPU package (RAPL)" in text
    assert "Operations per watt [scope: CPU package (RAPL)]" in html and "Power scope" in html
    data = json.loads(render(comparison, "json"))
    [ops] = [r for r in data["rows"] if r["metric"] == "ops_per_watt"]
    assert ops["power_scopes"] == ["CPU package (RAPL)"] * 2 and ops["title"].endswith("[scope: CPU package (RAPL)]")
    assert [run["power_scope"] for run in data["runs"]] == ["CPU package (RAPL)"] * 2
    assert "power_scopes" not in next(r for r in data["rows"] if r["metric"] == "completion_time")


def test_rapl_against_a_psu_is_not_comparable_for_energy_only():
    comparison = compare_runs(_runs(RAPL, IPMI))
    for metric in ("ops_per_watt", "energy_j"):
        row = _row(comparison, metric)
        assert row.title.endswith("[scopes differ: CPU package (RAPL) / node PSU (IPMI DCMI)]")
        assert (row.deltas[1].words, row.deltas[1].verdict, row.deltas[1].rel) == (
            "not comparable (power scope)",
            "n/a",
            None,
        )
    assert [h.metric for h in comparison.headlines] == ["completion_time"]  # no "16× more operations per watt"
    assert _row(comparison, "completion_time").deltas[1].verdict == "better" and comparison.comparable
    note = (
        "energy figures NOT COMPARABLE: power scope slow: CPU package (RAPL), fast: node PSU (IPMI DCMI); "
        "different parts of the machine or an unknown one, so energy, watt and per-watt rows are not compared "
        "(the other figures are)"
    )
    assert note in comparison.warnings
    for fmt in ("table", "md", "html"):
        text = render(comparison, fmt)
        assert "not comparable (power scope)" in text and "NOT COMPARABLE: power scope" in text, fmt
        assert "16× more operations per watt" not in text and "×16" not in text, fmt
    data = json.loads(render(comparison, "json"))
    assert note in data["warnings"] and data["comparable"] is True
    [ops] = [r for r in data["rows"] if r["metric"] == "ops_per_watt"]
    assert ops["power_scopes"] == ["CPU package (RAPL)", "node PSU (IPMI DCMI)"]
    assert ops["deltas"][1]["words"] == "not comparable (power scope)" and ops["deltas"][1]["rel"] is None


def test_an_unknown_scope_is_never_compared_even_with_itself():
    comparison = compare_runs(_runs(METER, METER))
    row = _row(comparison, "ops_per_watt")
    assert row.title == "Operations per watt [scope: as declared: unknown]"
    assert row.deltas[1].words == "not comparable (power scope)"
    assert any(w.startswith("energy figures NOT COMPARABLE") for w in comparison.warnings)


def test_per_node_scopes_and_the_cluster_row():
    nodes = {"nodes": {"worker-1": IPMI, "worker-2": {**IPMI, "host": "10.0.0.10"}}, "cluster_why": None}
    mixed = {"nodes": {"worker-1": IPMI, "worker-2": RAPL}, "cluster_why": "different scopes"}
    runs = [
        make_run(
            label,
            {("fio-write", "completion_time"): [1.0, 1.0, 1.0], ("fio-write", "energy_j"): [50.0, 51.0, 49.0]},
            run_id=f"2025010{k}-{label}-ab",
            power=p,
        )
        for k, (label, p) in enumerate((("a", nodes), ("b", mixed)))
    ]
    for run in runs:  # each node's own row
        run.samples += [
            s.__class__(s.workload, s.metric, s.value, s.unit, s.repetition, {"node": "worker-2"})
            for s in run.samples
            if s.metric == "energy_j"
        ]
    comparison = compare_runs(runs)
    cluster, node = (
        next(r for r in comparison.rows if r.metric == "energy_j" and r.labels == labels)
        for labels in ({}, {"node": "worker-2"})
    )
    assert cluster.scopes == ["node PSU (IPMI DCMI)", None]  # b's nodes differ: no cluster scope
    assert node.title == "Energy [node=worker-2] [scopes differ: node PSU (IPMI DCMI) / CPU package (RAPL)]"
    assert node.deltas[1].words == "not comparable (power scope)"
    assert comparison.runs[1].power_scope == "worker-1: node PSU (IPMI DCMI); worker-2: CPU package (RAPL)"


def test_the_default_line_names_the_nodes_on_default_rapl():
    rapl = NodePower({"source": "rapl", "scope": "cpu-package"}, snapshots=list, default=True)
    chosen = NodePower({"source": "ipmi", "scope": "node-psu"})
    assert default_line({"": rapl}, "--power") == (
        "power: CPU package only (RAPL): no drives, no DRAM; --power to choose another source"
    )
    assert default_line({"worker-1": rapl, "worker-2": chosen}, "a power: key") == (
        "power: CPU package only (RAPL) on worker-1: no drives, no DRAM; a power: key to choose another source"
    )
    assert default_line({"": chosen}, "--power") is None and default_line({"": None}, "--power") is None
