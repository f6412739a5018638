"""What a running ``services up cassandra`` cluster says about itself: each node's gossip view over CQL, and
``nodetool`` (Cassandra's own, from the same jars) against a node's JMX, run in the node's lab host when it has
one (its JMX listens on that host's own 127.0.0.1); the wait until every node is up and normal."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

from storbench.cassandra_cql import Credentials, session_on
from storbench.errors import EngineError
from storbench.services import cassandra_auth, node_exporter
from storbench.services.cassandra_conf import JVM_OPTIONS
from storbench.services.jvm import cassandra_classpath, java_command

RING_TIMEOUT_S = 120.0


def gossip_view(host: str, port: int, credentials: Credentials | None = None) -> dict[str, str]:
    """address → gossip status (NORMAL, BOOT, shutdown, ...) of every node ``host`` knows, itself included,
    through CQL (``system_views.gossip_info``) on that node alone."""
    with session_on([host], port, pin=True, credentials=credentials) as session:
        rows = session.execute("SELECT address, status, status_with_port FROM system_views.gossip_info")
        # Cassandra 4+ gossips STATUS_WITH_PORT; the legacy STATUS is set for the node itself only
        return {str(row.address): (row.status_with_port or row.status or "").split(",", 1)[0] for row in rows}


def ring(state: dict[str, Any]) -> dict[str, dict[str, str]]:
    """Each node's view of the ring: node address → (address → gossip status)."""
    login = cassandra_auth.credentials(state)
    return {host: gossip_view(host, state["ports"]["native"], login) for host in state["hosts"]}


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
        *entry.get("wrap", []),  # a lab host's node: nodetool in its namespace, where its JMX listens
        *java_command(),  # STORBENCH_JVM_OPTS too: a nodetool call is a short-lived JVM
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


def wait_ring(workdir: Path, state: dict[str, Any], timeout: float, check_alive: Callable[[], None]) -> None:
    """Until every node, asked alone over CQL, sees every node NORMAL and ``nodetool status`` shows all UN (and
    every exporter answers); EngineError after ``timeout`` s."""
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
    last = node_exporter.wait_ready(state, deadline, check_alive, probe, interval=1.0)
    if last is not None:
        raise EngineError(
            f"the Cassandra ring was not all up and normal within {timeout:.0f} s ({last}); logs in {workdir}"
        )
