"""Real Apache Cassandra 5.0 nodes on loopback, each watched by a node_exporter.

Node *i* binds 127.0.0.i (every 127.0.0.X answers without set-up) with its own data,
commitlog, saved_caches, hints and cdc_raw directories under ``node-i/`` of the service
directory, started as ``CassandraDaemon`` from Maven Central's ``cassandra-all`` jars
(``jvm/cassandra``, fetched by scripts/setup.sh). Cassandra wants one storage port and
one native (CQL) port for the whole cluster, the nodes differing by address, so both are
picked free on every address; each node's JMX (for nodetool) listens on its own port of
127.0.0.1. Node 1 is the seed; the cluster is new and empty, so nodes join without
bootstrapping (``auto_bootstrap: false``), one after another.

``up`` waits until every node answers CQL and sees every node NORMAL in gossip
(``system_views.gossip_info``, asked of each node alone), ``nodetool status`` shows every
node UN, and every exporter answers, then writes ``nodes.yaml`` (one ``cassandra`` node per
Cassandra node, host = its address, devices = the disks behind its data directory) and
returns the state: ``uri`` (``cassandra://127.0.0.1:PORT``), ``nodes``, ``hosts``.
Every process is recorded in state.json as soon as it is spawned, so an interrupted
``up`` and ``down`` stop it by PID (its command line checked).

The nodes ask who is calling, on CQL and on JMX (``cassandra_auth``): storbench's own clients log in as the
role ``storbench`` with the generated password kept in state.json (0600); :func:`client_env` gives it to a
user's shell.
"""

from __future__ import annotations

import re
import shutil
import socket
import time
from pathlib import Path
from typing import Any

from storbench.cassandra_cql import Credentials
from storbench.errors import EngineError, InputError
from storbench.services import cassandra_auth, cassandra_certs, node_exporter, process
from storbench.services.cassandra_conf import DIRS, JVM_OPTIONS, LOGBACK, node_host, node_yaml
from storbench.services.cassandra_ring import (  # noqa: F401 (gossip_view, ring, ring_status: callers' names here)
    RING_TIMEOUT_S,
    gossip_view,
    nodetool,
    ring,
    ring_status,
    wait_ring,
)
from storbench.services.jvm import cassandra_classpath, extra_options, java_binary
from storbench.services.placement import Loopback
from storbench.services.ports import free_port
from storbench.services.process import write_private
from storbench.services.registry import Flag, register

SERVICE = "cassandra"
register(
    SERVICE,
    __name__,
    Flag("nodes", "number of nodes, on 127.0.0.1.. (default 1)", int),
    Flag("heap", "heap per node, e.g. 1g (default 1g)"),
    Flag(
        "lab_cluster",
        "place node K in host node-K of the lab cluster under the same results home (storbench lab cluster up): "
        "its address, its disk for the node's data, its link",
        switch=True,
    ),
)
MAX_NODES = 8
NODE_TIMEOUT_S = 240.0  # one node, from spawn to its CQL port (a loaded 2-core machine is slow)
# a lab host has a network stack of its own: Cassandra's usual ports, the same on every host
LAB_PORTS = {"storage": 7000, "ssl_storage": 7001, "native": 9042}
LAB_JMX_PORT = 7199
LAB_ROOT = "storbench-cassandra"  # the node's folder on its lab host's disk
OWNED = ".storbench-cassandra-node"  # in that folder: names the service dir that made it
HEAP = re.compile(r"^[1-9][0-9]*[mMgG]$")
DAEMON = "org.apache.cassandra.service.CassandraDaemon"


def free_on_all(hosts: list[str], taken: set[int]) -> int:
    """A port free on every one of ``hosts`` (Cassandra wants the same storage and CQL port on all nodes)."""
    for _ in range(200):
        port = free_port(hosts[0])
        if port in taken:
            continue
        try:
            for host in hosts[1:]:
                with socket.socket() as sock:
                    sock.bind((host, port))
        except OSError:
            continue
        return port
    raise EngineError(f"no port free on all of {', '.join(hosts)}")


def _check(nodes: int, heap: str) -> None:
    if not 1 <= nodes <= MAX_NODES:
        raise InputError(f"--nodes {nodes}: allowed 1 to {MAX_NODES} (Cassandra nodes on 127.0.0.1..)")
    if not HEAP.match(heap):
        raise InputError(f"--heap {heap!r}: expected a size like 512m or 1g (heap per Cassandra node)")


