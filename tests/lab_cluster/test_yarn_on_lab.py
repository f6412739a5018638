"""`services up yarn --nodes 2 --lab-cluster` (issue 40 item 2): Hadoop's ResourceManager on this machine's end of
the lab's bridge, NodeManager K in lab host node-K (its namespace, address and cgroup, its local dirs on the host's
own disk, the host's exporter and limits in the service's nodes file), and a Spark run on that YARN whose
containers the NodeManagers launch inside the hosts.

What shows the executors ran in the hosts, each a check that fails if they ran on this machine's own stack:
- while the run goes on, each host's cgroup holds an executor JVM (Spark's CoarseGrainedExecutorBackend) whose
  network namespace is the host's: a container inherits both from its NodeManager;
- the run's per-node rows (storbench maps each executor's address, from Spark's event log, to the nodes file's
  host) give both nodes task time, and each host's loop device took writes (the shuffle, in the containers' local
  dirs on the host's disk).
Then `services down yarn` leaves only each host's exporter in its cgroup and removes its folders on the hosts'
disks, and `lab cluster down` leaves the machine as it was.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

import pytest

from storbench.lab import cluster
from storbench.lab.disks import BLKIO, THROTTLES
from storbench.services import yarn as yarn_service
from storbench.telemetry.nodes import load_nodes
from tests.cli.helpers import storbench
from tests.lab_cluster.machine import changes, snapshot

pytestmark = [
    pytest.mark.lab,
    pytest.mark.yarn,
    pytest.mark.skipif(os.geteuid() != 0, reason="a lab cluster needs root (namespaces, loop devices, cgroups)"),
    pytest.mark.skipif(not (BLKIO / THROTTLES["disk_write_mbps"]).exists(), reason="no cgroup v1 blkio throttle"),
]

WRITE_MBPS = (40, 80)  # limits only to see them carried into the nodes file; the run writes about 1 MB a node
EXECUTOR = "CoarseGrainedExecutorBackend"  # on YARN: org.apache.spark.executor.YarnCoarseGrainedExecutorBackend
# spark-transforms' repartition on a few thousand rows: a shuffle, so both executors write to their host's disk
SUITE = """\
name: yarn-lab
description: spark-transforms' repartition on a lab cluster's YARN
repetitions: 1
scales:
  tiny: {rows: 5000, partitions: 4}
params:
  repartition_partitions: 4
prepare: [datagen]
workloads: [repartition]
"""


def cgroup_pids(host: cluster.LabHost) -> list[str]:
    return Path(host.cgroup, "cgroup.procs").read_text().split()


def executors_in(host: cluster.LabHost) -> set[int]:
    """The executor JVMs in ``host``'s cgroup that are in its network namespace too."""
    found = set()
    netns = os.stat(f"/run/netns/{host.namespace}").st_ino
    for pid in cgroup_pids(host):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            inode = os.stat(f"/proc/{pid}/ns/net").st_ino
        except OSError:
            continue  # gone meanwhile
        if argv[0].endswith(b"java") and any(EXECUTOR.encode() in arg for arg in argv) and inode == netns:
            found.add(int(pid))
    return found


def watch_executors(hosts: list[cluster.LabHost], running: threading.Thread) -> dict[str, set[int]]:
    """Each host's executor JVMs seen while ``running`` goes on (they live from the session's start to its end)."""
    seen: dict[str, set[int]] = {h.name: set() for h in hosts}
    while running.is_alive():
        for host in hosts:
            seen[host.name] |= executors_in(host)
        time.sleep(0.5)
    return seen


def test_nodemanagers_and_their_spark_executors_run_in_the_lab_hosts(tmp_path):
    home = tmp_path
    before = snapshot()
    limits = ("--disk-write-mbps", ",".join(map(str, WRITE_MBPS)))
    made = storbench(home, "lab", "cluster", "up", "--nodes", "2", *limits, timeout=120)
    assert made.returncode == 0, made.stderr
    hosts = cluster.hosts_of(home)
    token = hosts[0].namespace.split("-")[1]  # storbench-TOKEN-node-1: every name the cluster made has it
    try:
        up = storbench(
            home, "services", "up", "yarn", "--nodes", "2", "--lab-cluster", "--allow-root-containers", timeout=300
        )
        assert up.returncode == 0, up.stderr
        state = json.loads((home / "services" / "yarn" / "state.json").read_text())
        bridge = cluster.bridge_address(home)
        assert state["uri"].startswith(f"yarn://{bridge}:") and state["driver_host"] == bridge
        assert yarn_service.running_nodes(state) == sorted(h.address for h in hosts)
        nodes = load_nodes(state["nodes"]).nodes
        assert [(n.name, n.host, n.exporter) for n in nodes] == [
            (f"nodemanager-{i}", h.address, f"http://{h.address}:{cluster.EXPORTER_PORT}/metrics")
            for i, h in enumerate(hosts, start=1)
        ]
        assert [dict(n.limits) for n in nodes] == [h.limits for h in hosts]
        assert [dict(n.limits)["disk_write_mbps"] for n in nodes] == list(WRITE_MBPS)
        managers = [p for p in state["processes"] if p["kind"] == "nodemanager"]
        for host, manager in zip(hosts, managers, strict=True):  # each NodeManager in its host, its dirs on its disk
            assert Path(manager["local_dir"]).is_relative_to(host.mount), (host, manager)
            pids = cgroup_pids(host)  # the host's exporter and its NodeManager JVM (ip netns exec execs java)
            assert str(manager["pid"]) in pids and len(pids) == 2, (host, pids)
        suite = tmp_path / "yarn-lab.yaml"
        suite.write_text(SUITE)
        done: dict = {}
        args = ("run", str(suite), "--spark-master", "yarn", "--repeat", "1", "--label", "yarn-lab", "--json")
        runner = threading.Thread(
            target=lambda: done.update(
                result=storbench(home, *args, timeout=600, env_extra={"PYSPARK_PYTHON": sys.executable})
            )
        )
        runner.start()
        seen = watch_executors(hosts, runner)
        runner.join()
        assert done["result"].returncode == 0, done["result"].stderr[-3000:]
        print(f"executor JVMs seen in each host's cgroup and namespace: {seen}")
        assert all(seen.values()), seen
        shown = json.loads(storbench(home, "show", "yarn-lab", "--format", "json").stdout)
        rows = [r for r in shown["rows"] if r["workload"] == "repartition" and set(r["labels"]) == {"node"}]
        figures = {(r["labels"]["node"], r["metric"]): r["cells"][0]["aggregate"] for r in rows}
        print({key: value for key, value in figures.items() if key[1] in ("spark_task_time_s", "written_mb")})
        for node in ("worker-1", "worker-2"):
            assert figures[(node, "spark_task_time_s")] > 0, (node, figures)
            assert figures[(node, "written_mb")] > 0, (node, figures)
    finally:
        storbench(home, "services", "down", "yarn", timeout=120)
        left = {h.name: cgroup_pids(h) for h in hosts}
        kept = [root for h in hosts if (root := Path(h.mount, "storbench-yarn")).exists()]
        down = storbench(home, "lab", "cluster", "down", timeout=120)
    assert down.returncode == 0, down.stderr
    assert all(len(pids) == 1 for pids in left.values()), left  # only each host's exporter after yarn's down
    assert not kept, kept
    assert not (home / "services" / "yarn").exists()
    after = snapshot()
    assert not changes(before, after, token) and not changes(before, after, str(home))
