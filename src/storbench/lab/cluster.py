"""``storbench lab cluster up|down|exec``: N hosts with known limits on this machine (see the package's doc).

Everything ``up`` makes is journalled as it is made (journal.py); a failure part-way removes what was made and
says what failed in one line. ``down`` removes what the journal names, and only that."""

from __future__ import annotations

import ipaddress
import os
import secrets
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from storbench.lab import disks, hosts
from storbench.lab.commands import LabError, need, run
from storbench.lab.journal import Journal
from storbench.lab.spec import ClusterSpec, NodeLimits
from storbench.services import node_exporter
from storbench.telemetry.nodes import Cluster, Node, dump_nodes

EXPORTER_PORT = 9100  # each host has its own network stack: the same port on every host
NODES_FILE = "nodes.yaml"


def cluster_dir(home: Path) -> Path:
    return home / "lab" / "cluster"


@dataclass(frozen=True)
class LabHost:
    name: str
    namespace: str
    address: str
    device: str
    mount: str
    cgroup: str
    limits: dict[str, float]


def check_kernel(spec: ClusterSpec) -> None:
    """What this machine must offer, each missing piece one line, before anything is made."""
    if os.geteuid() != 0:
        raise LabError("storbench lab cluster needs root (network namespaces, loop devices, mounts, cgroups)")
    for tool, why in (
        ("ip", "namespaces and links"),
        ("losetup", "the hosts' disks"),
        ("mkfs.ext4", "their file systems"),
    ):
        need(tool, why)
    if spec.shapes_links:
        need("tc", "--link-mbit/--link-delay-ms")
    if not (disks.BLKIO / disks.THROTTLES["disk_write_mbps"]).exists():
        raise LabError(f"{disks.BLKIO}: this kernel has no cgroup v1 blkio throttling (the hosts' disk limits)")
    node_exporter.binary()


def probe_links(spec: ClusterSpec, token: str) -> None:
    """Refuses in one line a link limit this kernel's qdiscs cannot give (netem is often not built)."""
    tried: set[str] = set()
    for limits in spec.limits:
        rule = hosts.qdisc(limits)
        if rule is None or rule[0] in tried:
            continue
        tried.add(rule[0])
        said = hosts.probe_qdisc(f"storbench-{token}-probe", rule)
        if said is not None:
            flag = "--link-delay-ms" if rule[0] == "netem" else "--link-mbit"
            raise LabError(f"{flag}: this kernel cannot shape a link with tc {rule[0]} ({said})")


def up(home: Path, spec: ClusterSpec) -> tuple[Path, list[LabHost]]:
    """Makes the cluster; (its nodes file, its hosts)."""
    check_kernel(spec)
    directory = cluster_dir(home)
    if Journal.load(directory) is not None:
        raise LabError(f"a lab cluster is already up in {directory} (storbench --results {home} lab cluster down)")
    token = secrets.token_hex(2)
    probe_links(spec, token)
    journal = Journal(directory)
    try:
        made = _make(journal, spec, token)
    except BaseException:
        _undo(journal)
        raise
    return directory / NODES_FILE, made


def _make(journal: Journal, spec: ClusterSpec, token: str) -> list[LabHost]:
    journal.set(token=token, hosts=[])
    bridge = f"sbr-{token}"
    hosts.make_bridge(journal, bridge)
    subnet = hosts.claim_subnet(bridge)
    journal.set(subnet=str(subnet))
    made: list[LabHost] = []
    for index, limits in enumerate(spec.limits, start=1):
        made.append(_make_host(journal, spec, token, bridge, subnet, index, limits))
        journal.set(hosts=[vars(h) for h in made])
    _wait_exporters(journal, made)
    nodes = [
        Node(
            name=h.name,
            exporter=_exporter_url(h),
            role="worker",
            devices=(Path(h.device).name,),
            host=h.address,
            limits=tuple(h.limits.items()),
        )
        for h in made
    ]
    dump_nodes(journal.directory / NODES_FILE, Cluster(tuple(nodes), source="storbench lab cluster up"))
    return made


def _make_host(journal: Journal, spec: ClusterSpec, token: str, bridge: str, subnet, index: int, limits: NodeLimits):
    name = f"node-{index}"
    namespace, outer = f"storbench-{token}-{name}", f"sbh-{token}-{index}"
    address = hosts.node_address(subnet, index)
    hosts.make_host(journal, namespace, outer, bridge, address, subnet.prefixlen)
    hosts.shape(namespace, outer, limits)
    directory = journal.directory / name
    directory.mkdir(mode=0o700)
    device, mount = disks.make_disk(journal, directory, spec.disk_mb, sync=bool(limits.disk_write_mbps))
    cgroup = disks.make_cgroup(journal, f"storbench-lab-{token}-{name}", device, limits)
    host = LabHost(name, namespace, address, device, str(mount), str(cgroup), limits.describe())
    argv, marker, _ = node_exporter.command(node_exporter.binary(), address, EXPORTER_PORT)
    # above the hosts' own work: a host's exporter shares this machine's CPUs with every host, where a real node's
    # has its own, and one waiting for a CPU stamps a scrape (node_time_seconds) apart from its counters' reads
    process = spawn(host, ["nice", "-n", "-10", *argv], log=directory / "node_exporter.log")
    journal.made("process", pid=process.pid, marker=marker)
    return host


