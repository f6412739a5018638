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
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

from storbench.cassandra_cql import Credentials, session_on
from storbench.errors import EngineError, InputError
from storbench.services import cassandra_auth, cassandra_certs, node_exporter, process
from storbench.services.jvm import cassandra_classpath, java_binary
from storbench.services.process import write_private
from storbench.services.cassandra_conf import DIRS, JVM_OPTIONS, LOGBACK, node_yaml, node_host
from storbench.services.registry import Flag, register

SERVICE = "cassandra"
register(
    SERVICE,
    __name__,
    Flag("nodes", "number of nodes, on 127.0.0.1.. (default 1)", int),
    Flag("heap", "heap per node, e.g. 1g (default 1g)"),
)
MAX_NODES = 8
NODE_TIMEOUT_S = 240.0  # one node, from spawn to its CQL port (a loaded 2-core machine is slow)
RING_TIMEOUT_S = 120.0
HEAP = re.compile(r"^[1-9][0-9]*[mMgG]$")
DAEMON = "org.apache.cassandra.service.CassandraDaemon"


def free_on_all(hosts: list[str], taken: set[int]) -> int:
    """A port free on every one of ``hosts`` (Cassandra wants the same storage and CQL port on all nodes)."""
    for _ in range(200):
        port = node_exporter.free_port(hosts[0])
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


def up(workdir: Path, nodes: int = 1, heap: str = "1g") -> dict[str, Any]:
    _check(nodes, heap)
    state = status(workdir)
    if state:
        have = {"nodes": state.get("node_count"), "heap": state.get("heap")}
        if have != {"nodes": nodes, "heap": heap}:
            raise InputError(
                f"cassandra is already running with {have}; stop it first (`storbench services down cassandra`)"
            )
        return state
    classpath, java, exporter = cassandra_classpath(), java_binary(), node_exporter.binary()
    if process.owned(workdir, SERVICE):
        down(workdir)  # a stopped cluster's leftovers; fresh_dir refuses a directory that is not ours
    process.fresh_dir(workdir, SERVICE)
    auth = cassandra_auth.prepare(workdir)
    (workdir / "log").mkdir()
    hosts = [node_host(i) for i in range(1, nodes + 1)]
    tls = cassandra_certs.make(workdir, hosts)
    ports: dict[str, int] = {}
    for name in ("storage", "ssl_storage", "native"):
        ports[name] = free_on_all(hosts, set(ports.values()))
    state = {
        "service": SERVICE,
        "workdir": str(workdir),
        "node_count": nodes,
        "heap": heap,
        "hosts": hosts,
        "ports": ports,
        "uri": f"cassandra://{hosts[0]}:{ports['native']}",
        "processes": [],
        "auth": auth,
        "tls": tls,
        "ca_file": tls["ca_file"],
        "summary": "starting",
    }

    def alive() -> None:
        _check_alive(workdir, state)

    with process.all_or_nothing(workdir, state, _stop_all):
        for index, host in enumerate(hosts, start=1):
            _start_node(workdir, state, java, classpath, index, host)
            argv, marker, url = node_exporter.command(exporter, host)
            _spawn(workdir, state, "exporter", f"exporter-{index}", argv, marker, host=host, url=url)
            _wait_native(workdir, state, host, time.monotonic() + NODE_TIMEOUT_S)
            if index == 1:
                cassandra_auth.await_role(state, alive)
            cassandra_auth.share_roles(state, index, nodetool, alive)
        _wait_ring(workdir, state, RING_TIMEOUT_S)
        state["nodes"] = str(node_exporter.write_nodes(workdir, state, "node", "cassandra", "data_dir"))
    state["summary"] = (
        f"{nodes} node(s) UN on {', '.join(hosts)} (CQL port {ports['native']}, heap {heap} each) "
        f"with node_exporters, up in {state['startup_s']:.1f} s; nodes file {state['nodes']}; "
        f"login as role {cassandra_auth.USER}: `storbench services env cassandra`; TLS too "
        f"(?tls=1&ca={tls['ca_file']})"
    )
    process.write_state(workdir, state)
    return state


def _spawn(
    workdir: Path, state: dict[str, Any], kind: str, name: str, argv: list[str], marker: str, **extra: Any
) -> None:
    proc = process.spawn(argv, workdir / "log", f"{name}.log")
    state["processes"].append({"kind": kind, "name": name, "pid": proc.pid, "marker": marker, **extra})
    process.write_state(workdir, state)


