"""`services up spark --workers 2 --lab-cluster`: a real Spark standalone cluster whose workers run in lab hosts
(their namespaces, addresses, disks and cgroups), the master and the driver on this machine's end of the
bridge. A small spark-transforms run shuffles between the hosts: every host's executor did work (its shuffle
writes are labelled with its node), each node's figures come from its host's exporter with its limits beside
them, and `services down spark` then `lab cluster down` leave nothing running in the hosts.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from storbench.lab import cluster
from storbench.lab.disks import BLKIO, THROTTLES
from tests.cli.helpers import storbench

pytestmark = [
    pytest.mark.lab,
    pytest.mark.spark,
    pytest.mark.skipif(os.geteuid() != 0, reason="a lab cluster needs root (namespaces, loop devices, cgroups)"),
    pytest.mark.skipif(not (BLKIO / THROTTLES["disk_write_mbps"]).exists(), reason="no cgroup v1 blkio throttle"),
]


def cgroup_pids(host: cluster.LabHost) -> list[str]:
    return Path(host.cgroup, "cgroup.procs").read_text().split()


def test_spark_workers_run_in_the_lab_hosts_and_each_nodes_figures_are_its_own(tmp_path):
    home = tmp_path
    made = storbench(home, "lab", "cluster", "up", "--nodes", "2", "--disk-write-mbps", "40,80", timeout=120)
    assert made.returncode == 0, made.stderr
    hosts = cluster.hosts_of(home)
    try:
        up = storbench(home, "services", "up", "spark", "--workers", "2", "--lab-cluster", timeout=300)
        assert up.returncode == 0, up.stderr
        state = json.loads((home / "services" / "spark" / "state.json").read_text())
        bridge = cluster.bridge_address(home)
        assert state["uri"].startswith(f"spark://{bridge}:") and state["worker_hosts"] == [h.address for h in hosts]
        for host in hosts:  # the worker JVM is in its host's cgroup (with the host's exporter)
            assert len(cgroup_pids(host)) >= 2, host
        run = storbench(
            home,
            "run",
            "spark-transforms",
            "--spark-master",
            state["uri"],
            "--nodes",
            state["nodes"],
            "--repeat",
            "1",
            "--set",
            "rows=40000",
            "--label",
            "on-lab",
            "--json",
            timeout=900,
        )
        assert run.returncode == 0, run.stderr[-3000:]
        shown = json.loads(storbench(home, "show", "on-lab", "--format", "json").stdout)
        shuffle = {
            r["labels"]["node"]: r["cells"][0]["aggregate"]
            for r in shown["rows"]
            if r["workload"] == "groupby" and r["metric"] == "shuffle_write_mb" and "node" in r["labels"]
        }
        print(f"groupby shuffle write per node: {shuffle}")
        assert sorted(shuffle) == ["worker-1", "worker-2"] and all(v > 0 for v in shuffle.values()), shuffle
        text = storbench(home, "show", "on-lab").stdout
        assert "worker-1 (limits: disk write 40 MB/s)" in text and "worker-2 (limits: disk write 80 MB/s)" in text
        assert sum(line.strip().startswith("bound by: ") for line in text.splitlines()) >= 3, text
        config = json.loads(Path(json.loads(run.stdout)["path"], "manifest.json").read_text())["config"]
        assert [n["host"] for n in config["nodes"]] == [h.address for h in hosts]
    finally:
        storbench(home, "services", "down", "spark", timeout=120)
        left = {h.name: cgroup_pids(h) for h in hosts}
        down = storbench(home, "lab", "cluster", "down", timeout=120)
    assert down.returncode == 0, down.stderr
    assert all(len(pids) == 1 for pids in left.values()), left  # only each host's exporter after spark's down
