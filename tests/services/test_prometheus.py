"""`services up prometheus`: a real Prometheus (Debian's) on 127.0.0.1 that scrapes the node_exporters storbench runs
beside the session's YARN NodeManagers (found by itself in the same results home), a run that reads its nodes'
telemetry from it through the nodes file it writes, and `down` by PID."""

from __future__ import annotations

import json
import shutil

import pytest

from storbench.services import process
from storbench.telemetry.nodes import load_nodes
from storbench.telemetry.prometheus import PrometheusApi
from tests.cli.helpers import storbench

pytestmark = [
    pytest.mark.real,
    pytest.mark.yarn,
    pytest.mark.skipif(shutil.which("prometheus") is None, reason="Debian's prometheus (scripts/setup.sh --test)"),
]


def test_it_scrapes_the_services_exporters_and_a_run_reads_them_from_it(yarn, tmp_path):
    home, yarn_state = yarn
    exporters = {node.instance for node in load_nodes(yarn_state["nodes"]).nodes}
    up = storbench(home, "services", "up", "prometheus", timeout=180)
    try:
        assert up.returncode == 0, up.stderr
        state = json.loads((home / "services" / "prometheus" / process.STATE).read_text())
        assert up.stdout.strip() == state["uri"] and state["uri"].startswith("http://127.0.0.1:")
        assert f"scraping {len(exporters)} node_exporter(s) every 1 s" in up.stderr and "not answering" not in up.stderr
        api = PrometheusApi(state["uri"])
        for instance in exporters:  # each exporter scraped, its disks' counters stored
            assert api.get("/api/v1/query", query=f'up{{instance="{instance}"}}')["result"][0]["value"][1] == "1"
            disks = api.get("/api/v1/query", query=f'node_disk_written_bytes_total{{instance="{instance}"}}')
            assert disks["result"], instance
        nodes = load_nodes(state["nodes"])
        assert nodes.prometheus == state["uri"] and {n.instance for n in nodes.nodes} == exporters

        run = storbench(
            home,
            "run",
            "null",
            "--repeat",
            "1",
            "--interval",
            "0.5",
            "--target",
            str(tmp_path / "t"),
            "--nodes",
            state["nodes"],
            "--json",
        )
        assert run.returncode == 0, run.stderr
        manifest = json.loads((home / "runs" / json.loads(run.stdout)["run_id"] / "manifest.json").read_text())
        assert manifest["config"]["telemetry"] == "prometheus" and manifest["telemetry_gaps"] == []
        assert {n["name"] for n in manifest["config"]["nodes"]} == {n.name for n in nodes.nodes}
    finally:
        down = storbench(home, "services", "down", "prometheus")
    assert down.returncode == 0 and down.stdout.strip() == "prometheus: stopped", down.stderr
    assert not process.alive(state["pid"], state["marker"]) and not (home / "services" / "prometheus").exists()
