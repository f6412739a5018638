"""`services up prometheus`: Debian's Prometheus on 127.0.0.1, scraping the nodes' node_exporters.

Which exporters: those of the nodes files given (``--nodes-file``, repeatable), else those of every
service under the same results home that wrote one (``services up spark``, ``cassandra``, ``yarn``:
their ``nodes.yaml``). Every ``--scrape-interval`` seconds (default 1, storbench's telemetry interval)
it scrapes each exporter, its ``instance`` label being the exporter's host:port as
``--telemetry prometheus`` asks for it, with the node's name and role as labels for a human's queries.

It writes its own ``nodes.yaml``: the same nodes plus ``prometheus: URL``, so ``storbench run ...
--nodes <that file>`` reads each node's counters from this Prometheus (``query_range``) instead of
scraping the exporters itself. Its data (TSDB, WAL), configuration and log live in the service dir; it
listens on 127.0.0.1 only, holds no secret (the exporters' counters), and is stopped by PID.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.request import urlopen

import yaml

from storbench.errors import EngineError, InputError
from storbench.services import process
from storbench.services.node_exporter import NODES_FILE
from storbench.services.ports import free_port
from storbench.services.registry import Flag, register
from storbench.telemetry.nodes import Cluster, Node, dump_nodes, load_nodes

SERVICE = "prometheus"
register(
    SERVICE,
    __name__,
    Flag(
        "nodes_file",
        "scrape the node_exporters of this nodes file (repeatable; default: those of the spark, cassandra and yarn "
        "services running under the results home)",
        repeatable=True,
        metavar="FILE",
    ),
    Flag("scrape_interval", "seconds between two scrapes of an exporter (default 1)", float, metavar="SECONDS"),
)
BINARY = "prometheus"
CONFIG = "prometheus.yml"
START_TIMEOUT_S = 60.0  # ready and every exporter scraped once


def up(workdir: Path, nodes_file: list[str] | None = None, scrape_interval: float = 1.0) -> dict[str, Any]:
    if not 0.1 <= scrape_interval <= 300:
        raise InputError(f"--scrape-interval {scrape_interval:g}: allowed 0.1 to 300 seconds")
    state = status(workdir)
    if state:
        return state
    nodes = scraped_nodes(workdir, nodes_file or [])
    binary = shutil.which(BINARY)
    if not binary:
        raise EngineError(f"{BINARY} is not installed; run scripts/setup.sh --test (apt-get install prometheus)")
    process.fresh_dir(workdir, SERVICE)  # a stopped Prometheus's leftovers go only when the directory is ours
    config = workdir / CONFIG
    config.write_text(yaml.safe_dump(scrape_config(nodes, scrape_interval), sort_keys=False))
    port = free_port()
    argv = [
        binary,
        f"--config.file={config}",  # also the marker: names this home's Prometheus and no other process
        f"--storage.tsdb.path={workdir / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
    ]
    started = time.monotonic()
    proc = process.spawn(argv, workdir, "prometheus.log")
    uri = f"http://127.0.0.1:{port}"
    state = {
        "service": SERVICE,
        "pid": proc.pid,
        "marker": argv[1],
        "workdir": str(workdir),
        "log": str(workdir / "prometheus.log"),
        "uri": uri,
        "summary": f"pid {proc.pid}, starting",
    }
    with process.starting(workdir, state, proc):
        health = _wait_scraped(uri, proc, workdir, len(nodes))
    down_ones = sorted(instance for instance, ok in health.items() if not ok)
    nodes_path = workdir / NODES_FILE
    dump_nodes(nodes_path, Cluster(tuple(nodes), prometheus=uri, source="services up prometheus"))
    state |= {
        "nodes": str(nodes_path),
        "targets": [node.instance for node in nodes],
        "scrape_interval_s": scrape_interval,
        "startup_s": round(time.monotonic() - started, 2),
        "summary": f"pid {proc.pid}, scraping {len(nodes)} node_exporter(s) every {scrape_interval:g} s, "
        f"up in {time.monotonic() - started:.1f} s" + (f"; not answering: {', '.join(down_ones)}" if down_ones else ""),
    }
    process.write_state(workdir, state)
    return state


def scraped_nodes(workdir: Path, files: list[str]) -> list[Node]:
    """The nodes whose exporters it scrapes: of ``files``, else of the services' nodes files beside ``workdir``;
    one each per exporter, a name that two files use made unique by its file's folder (``yarn-worker-1``)."""
    paths = [Path(f) for f in files] or sorted(
        p for p in workdir.parent.glob(f"*/{NODES_FILE}") if p.parent.name != workdir.name
    )
    nodes: list[Node] = []
    for path in paths:
        for node in load_nodes(path).nodes:
            if node.is_local or any(n.instance == node.instance for n in nodes):
                continue  # this machine's /proc has no exporter; one exporter is scraped once
            if any(n.name == node.name for n in nodes):
                node = replace(node, name=f"{path.parent.name}-{node.name}")
            nodes.append(node)
    if not nodes:
        given = f"in {', '.join(map(str, paths))}" if paths else f"beside {workdir}"
        raise InputError(
            f"services up prometheus: no node_exporter to scrape {given}; give --nodes-file FILE, or first start "
            f"a service that runs them (services up spark, cassandra or yarn)"
        )
    return nodes


