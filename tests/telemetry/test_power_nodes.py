"""Power per node from a nodes file's ``power:`` key, and across nodes only when every node has the same
scope (readings of different scopes are never added)."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.cli.helpers import storbench
from tests.telemetry.exporters import needs_exporter, start_exporter
from tests.telemetry.redfish_server import needs_sushy, start_bmc

pytestmark = [
    pytest.mark.real,  # real BMCs (sushy-static), node_exporters and the CLI
    needs_sushy,
    needs_exporter,
    pytest.mark.skipif(shutil.which("fio") is None, reason="no fio"),
]


def _nodes_run(tmp_path, power_a: str, power_b: str):
    exporter = start_exporter("127.0.0.41")
    home, target = tmp_path / "home", tmp_path / "target"
    target.mkdir()
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(
        f"nodes:\n  - {{name: here, role: worker, exporter: local, power: '{power_a}'}}\n"
        f"  - {{name: there, role: worker, exporter: {exporter.url}, power: '{power_b}'}}\n"
    )
    try:
        done = storbench(
            home,
            "run",
            "fio-002",
            "--scale",
            "tiny",
            "--target",
            str(target),
            "--nodes",
            str(nodes),
            "--set",
            "runtime_s=3",
            "--set",
            "size=16m",
            "--repeat",
            "1",
            "--interval",
            "0.5",
            timeout=300,
        )
    finally:
        exporter.stop()
    assert done.returncode == 0, done.stderr
    run = next(home.glob("runs/*"))
    samples = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    return run, json.loads((run / "manifest.json").read_text()), samples


def _get(samples, workload, metric, node=None):
    [value] = [
        s["value"]
        for s in samples
        if s["workload"] == workload and s["metric"] == metric and s["labels"] == ({"node": node} if node else {})
    ]
    return value


def test_each_node_its_own_bmc_and_the_cluster_their_sum(tmp_path):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    bmc_a, bmc_b = start_bmc(tmp_path / "a"), start_bmc(tmp_path / "b")
    try:
        bmc_b.set_watts(120)
        run, manifest, samples = _nodes_run(tmp_path, f"redfish:{bmc_a.chassis}", f"redfish:{bmc_b.chassis}")
    finally:
        bmc_a.stop(), bmc_b.stop()
    assert manifest["power"]["cluster_why"] is None
    assert {label: info["source"] for label, info in manifest["power"]["nodes"].items()} == {
        "worker-1": "redfish",
        "worker-2": "redfish",
    }
    for workload in ("fio-write", "fio-read"):
        one, two = (
            _get(samples, workload, "avg_power_w", "worker-1"),
            _get(samples, workload, "avg_power_w", "worker-2"),
        )
        assert (one, two) == (pytest.approx(344.0), pytest.approx(120.0))
        assert _get(samples, workload, "avg_power_w") == pytest.approx(464.0)
        assert _get(samples, workload, "energy_j") == pytest.approx(
            _get(samples, workload, "energy_j", "worker-1") + _get(samples, workload, "energy_j", "worker-2")
        )
        assert _get(samples, workload, "joules_per_gb", "worker-1") > 0
    assert (run / "power-worker-1.csv").exists() and (run / "power-worker-2.csv").exists()


def test_different_scopes_are_never_added(tmp_path):
    bmc = start_bmc(tmp_path)
    try:
        run, manifest, samples = _nodes_run(tmp_path, "command:scope=wall,echo 55", f"redfish:{bmc.chassis}")
    finally:
        bmc.stop()
    assert manifest["power"]["cluster_why"] == (
        "the nodes' power sources cover different scopes (node-psu, wall): never added"
    )
    assert _get(samples, "fio-write", "energy_j") is None
    assert _get(samples, "fio-write", "avg_power_w", "worker-1") == pytest.approx(55.0)
    report = (run / "report.md").read_text()
    assert "cluster power not measured" in report
    assert "| Power scope | worker-1: wall (as declared); worker-2: node PSU (Redfish) |" in report


def test_a_bad_power_key_names_the_file_and_node(tmp_path):
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text("nodes:\n  - {name: here, exporter: local, power: 'command:echo none'}\n")
    done = storbench(tmp_path / "home", "run", "fio-002", "--scale", "tiny", "--nodes", str(nodes), timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"storbench: error: {nodes}: nodes[0].power command: echo printed no number of watts: 'none'"
    ]


def test_no_power_on_any_node_is_one_line_not_one_per_node():
    from storbench.telemetry.power import power_notes

    why = "no node_rapl_* metrics from its exporter, no nodes.yaml: nodes[{}].power"
    nodes = {f"worker-{k}": {"source": "none", "why": why.format(k - 1)} for k in (1, 2, 3)}
    power = {"nodes": nodes, "cluster_why": "no power source on worker-1, worker-2, worker-3"}
    assert power_notes({"power": power}, "on-lab") == [
        f"power not measured (on-lab) on any of its 3 nodes: worker-1: {why.format(0)}; likewise worker-2, worker-3"
    ]
    nodes["worker-2"] = {"source": "redfish", "why": None}  # one measured: each unmeasured node and the cluster
    said = power_notes({"power": power}, "on-lab")
    assert [line.split(":")[0] for line in said] == [
        "power not measured (on-lab worker-1)",
        "power not measured (on-lab worker-3)",
        "cluster power not measured (on-lab)",
    ]
