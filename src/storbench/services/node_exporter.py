"""Debian's ``prometheus-node-exporter`` beside a service's node, bound to that node's loopback address.

Shared by the services that register their nodes for telemetry (``spark``'s workers,
``cassandra``'s nodes): the command line (loop devices visible, only the collectors
per-node telemetry and fingerprints read), where it answers, and whether it does.
"""

from __future__ import annotations

import shutil
import socket
from urllib.request import urlopen

from storbench.errors import EngineError

EXPORTER = "prometheus-node-exporter"
# diskstats with loop devices (the default hides them), plus what per-node telemetry and fingerprints read
COLLECTORS = ("cpu", "diskstats", "meminfo", "netdev", "uname", "stat", "loadavg", "os", "rapl", "filesystem")


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def binary() -> str:
    found = shutil.which(EXPORTER)
    if not found:
        raise EngineError(f"{EXPORTER} is not installed; run scripts/setup.sh --test "
                          f"(apt-get install prometheus-node-exporter)")
    return found


def command(exporter: str, host: str) -> tuple[list[str], str, str]:
    """(argv, marker for its PID checks, metrics URL) of an exporter on a free port of ``host``."""
    listen = f"--web.listen-address={host}:{free_port(host)}"
    argv = [exporter, listen, r"--collector.diskstats.device-exclude=^(ram|fd)\d+$",
            "--collector.disable-defaults", *(f"--collector.{c}" for c in COLLECTORS)]
    return argv, listen, f"http://{listen.split('=', 1)[1]}/metrics"


def answers(url: str) -> bool:
    try:
        with urlopen(url, timeout=3) as answer:
            return answer.status == 200 and b"node_" in answer.read()
    except OSError:
        return False
