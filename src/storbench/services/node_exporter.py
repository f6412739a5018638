"""Debian's ``prometheus-node-exporter`` beside a service's node, bound to that node's loopback address.

Shared by the services that register their nodes for telemetry (``spark``'s workers,
``cassandra``'s nodes): the command line (loop devices visible, only the collectors
per-node telemetry and fingerprints read), where it answers, and whether it does.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.request import urlopen

from storbench.errors import EngineError
from storbench.services.ports import free_port
from storbench.telemetry.devices import devices_for_path
from storbench.telemetry.nodes import Cluster, Node, dump_nodes

NODES_FILE = "nodes.yaml"

EXPORTER = "prometheus-node-exporter"
# diskstats with loop devices (the default hides them), plus what per-node telemetry and fingerprints read
COLLECTORS = (
    "cpu",
    "diskstats",
    "meminfo",
    "netdev",
    "uname",
    "stat",
    "loadavg",
    "os",
    "rapl",
    "filesystem",
    "pressure",
    "time",
)


def binary() -> str:
    found = shutil.which(EXPORTER)
    if not found:
        raise EngineError(
            f"{EXPORTER} is not installed; run scripts/setup.sh --test (apt-get install prometheus-node-exporter)"
        )
    return found


def command(exporter: str, host: str, port: int | None = None) -> tuple[list[str], str, str]:
    """(argv, marker for its PID checks, metrics URL) of an exporter on ``port`` (default: a free one) of ``host``."""
    listen = f"--web.listen-address={host}:{port or free_port(host)}"
    argv = [
        exporter,
        listen,
        r"--collector.diskstats.device-exclude=^(ram|fd)\d+$",
        "--collector.disable-defaults",
        *(f"--collector.{c}" for c in COLLECTORS),
    ]
    return argv, listen, f"http://{listen.split('=', 1)[1]}/metrics"


def answers(url: str) -> bool:
    try:
        with urlopen(url, timeout=3) as answer:
            return answer.status == 200 and b"node_" in answer.read()
    except OSError:
        return False


def silent(state: dict[str, Any]) -> list[str]:
    """The metrics URLs of the service's exporters (``kind`` exporter in its processes) that do not answer."""
    return [p["url"] for p in state["processes"] if p["kind"] == "exporter" and not answers(p["url"])]


def write_nodes(workdir: Path, state: dict[str, Any], kind: str, role: str, dir_key: str) -> Path:
    """``nodes.yaml`` in ``workdir``: one ``role`` node per process of ``kind``, with the exporter on its host and the
    disks behind its ``dir_key`` directory (storbench.telemetry.nodes)."""
    exporters = {p["host"]: p["url"] for p in state["processes"] if p["kind"] == "exporter"}
    exporters.update(state.get("lab_exporters") or {})  # a lab host's own exporter (services.placement)
    nodes = []
    for entry in (p for p in state["processes"] if p["kind"] == kind):
        disks = devices_for_path(entry[dir_key]).devices
        nodes.append(
            Node(
                name=entry["name"],
                exporter=exporters[entry["host"]],
                role=role,
                devices=tuple(disks) or None,
                host=entry["host"],
                limits=tuple((entry.get("limits") or {}).items()),
            )
        )
    path = workdir / NODES_FILE
    dump_nodes(path, Cluster(tuple(nodes), source=f"services up {state['service']}"))
    return path


def wait_ready(
    state: dict[str, Any],
    deadline: float,
    check_alive: Callable[[], None],
    probe: Callable[[], str | None],
    interval: float = 0.5,
) -> str | None:
    """Polls until ``probe`` says ready (None; otherwise it names what is missing) and every exporter of the
    service answers, calling ``check_alive`` (which raises when a process died) each round; None once ready,
    else what was still missing at ``deadline``."""
    last = "no answer"
    while time.monotonic() < deadline:
        check_alive()
        last = probe()
        if last is None:
            quiet = silent(state)
            if not quiet:
                return None
            last = f"node_exporter not answering at {', '.join(quiet)}"
        time.sleep(interval)
    return last