def up(workdir: Path, nodes: int = 1, heap: str = "1g", placement: Any = None) -> dict[str, Any]:
    placement = placement or Loopback()
    _check(nodes, heap)
    if nodes > placement.capacity:
        raise InputError(f"--nodes {nodes}: the lab cluster has {placement.capacity} hosts")
    state = status(workdir)
    if state:
        have = {"nodes": state.get("node_count"), "heap": state.get("heap"), "lab": bool(state.get("lab"))}
        if have != {"nodes": nodes, "heap": heap, "lab": placement.in_lab}:
            raise InputError(
                f"cassandra is already running with {have}; stop it first (`storbench services down cassandra`)"
            )
        return state
    classpath, java, exporter = cassandra_classpath(), java_binary(), node_exporter.binary()
    if process.owned(workdir, SERVICE):
        down(workdir)  # a stopped cluster's leftovers; fresh_dir refuses a directory that is not ours
    # a lab host's node keeps its data on the host's disk; on loopback under node-K of the service dir
    lab_roots = [placement.data_root(i) for i in range(1, nodes + 1)]
    roots = [r / LAB_ROOT if r else workdir / f"node-{i}" for i, r in enumerate(lab_roots, start=1)]
    for root in (r for r, lab in zip(roots, lab_roots) if lab):
        if root.exists() and not _owns(workdir, root):
            raise InputError(f"--lab-cluster: {root} exists and was not made by storbench for {workdir}")
    process.fresh_dir(workdir, SERVICE)
    auth = cassandra_auth.prepare(workdir)
    (workdir / "log").mkdir()
    # on loopback node K is 127.0.0.K (Loopback's 127.0.0.K+1 leaves .1 to a master; Cassandra has none)
    hosts = [placement.address(i) if placement.in_lab else node_host(i) for i in range(1, nodes + 1)]
    tls = cassandra_certs.make(workdir, hosts)
    ports: dict[str, int] = dict(LAB_PORTS) if placement.in_lab else {}
    for name in () if placement.in_lab else ("storage", "ssl_storage", "native"):
        ports[name] = free_on_all(hosts, set(ports.values()))
    state = {
        "service": SERVICE,
        "workdir": str(workdir),
        "node_count": nodes,
        "heap": heap,
        "hosts": hosts,
        "ports": ports,
        "uri": f"cassandra://{hosts[0]}:{ports['native']}",
        "lab": placement.in_lab,
        "lab_roots": [str(r) for r, lab in zip(roots, lab_roots) if lab],
        "processes": [],
        "auth": auth,
        "tls": tls,
        "ca_file": tls["ca_file"],
        "summary": "starting",
    }

    def alive() -> None:
        _check_alive(workdir, state)

    with process.all_or_nothing(workdir, state, _stop_and_remove):
        for index, host in enumerate(hosts, start=1):
            _start_node(workdir, state, java, classpath, index, roots[index - 1], placement)
            if placement.exporter(index):  # the lab host's own, on its address
                state["lab_exporters"] = {**state.get("lab_exporters", {}), host: placement.exporter(index)}
            else:
                argv, marker, url = node_exporter.command(exporter, host)
                _spawn(workdir, state, "exporter", f"exporter-{index}", argv, marker, host=host, url=url)
            _wait_native(workdir, state, host, time.monotonic() + NODE_TIMEOUT_S)
            if index == 1:
                cassandra_auth.await_role(state, alive)
            cassandra_auth.share_roles(state, index, nodetool, alive)
        _wait_ring(workdir, state, RING_TIMEOUT_S)
        cassandra_auth.settle_roles(state, nodetool, alive)
        state["nodes"] = str(node_exporter.write_nodes(workdir, state, "node", "cassandra", "data_dir"))
    where = f"lab hosts {', '.join(hosts)}" if placement.in_lab else ", ".join(hosts)
    state["summary"] = (
        f"{nodes} node(s) UN on {where} (CQL port {ports['native']}, heap {heap} each) "
        f"with node_exporters, up in {state['startup_s']:.1f} s; nodes file {state['nodes']}; "
        f"login as role {cassandra_auth.USER}: `storbench services env cassandra`; TLS too "
        f"(?tls=1&ca={tls['ca_file']})"
    )
    process.write_state(workdir, state)
    return state


def _spawn(
    workdir: Path,
    state: dict[str, Any],
    kind: str,
    name: str,
    argv: list[str],
    marker: str,
    preexec: Any = None,
    **extra: Any,
) -> None:
    proc = process.spawn(argv, workdir / "log", f"{name}.log", preexec=preexec)
    state["processes"].append({"kind": kind, "name": name, "pid": proc.pid, "marker": marker, **extra})
    process.write_state(workdir, state)