def scrape_config(nodes: list[Node], interval_s: float) -> dict[str, Any]:
    """Prometheus's configuration: one job per scheme and metrics path, a target per exporter (host:port, the
    ``instance`` label) with the node's name and role as labels."""
    every = f"{round(interval_s * 1000)}ms"
    jobs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for node in nodes:
        url = urlsplit(node.exporter)
        jobs.setdefault((url.scheme, url.path or "/metrics"), []).append(
            {"targets": [url.netloc], "labels": {"node": node.name, "role": node.role}}
        )
    return {
        "global": {"scrape_interval": every, "scrape_timeout": every, "evaluation_interval": every},
        "scrape_configs": [
            {"job_name": f"node{i}" if i else "node", "scheme": scheme, "metrics_path": path, "static_configs": sc}
            for i, ((scheme, path), sc) in enumerate(jobs.items())
        ],
    }


def targets_health(uri: str) -> dict[str, bool | None]:
    """Each scraped instance: True up, False down, None not scraped yet (Prometheus's /api/v1/targets)."""
    with urlopen(f"{uri}/api/v1/targets?state=active", timeout=5) as answer:
        active = json.load(answer)["data"]["activeTargets"]
    said = {"up": True, "down": False}
    return {t["labels"]["instance"]: said.get(t["health"]) for t in active}


def _wait_scraped(uri: str, proc: Any, workdir: Path, expected: int) -> dict[str, bool]:
    """Until Prometheus is ready and has scraped each of its ``expected`` targets once; their health."""
    deadline = time.monotonic() + START_TIMEOUT_S
    last = "no answer"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise EngineError(
                f"prometheus exited with code {proc.returncode} before it was ready; last log line: "
                f"{process.last_line(workdir / 'prometheus.log')} (log: {workdir / 'prometheus.log'})"
            )
        try:
            health = targets_health(uri)
        except (OSError, ValueError, KeyError) as exc:
            last = str(getattr(exc, "reason", None) or exc)
        else:
            if len(health) == expected and all(ok is not None for ok in health.values()):
                return {instance: bool(ok) for instance, ok in health.items()}
            last = f"{sum(ok is not None for ok in health.values())} of {expected} exporter(s) scraped"
        time.sleep(0.3)
    raise EngineError(f"prometheus was not ready after {START_TIMEOUT_S:.0f} s ({last}); log: {workdir}/prometheus.log")


def status(workdir: Path) -> dict[str, Any] | None:
    return process.running_state(workdir)


def down(workdir: Path) -> bool:
    return process.take_down(workdir, SERVICE, lambda state: process.stop_pid(state["pid"], state["marker"]))
