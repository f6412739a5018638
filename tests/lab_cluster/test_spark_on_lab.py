"""`services up spark --workers 3 --lab-cluster`: a real Spark standalone cluster whose workers run in lab hosts
(their namespaces, addresses, disks and cgroups), the master and the driver on this machine's end of the
bridge; one lab cluster (disk write limits 20, 40, 80 MB/s, node-3's link 20 Mbit/s) and one Spark cluster serve
the module, and `services down spark` then `lab cluster down` leave nothing running in the hosts.

The known truths, each against storbench's own per-node rows (telemetry from each host's exporter):

- Disks: `dfsio-write` (one Spark task per file, TestDFSIO's writer: no CPU work but the writes) onto a file://
  target that each executor sees on its own host's disk, as every node of a real cluster has its own /data. The
  hosts share this machine's file tree, so the fixture binds each host's disk directory onto one path inside
  that worker's mount namespace (`ip netns exec` gave each worker one of its own; the executors it forks inherit
  it; the driver sees an empty directory here). The writes reach the throttle from the executors themselves:
  cgroup v1 charges a write to the process that submits it and the kernel's flusher threads are outside every
  host's cgroup, so a buffered write could escape it; the lab mounts a throttled disk `sync`, so each write()
  is written back by the executor's own thread before it returns (checked: each host cgroup's
  blkio.throttle.io_service_bytes against its loop device's written bytes; the difference is the journal, which
  the kernel's jbd2 thread writes outside the cgroup: 3 to 7% here, the device's figure includes it, so it stands
  a few percent above the throttle's own rate: 103% of 20 MB/s measured). Four tasks per worker
  keep the throttle's queue from running dry while one writer copies its next buffer, and a task goes to the first
  free slot (spark.locality.wait=0: a reduce task waited 3 s for the executor holding its input, and the 80 MB/s
  node wrote 8 files of 28 while the 40 MB/s one wrote 12): each node writes all through the window, so the MB
  it moves follow its rate and the least-moving node, which storbench names slowest, is the 20 MB/s one.
- Link: spark-transforms' group-by, whose shuffle fills node-3's 20 Mbit/s link; the lab shapes both ends of a
  host's veth (tc tbf on the host's eth0: what it sends; on the bridge port: what it receives), and storbench's
  per-node network figures are per direction, so the busier one is held to the link's rate, and node-3, held at
  its link, is the slowest node.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from storbench.lab import cluster
from storbench.lab.disks import BLKIO, THROTTLES
from tests.cli.helpers import storbench
from tests.lab_cluster.bound import assert_held_to_limits
from tests.lab_cluster.machine import device_written

pytestmark = [
    pytest.mark.lab,
    pytest.mark.spark,
    pytest.mark.skipif(os.geteuid() != 0, reason="a lab cluster needs root (namespaces, loop devices, cgroups)"),
    pytest.mark.skipif(not (BLKIO / THROTTLES["disk_write_mbps"]).exists(), reason="no cgroup v1 blkio throttle"),
]

WRITE_MBPS = (20, 40, 80)
# node-3's: at 50 Mbit/s the link was the limit only while this machine's 2 CPUs kept the shuffle fed (a CI run at
# load ~10 read 93% of it, every node's CPU at 100%); at 20 the others' shuffle rates (6-8 MB/s there) are 2.5x it
LINK_MBIT = 20
MB = 1e6


@dataclass(frozen=True)
class Lab:
    home: Path
    hosts: list[cluster.LabHost]
    state: dict
    data: Path  # the file:// target: each executor sees its host's disk there


def cgroup_pids(host: cluster.LabHost) -> list[str]:
    return Path(host.cgroup, "cgroup.procs").read_text().split()


def bind_host_disks(state: dict, hosts: list[cluster.LabHost], data: Path) -> None:
    """Each worker's mount namespace sees its host's disk at ``data`` (a mount that ends with the worker)."""
    workers = [p for p in state["processes"] if p["kind"] == "worker"]
    assert [w["host"] for w in workers] == [h.address for h in hosts], workers
    for worker, host in zip(workers, hosts):
        own = Path(host.mount, "data")
        own.mkdir()
        subprocess.run(["nsenter", "-t", str(worker["pid"]), "-m", "mount", "--bind", str(own), str(data)], check=True)


@pytest.fixture(scope="module")
def spark_lab(tmp_path_factory):
    home = tmp_path_factory.mktemp("spark-on-lab")
    limits = ["--disk-write-mbps", ",".join(map(str, WRITE_MBPS)), "--link-mbit", f",,{LINK_MBIT}"]
    made = storbench(home, "lab", "cluster", "up", "--nodes", "3", *limits, "--disk-mb", "1500", timeout=120)
    assert made.returncode == 0, made.stderr
    hosts = cluster.hosts_of(home)
    try:
        up = storbench(home, "services", "up", "spark", "--workers", "3", "--cores", "4", "--lab-cluster", timeout=300)
        assert up.returncode == 0, up.stderr
        state = json.loads((home / "services" / "spark" / "state.json").read_text())
        data = home / "data"
        data.mkdir()
        bind_host_disks(state, hosts, data)
        yield Lab(home, hosts, state, data)
    finally:
        storbench(home, "services", "down", "spark", timeout=120)
        left = {h.name: cgroup_pids(h) for h in hosts}
        down = storbench(home, "lab", "cluster", "down", timeout=120)
    assert down.returncode == 0, down.stderr
    assert all(len(pids) == 1 for pids in left.values()), left  # only each host's exporter after spark's down


def run(spark_lab: Lab, suite: str, label: str, *flags: str) -> dict:
    """One run of ``suite`` on the lab's Spark cluster, its nodes measured; its report (JSON and `show` text)."""
    done = storbench(
        spark_lab.home,
        "run",
        suite,
        "--spark-master",
        spark_lab.state["uri"],
        "--nodes",
        spark_lab.state["nodes"],
        "--repeat",
        "1",
        "--label",
        label,
        "--json",
        *flags,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    shown = storbench(spark_lab.home, "show", label, "--format", "json")
    assert shown.returncode == 0, shown.stderr
    return {
        "json": json.loads(shown.stdout),
        "text": storbench(spark_lab.home, "show", label).stdout,
        "path": json.loads(done.stdout)["path"],
    }


def per_node(report: dict, workload: str, metric: str) -> dict[str, float]:
    return {
        r["labels"]["node"]: r["cells"][0]["aggregate"]
        for r in report["json"]["rows"]
        if r["workload"] == workload and r["metric"] == metric and set(r["labels"]) == {"node"}
    }


def block(report: dict, workload: str) -> list[str]:
    """The `show` lines of ``workload``'s per-node section."""
    lines = report["text"].splitlines()
    start = lines.index(f"{workload}: per node")
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return [line.strip() for line in lines[start:end]]


# spark-transforms' group-by and repartition (its join adds nothing here but minutes)
SHUFFLES = """
name: lab-shuffles
description: spark-transforms' group-by and repartition on one generated dataset
repetitions: 1
params: {format: csv}
prepare: [datagen]
workloads: [groupby, repartition]
"""


@pytest.fixture(scope="module")
def transforms(spark_lab, tmp_path_factory):
    """Group-by and repartition of 700k rows, the shuffle uncompressed: group-by writes ~31 MB per node, ~20 MB
    through node-3's link each way, eight seconds at 20 Mbit/s, while the map stage before it is CPU-bound."""
    suite = tmp_path_factory.mktemp("suite") / "lab-shuffles.yaml"
    suite.write_text(SHUFFLES)
    return run(spark_lab, str(suite), "on-lab", "--set", "rows=700000", "--spark-conf", "spark.shuffle.compress=false")


def test_spark_workers_run_in_the_lab_hosts_and_each_nodes_figures_are_its_own(spark_lab, transforms):
    bridge = cluster.bridge_address(spark_lab.home)
    assert spark_lab.state["uri"].startswith(f"spark://{bridge}:")
    assert spark_lab.state["worker_hosts"] == [h.address for h in spark_lab.hosts]
    for host in spark_lab.hosts:  # the worker JVM is in its host's cgroup (with the host's exporter)
        assert len(cgroup_pids(host)) >= 2, host
    shuffle = per_node(transforms, "groupby", "shuffle_write_mb")
    print(f"groupby shuffle write per node: {shuffle}")
    assert sorted(shuffle) == ["worker-1", "worker-2", "worker-3"] and all(v > 0 for v in shuffle.values()), shuffle
    text = transforms["text"]
    assert "worker-1 (limits: disk write 20 MB/s)" in text and "worker-2 (limits: disk write 40 MB/s)" in text
    assert f"worker-3 (limits: disk write 80 MB/s, link {LINK_MBIT} Mbit/s)" in text
    assert sum(line.strip().startswith("bound by: ") for line in text.splitlines()) >= 3, text
    config = json.loads(Path(transforms["path"], "manifest.json").read_text())["config"]
    assert [n["host"] for n in config["nodes"]] == [h.address for h in spark_lab.hosts]


def written_bytes(host: cluster.LabHost) -> tuple[int, int]:
    """(bytes the host's processes wrote to its loop device, as its cgroup counted them; bytes the device wrote)."""
    rdev = os.stat(host.device).st_rdev
    key = f"{os.major(rdev)}:{os.minor(rdev)} Write "
    counted = Path(host.cgroup, "blkio.throttle.io_service_bytes").read_text().splitlines()
    by_cgroup = next((int(line.split()[2]) for line in counted if line.startswith(key)), 0)
    return by_cgroup, device_written(host.device)


def test_each_executors_writes_are_held_to_its_disks_limit_and_the_20_mb_s_node_is_slowest(spark_lab):
    before = [written_bytes(h) for h in spark_lab.hosts]
    report = run(
        spark_lab,
        "dfsio-write",
        "disks",
        "--target",
        str(spark_lab.data),
        "--set",
        "files=48",
        "--set",
        "file_size=25M",
        "--set",
        "buffer_size=2000000",
        "--spark-conf",
        "spark.locality.wait=0",
    )
    after = [written_bytes(h) for h in spark_lab.hosts]
    # What reached each device from outside the host's cgroup, unthrottled: ext4's journal, which the kernel's
    # jbd2 thread writes (each 2 MB synchronous write to a new file commits a transaction, and its metadata is
    # written again at checkpoint), and any page a flusher thread wrote back. Measured 6.75%, 5.14%, 2.98% on the
    # 20, 40, 80 MB/s hosts: the journal's rate hardly follows the data's (~1.3 to 2.4 MB/s), and a flusher's
    # escape would be a write the size of the data's, so the throttle saw the executors' own writes.
    outside = [(a[1] - b[1]) / (a[0] - b[0]) - 1 for a, b in zip(after, before)]
    print(f"device bytes beyond the cgroup's own, per host: {[f'{100 * o:.2f}%' for o in outside]}")
    assert all(0 <= o <= 0.10 for o in outside), outside
    rates = per_node(report, "dfsio-write", "max_write_mbps")
    shown = block(report, "dfsio-write")
    print(f"known truth: {WRITE_MBPS} MB/s; storbench per node max_write_mbps {rates}", *shown, sep="\n")
    assert sorted(rates) == ["worker-1", "worker-2", "worker-3"]
    # The device's figure is the throttle's writes and the journal's, which the throttle does not hold. Held from
    # above: the part that went through the cgroup (the figure less the journal's measured share, ``outside``) is
    # at most 5% over the limit (21.29 MB/s with 6.8% journal at load 5 read 106% of the limit uncorrected). Held
    # from below: the device's own figure, which the throttle's writes alone bring to the limit on a device-bound
    # node, is at least 95% of it (the journal's share is an average over the run, not the busiest window's: CI
    # read 20.32 MB/s, 102%, with 7.25% journal, which the share put at 18.94). The 40 and 80 MB/s nodes reach
    # theirs only when this machine's 2 CPUs are not taken by others: within 5% in three runs at load 15-35
    # (40.90/78.70, 41.83/76.11, 40.62/80.77), 37.18 and 53.68 at load 40-53 (storbench: "worker-3 CPU-bound
    # (CPU 100%, devices <= 49% busy)"). So each is held to 5% of its limit whenever the CPU left it room (the
    # window's CPU under 90% on that node, which every host reads as this machine's); with the CPU taken, to its
    # order, and storbench must say what held it (the device or the CPU), not leave the shortfall unexplained.
    throttled = {f"worker-{i}": rates[f"worker-{i}"] / (1 + o) for i, o in enumerate(outside, start=1)}
    cpu = per_node(report, "dfsio-write", "avg_cpu_pct")
    [said] = [line for line in shown if line.startswith("bound by: ")]
    print(f"of which through each host's cgroup: {throttled}; CPU % per node {cpu}")
    assert_held_to_limits(WRITE_MBPS, rates, throttled, cpu, said)
    [slowest] = [line for line in shown if "slowest node" in line]
    assert "slowest node worker-1," in slowest, slowest


def test_the_slow_links_node_is_held_to_its_link_in_a_shuffle_and_named_slowest(transforms):
    """Group-by's shuffle (two exchanges: countDistinct expands the rows) is the one that fills node-3's link.

    The link is shaped each way (tc tbf on the host's eth0 and on its bridge port), and a shuffle sends and
    receives at once: node-3's blocks go to the other reducers while its reducers fetch theirs. storbench's
    per-node figures are each direction's peak over 3 s (max_net_tx_mbps, max_net_rx_mbps), so the busier
    direction is held to the link's rate one way. Every node moves about the same bytes in a shuffle (before
    the per-direction figures, storbench named the node whose devices moved the fewest MB, which the link does
    not slow); the node held at its link is the one the others waited for, so the slowest-node line names it."""
    sent, received = (per_node(transforms, "groupby", m) for m in ("max_net_tx_mbps", "max_net_rx_mbps"))
    busier = {node: max(sent[node], received[node]) for node in sent}
    one_way = LINK_MBIT * 1e6 / 8 / MB
    shown = block(transforms, "groupby")
    print(f"known truth: worker-3 link {one_way} MB/s each way; storbench per node send {sent}, receive {received}")
    print(*shown, sep="\n")
    assert abs(busier["worker-3"] - one_way) <= 0.05 * one_way, (sent, received)
    assert max(busier["worker-1"], busier["worker-2"]) > 1.05 * one_way, busier  # their links are not held
    [said] = [line for line in shown if line.startswith("bound by: ")]
    assert "worker-3 link-bound (" in said and f"of its {LINK_MBIT} Mbit/s limit)" in said, said
    assert "worker-1 link-bound" not in said and "worker-2 link-bound" not in said, said
    [slowest] = [line for line in shown if "slowest node" in line]
    assert "slowest node worker-3, held by its link," in slowest, slowest