def _start_node(
    workdir: Path, state: dict[str, Any], java: str, classpath: str, index: int, data: Path, placement: Any
) -> None:
    """Node ``index``: its configuration, keys and log under node-K of the service dir, its data under ``data``
    (the same folder on loopback; the lab host's disk there), started as the host (placement.wrap, preexec)."""
    root = workdir / f"node-{index}"
    root.mkdir(mode=0o700, exist_ok=True)
    if data != root:
        shutil.rmtree(data, ignore_errors=True)  # ours (checked in up): a stopped cluster's leftovers
        data.mkdir(mode=0o700)
        (data / OWNED).write_text(str(workdir) + "\n")
    for name in DIRS:
        (data / name).mkdir(parents=True)
    config = root / "cassandra.yaml"
    yaml = node_yaml(data, state["hosts"][index - 1], state["ports"], state.get("tls"), seed=state["hosts"][0])
    write_private(config, yaml)  # 0600: the keystore's password
    logback = root / "logback.xml"
    logback.write_text(LOGBACK.format(log=root / "system.log"))
    # a lab host's JMX listens on that host's own 127.0.0.1 (nodetool runs there: cassandra_ring)
    jmx = LAB_JMX_PORT if placement.in_lab else free_port()
    heap = state["heap"]
    argv = [
        java,
        f"-Xms{heap}",
        f"-Xmx{heap}",
        *JVM_OPTIONS,
        *extra_options(),
        f"-Dcassandra.config={config.as_uri()}",
        f"-Dcassandra.storagedir={data}",
        f"-Dlogback.configurationFile={logback}",
        f"-Dcassandra.logdir={root}",
        f"-Dcassandra.jmx.local.port={jmx}",
        *cassandra_auth.jvm_options(state, root, index),
        "-cp",
        classpath,
        DAEMON,
    ]
    _spawn(
        workdir,
        state,
        "node",
        f"node-{index}",
        placement.wrap(index, argv),
        f"-Dcassandra.config={config.as_uri()}",
        placement.preexec(index),
        host=state["hosts"][index - 1],
        data_dir=str(data / "data"),
        jmx_port=jmx,
        log=str(root / "system.log"),
        wrap=placement.wrap(index, []),
        limits=placement.limits(index),
    )


def _check_alive(workdir: Path, state: dict[str, Any]) -> None:
    for entry in state["processes"]:
        if not process.still_running(entry["pid"], entry["marker"]):
            log = Path(entry.get("log") or workdir / "log" / f"{entry['name']}.log")
            raise EngineError(
                f"cassandra {entry['name']} (pid {entry['pid']}) exited while starting; "
                f"last log line: {process.last_line(log)} (log: {log})"
            )


def _wait_native(workdir: Path, state: dict[str, Any], host: str, deadline: float) -> None:
    port = state["ports"]["native"]
    while time.monotonic() < deadline:
        _check_alive(workdir, state)
        try:
            with socket.create_connection((host, port), timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise EngineError(
        f"cassandra on {host}:{port} was not accepting CQL connections within {NODE_TIMEOUT_S:.0f} s; logs in {workdir}"
    )


def credentials(state: dict[str, Any]) -> Credentials | None:
    """The login storbench's clients use on this cluster (role ``storbench``)."""
    return cassandra_auth.credentials(state)


def client_env(state: dict[str, Any]) -> dict[str, str]:
    """What a user's shell needs (``storbench services env cassandra``): cqlsh's host and port, the role and
    its password."""
    return {**cassandra_auth.client_env(state), **cassandra_certs.client_env(state)}


def _wait_ring(workdir: Path, state: dict[str, Any], timeout: float) -> None:
    wait_ring(workdir, state, timeout, lambda: _check_alive(workdir, state))


def wait_normal(state: dict[str, Any], timeout: float = RING_TIMEOUT_S) -> None:
    """Wait until every node of a running cluster is up and normal again (each node's gossip view and
    ``nodetool status`` UN), e.g. after a node was paused or restarted; EngineError after ``timeout`` s."""
    _wait_ring(Path(state["workdir"]), state, timeout)


def status(workdir: Path) -> dict[str, Any] | None:
    return process.running_state(workdir)


def running(home: Path) -> dict[str, Any] | None:
    """The state of the cluster ``services up cassandra`` runs under results home ``home``, or None."""
    return status(process.service_dir(home, SERVICE))


def _stop_all(state: dict[str, Any]) -> bool:
    """Exporters, then the nodes (last started first); True when any was running."""
    entries = state.get("processes", [])
    stopped = process.stop_in_order(entries, ("exporter",), lambda e: process.stop_pid(e["pid"], e["marker"]))
    for entry in reversed([e for e in entries if e["kind"] == "node"]):
        stopped = process.stop_pid(entry["pid"], entry["marker"], timeout=30.0) or stopped
    return stopped


def _owns(workdir: Path, root: Path) -> bool:
    try:
        return not root.is_symlink() and (root / OWNED).read_text().strip() == str(workdir)
    except OSError:
        return False


def _stop_and_remove(state: dict[str, Any]) -> bool:
    """The processes stopped, then the nodes' data on the lab hosts' disks removed (each while it is ours)."""
    stopped = _stop_all(state)
    for root in map(Path, state.get("lab_roots", [])):
        if _owns(Path(state["workdir"]), root):
            shutil.rmtree(root, ignore_errors=True)
    return stopped


def down(workdir: Path) -> bool:
    return process.take_down(workdir, SERVICE, _stop_and_remove)


def pids(state: dict[str, Any]) -> list[int]:
    return [entry["pid"] for entry in state.get("processes", [])]