def _start_node(workdir: Path, state: dict[str, Any], java: str, classpath: str, index: int, host: str) -> None:
    root = workdir / f"node-{index}"
    for name in DIRS:
        (root / name).mkdir(parents=True)
    config = root / "cassandra.yaml"
    write_private(config, node_yaml(root, host, state["ports"], state.get("tls")))  # 0600: the keystore's password
    logback = root / "logback.xml"
    logback.write_text(LOGBACK.format(log=root / "system.log"))
    jmx = node_exporter.free_port()
    heap = state["heap"]
    argv = [
        java,
        f"-Xms{heap}",
        f"-Xmx{heap}",
        *JVM_OPTIONS,
        f"-Dcassandra.config={config.as_uri()}",
        f"-Dcassandra.storagedir={root}",
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
        argv,
        f"-Dcassandra.config={config.as_uri()}",
        host=host,
        data_dir=str(root / "data"),
        jmx_port=jmx,
        log=str(root / "system.log"),
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


def gossip_view(host: str, port: int, credentials: Credentials | None = None) -> dict[str, str]:
    """address → gossip status (NORMAL, BOOT, shutdown, ...) of every node ``host`` knows, itself included,
    through CQL (``system_views.gossip_info``) on that node alone."""
    with session_on([host], port, pin=True, credentials=credentials) as session:
        rows = session.execute("SELECT address, status, status_with_port FROM system_views.gossip_info")
        # Cassandra 4+ gossips STATUS_WITH_PORT; the legacy STATUS is set for the node itself only
        return {str(row.address): (row.status_with_port or row.status or "").split(",", 1)[0] for row in rows}


def ring(state: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Each node's view of the ring: node address → (address → gossip status)."""
    login = credentials(state)
    return {host: gossip_view(host, state["ports"]["native"], login) for host in state["hosts"]}


def credentials(state: dict[str, Any]) -> Credentials | None:
    """The login storbench's clients use on this cluster (role ``storbench``)."""
    return cassandra_auth.credentials(state)


def client_env(state: dict[str, Any]) -> dict[str, str]:
    """What a user's shell needs (``storbench services env cassandra``): cqlsh's host and port, the role and
    its password."""
    return {**cassandra_auth.client_env(state), **cassandra_certs.client_env(state)}


def nodetool(state: dict[str, Any], *args: str, node: int = 1, timeout: float = 120.0, login: bool = True) -> str:
    """``nodetool ARGS`` (Cassandra's own, from the same jars) against node ``node``'s JMX, logged in as storbench
    (``login`` False: without, which the node refuses); its stdout."""
    entry = [p for p in state["processes"] if p["kind"] == "node"][node - 1]
    tools = Path(state["workdir"]) / "tools"  # nodetool's history and logs stay in the service dir, not in ~
    tools.mkdir(exist_ok=True)
    logback = tools / "logback.xml"
    if not logback.exists():
        logback.write_text('<configuration><root level="OFF"/></configuration>\n')
    jpms = [o for o in JVM_OPTIONS if o.startswith(("--add-", "-Dio.netty"))]
    argv = [
        java_binary(),
        "-Xmx128m",
        *jpms,
        f"-Duser.home={tools}",
        f"-Dcassandra.logdir={tools}",
        f"-Dlogback.configurationFile={logback}",
        "-cp",
        cassandra_classpath(),
        "org.apache.cassandra.tools.NodeTool",
        "-h",
        "127.0.0.1",
        "-p",
        str(entry["jmx_port"]),
        *(cassandra_auth.nodetool_options(state) if login else []),
        *args,
    ]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        # nodetool says "error: WHY" (or "nodetool: WHY"), then maybe a Java stack trace: the reason, not a frame
        lines = [
            x
            for x in (done.stderr + "\n" + done.stdout).splitlines()
            if x.strip() and not x.startswith(("\t", " ", "-- StackTrace", "Caused by"))
        ]
        detail = ([x for x in lines if x.startswith(("error:", "nodetool:"))] or lines[-1:] or ["no output"])[0]
        raise EngineError(f"nodetool {' '.join(args)} on {entry['host']} failed: {detail[:300]}")
    return done.stdout


def ring_status(state: dict[str, Any], node: int = 1) -> dict[str, str]:
    """address → its two-letter state in ``nodetool status`` (UN: up and normal) as node ``node`` sees it."""
    rows = (line.split() for line in nodetool(state, "status", node=node).splitlines())
    return {row[1]: row[0] for row in rows if len(row) > 2 and re.fullmatch(r"[UD][NLJM]", row[0])}


def _wait_ring(workdir: Path, state: dict[str, Any], timeout: float) -> None:
    hosts = sorted(state["hosts"])

    def probe() -> str | None:
        try:
            views = ring(state)
        except Exception as exc:  # the driver's errors have no common base but Exception
            if "Bad credentials" in str(exc):  # a node's repair ran before the ring gave it its system_auth range
                for node in range(2, len(hosts) + 1):
                    try:
                        nodetool(state, "repair", "-full", "system_auth", node=node)
                    except (EngineError, subprocess.TimeoutExpired):  # tried again on the next probe
                        pass
            return f"CQL: {exc}"
        lagging = {h: v for h, v in views.items() if sorted(a for a, s in v.items() if s == "NORMAL") != hosts}
        if lagging:
            return "; ".join(f"{h} sees {v}" for h, v in lagging.items())
        seen = ring_status(state)  # once gossip agrees: nodetool's word, as an operator would check
        return None if seen == {h: "UN" for h in hosts} else f"nodetool status: {seen}"

    deadline = time.monotonic() + timeout
    last = node_exporter.wait_ready(state, deadline, lambda: _check_alive(workdir, state), probe, interval=1.0)
    if last is not None:
        raise EngineError(
            f"the Cassandra ring was not all up and normal within {timeout:.0f} s ({last}); logs in {workdir}"
        )


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


def down(workdir: Path) -> bool:
    return process.take_down(workdir, SERVICE, _stop_all)


def pids(state: dict[str, Any]) -> list[int]:
    return [entry["pid"] for entry in state.get("processes", [])]