def _exporter_url(host: LabHost) -> str:
    return f"http://{host.address}:{EXPORTER_PORT}/metrics"


def _wait_exporters(journal: Journal, made: list[LabHost], timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    waiting = [h for h in made]
    while waiting and time.monotonic() < deadline:
        waiting = [h for h in waiting if not node_exporter.answers(_exporter_url(h))]
        if waiting:
            time.sleep(0.2)
    if waiting:
        raise LabError(f"node_exporter did not answer at {', '.join(_exporter_url(h) for h in waiting)}")


def spawn(host: LabHost, argv: list[str], log: Path | None = None) -> subprocess.Popen:
    """``argv`` started as the host: in its namespace and its cgroup, in a session of its own."""
    out = open(log, "ab") if log else subprocess.DEVNULL
    try:
        return subprocess.Popen(
            ["ip", "netns", "exec", host.namespace, *argv],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=lambda: disks.join(host.cgroup),  # noqa: PLW0108 (before exec, in the child)
        )
    finally:
        if log:
            out.close()


def kill(process: subprocess.Popen) -> None:
    """Ends a process ``spawn`` started and every process of its process group (a shell's children; fio's job
    processes leave it: run fio with --thread)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def run_as(host: LabHost, argv: list[str]) -> int:
    """``argv`` run as the host in the foreground (its output is this process's); its exit code."""
    return subprocess.call(["ip", "netns", "exec", host.namespace, *argv], preexec_fn=lambda: disks.join(host.cgroup))


def hosts_of(home: Path) -> list[LabHost]:
    journal = Journal.load(cluster_dir(home))
    if journal is None:
        raise LabError(f"no lab cluster is up in {cluster_dir(home)} (storbench --results {home} lab cluster up)")
    return [LabHost(**h) for h in journal.state.get("hosts", [])]


def bridge_address(home: Path) -> str:
    """This machine's address on the lab's bridge: where the hosts reach a service's coordinator."""
    journal = Journal.load(cluster_dir(home))
    if journal is None:
        raise LabError(f"no lab cluster is up in {cluster_dir(home)} (storbench --results {home} lab cluster up)")
    return hosts.bridge_address(ipaddress.ip_network(journal.state["subnet"]))


def host_named(home: Path, name: str) -> LabHost:
    made = hosts_of(home)
    for host in made:
        if host.name == name:
            return host
    raise LabError(f"no host {name!r} in the lab cluster; its hosts: {', '.join(h.name for h in made)}")


def down(home: Path) -> bool:
    """Removes the cluster; False when none was up."""
    journal = Journal.load(cluster_dir(home))
    if journal is None:
        return False
    _undo(journal)
    return True


def _undo(journal: Journal) -> None:
    """Removes what the journal recorded, newest first; what could not be removed stays journalled."""
    failures: list[str] = []
    left: list[dict[str, Any]] = []
    for record in reversed(journal.records()):
        try:
            _remove(record)
        except LabError as exc:
            failures.append(str(exc))
            left.insert(0, record)
    if left:
        journal.set(made=left)
        raise LabError(f"lab cluster down left {len(left)} things in {journal.directory}: {failures[0]}")
    for host in journal.state.get("hosts", []):
        for leftover in ("disk.img", "node_exporter.log"):
            (journal.directory / host["name"] / leftover).unlink(missing_ok=True)
        for empty in ("disk", ""):
            try:
                (journal.directory / host["name"] / empty).rmdir()
            except OSError:
                pass
    (journal.directory / NODES_FILE).unlink(missing_ok=True)
    journal.forget()


def _remove(record: dict[str, Any]) -> None:
    kind = record["kind"]
    if kind == "process":
        _stop(record["pid"], record["marker"])
    elif kind == "cgroup":
        disks.remove_cgroup(record["path"])
    elif kind == "mount":
        disks.unmount(record["path"])
    elif kind == "loop":
        disks.remove_loop(record["device"], record["file"])
    elif kind == "netns":
        if record["name"] in run("ip", "netns", "list").split():
            run("ip", "netns", "del", record["name"])
    elif kind == "link":
        if Path("/sys/class/net", record["name"]).exists():
            run("ip", "link", "del", record["name"])


def _stop(pid: int, marker: str) -> None:
    """SIGTERM, then SIGKILL, to ``pid`` if it is still the process started (its command line has ``marker``)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            if marker.encode() not in Path(f"/proc/{pid}/cmdline").read_bytes():
                return
            os.kill(pid, sig)
        except (OSError, ProcessLookupError):
            return
        for _ in range(50):
            if not Path(f"/proc/{pid}").exists():
                return
            time.sleep(0.1)
