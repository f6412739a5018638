"""The nodes of a cluster under test: who they are, how to read their telemetry, which disks count.

A nodes file (``--nodes nodes.yaml``, or the one ``services up spark`` writes)::

    nodes:
      - name: worker-1                              # unique; every sample of this node is labelled with it
        role: worker                                # driver, worker, datanode, osd, cassandra, ...
        exporter: http://127.0.0.2:9100/metrics     # its node_exporter; "local" = this machine's /proc
        devices: [loop3]                            # the storage under test (default: all non-virtual disks)
        host: 127.0.0.2                             # the address services report for it (default: exporter's host)
        power: "redfish:https://10.0.0.12"          # optional: its power source (rapl, redfish, ipmi, command)
        limits: {disk_write_mbps: 20}               # optional: limits set on it (`storbench lab cluster`), shown beside
                                                    # its figures (disk_write_mbps, disk_read_mbps, link_mbit)
        telemetry: prometheus                       # optional: how this node is read (node_exporter: its exporter;
                                                    # prometheus: the file's Prometheus), whatever the run's source
    prometheus: http://127.0.0.1:9090               # optional: read the exporters' series from this Prometheus

``--node name=URL[,devices=sda,sdb][,role=worker]`` gives one node on the command line (a
token without ``=`` continues the previous key's list). One machine with no nodes is the
case N=1: a single ``local`` node.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from storbench.errors import InputError

LOCAL = "local"
ROLES = ("driver", "master", "worker", "datanode", "namenode", "osd", "mon", "rgw", "cassandra", "node")
NODE_KEYS = ("name", "role", "exporter", "devices", "host", "instance", "power", "limits", "telemetry")
NODE_SOURCES = ("node_exporter", "prometheus")  # how a node can be read: its telemetry: key, a cluster's --telemetry
LIMIT_KEYS = ("disk_write_mbps", "disk_read_mbps", "link_mbit", "link_delay_ms")
FILE_KEYS = ("nodes", "prometheus")


@dataclass(frozen=True)
class Node:
    name: str
    exporter: str = LOCAL  # node_exporter URL, or "local"
    role: str = "node"
    devices: tuple[str, ...] | None = None  # None: every non-virtual disk the node has
    host: str = ""  # the address Spark executors and services report for this node
    instance: str = ""  # its Prometheus ``instance`` label (default: the exporter's host:port)
    power: str | None = None  # its power source spec (storbench.telemetry.power); None: its RAPL, if any
    limits: tuple[tuple[str, float], ...] = ()  # limits a lab set on it (LIMIT_KEYS), the truth beside its figures
    telemetry: str | None = None  # how it is read (NODE_SOURCES), whatever the run's source; None: the run's

    @property
    def is_local(self) -> bool:
        return self.exporter == LOCAL

    def describe(self) -> dict[str, Any]:
        """What the manifest records of it (no credentials can be in an exporter URL: they are refused)."""
        return {
            "name": self.name,
            "role": self.role,
            "exporter": self.exporter,
            "host": self.host,
            "devices": list(self.devices) if self.devices is not None else None,
            "power": self.power,
            **({"limits": dict(self.limits)} if self.limits else {}),
            **({"telemetry": self.telemetry} if self.telemetry else {}),
        }


@dataclass(frozen=True)
class Cluster:
    nodes: tuple[Node, ...]
    prometheus: str | None = None
    source: str = ""  # where the nodes came from (a file's path, "--node", "services up spark")


def _where(source: str, index: int | None, key: str) -> str:
    return f"{source}: nodes[{index}].{key}" if index is not None else f"{source}: {key}"


def _url(text: Any, where: str) -> str:
    if not isinstance(text, str) or not text:
        raise InputError(f"{where}: expected a URL or 'local', got {text!r}")
    if text == LOCAL:
        return text
    parts = urlsplit(text)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"{where}: {text!r} is not an http(s) URL (e.g. http://10.0.0.5:9100/metrics) or 'local'")
    if parts.username or parts.password:
        raise InputError(f"{where}: credentials in the URL are not accepted (they would reach the manifest)")
    return text if parts.path not in ("", "/") else f"{parts.scheme}://{parts.netloc}/metrics"


def _devices(value: Any, where: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(d, str) and d.strip() for d in items):
        raise InputError(f"{where}: expected a list of device names (e.g. [sda, nvme0n1])")
    names = tuple(d.strip().removeprefix("/dev/") for d in items)
    if len(set(names)) != len(names):
        raise InputError(f"{where}: a device is listed twice")
    return names


def node_from_mapping(entry: Any, source: str, index: int | None) -> Node:
    if not isinstance(entry, dict):
        raise InputError(f"{_where(source, index, 'node')}: expected a mapping with name, exporter, role, devices")
    for key in entry:
        if key not in NODE_KEYS:
            raise InputError(f"{_where(source, index, str(key))}: unknown key; allowed: {', '.join(NODE_KEYS)}")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip() or any(c in name for c in "/\\,= \t"):
        raise InputError(
            f"{_where(source, index, 'name')}: expected a name without spaces, '/', ',' or '=', got {name!r}"
        )
    role = entry.get("role", "node")
    if role not in ROLES:
        raise InputError(f"{_where(source, index, 'role')}: unknown role {role!r}; allowed: {', '.join(ROLES)}")
    exporter = _url(entry.get("exporter", LOCAL), _where(source, index, "exporter"))
    host = entry.get("host") or (urlsplit(exporter).hostname if exporter != LOCAL else "") or ""
    instance = entry.get("instance") or (urlsplit(exporter).netloc if exporter != LOCAL else "")
    power = entry.get("power")
    if power is not None and (not isinstance(power, str) or not power.strip()):
        raise InputError(
            f"{_where(source, index, 'power')}: expected KIND[:ARGS] (rapl, redfish:URL, ipmi[:HOST], "
            f"command:CMD), got {power!r}"
        )
    return Node(
        name=name,
        exporter=exporter,
        telemetry=_node_source(entry.get("telemetry"), exporter, _where(source, index, "telemetry")),
        role=role,
        devices=_devices(entry.get("devices"), _where(source, index, "devices")),
        host=str(host),
        instance=str(instance),
        power=power,
        limits=_limits(entry.get("limits"), _where(source, index, "limits")),
    )


def _node_source(value: Any, exporter: str, where: str) -> str | None:
    if value is None:
        return None
    if value not in NODE_SOURCES:
        raise InputError(f"{where}: expected one of {', '.join(NODE_SOURCES)}, got {value!r}")
    if exporter == LOCAL:
        raise InputError(f"{where}: a node with exporter: local is read from this machine's /proc, not {value}")
    return str(value)


def _limits(value: Any, where: str) -> tuple[tuple[str, float], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise InputError(f"{where}: expected a mapping of limits ({', '.join(LIMIT_KEYS)})")
    limits = []
    for key, number in value.items():
        if key not in LIMIT_KEYS:
            raise InputError(f"{where}.{key}: unknown limit; allowed: {', '.join(LIMIT_KEYS)}")
        if isinstance(number, bool) or not isinstance(number, (int, float)) or not number > 0:
            raise InputError(f"{where}.{key}: expected a number above 0, got {number!r}")
        limits.append((str(key), float(number)))
    return tuple(limits)


def cluster_from_mapping(data: Any, source: str) -> Cluster:
    if not isinstance(data, dict) or "nodes" not in data:
        raise InputError(f"{source}: expected a mapping with a 'nodes' list")
    for key in data:
        if key not in FILE_KEYS:
            raise InputError(f"{_where(source, None, str(key))}: unknown key; allowed: {', '.join(FILE_KEYS)}")
    entries = data["nodes"]
    if not isinstance(entries, list) or not entries:
        raise InputError(f"{source}: nodes: expected a non-empty list of nodes")
    nodes = [node_from_mapping(entry, source, index) for index, entry in enumerate(entries)]
    check_unique(nodes, source)
    prometheus = data.get("prometheus")
    if prometheus is not None:
        prometheus = _url(prometheus, _where(source, None, "prometheus")).removesuffix("/metrics")
    return Cluster(tuple(nodes), prometheus, source)


def check_unique(nodes: list[Node], source: str) -> None:
    seen: dict[str, int] = {}
    for index, node in enumerate(nodes):
        if node.name in seen:
            raise InputError(
                f"{_where(source, index, 'name')}: duplicate node {node.name!r} (also nodes[{seen[node.name]}])"
            )
        seen[node.name] = index
    locals_ = [n.name for n in nodes if n.is_local]
    if len(locals_) > 1:
        raise InputError(
            f"{source}: more than one node reads this machine's /proc (exporter: local): {', '.join(locals_)}"
        )


def load_nodes(path: str | Path) -> Cluster:
    """A nodes file; every problem is one line naming the file and the key."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise InputError(f"--nodes {path}: cannot read it ({exc.strerror or exc})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        raise InputError(f"{path}:{line} not valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    return cluster_from_mapping(data, str(path))


def parse_node_spec(text: str) -> Node:
    """``name=URL[,devices=sda,sdb][,role=worker]``."""
    entry: dict[str, Any] = {}
    last = None
    for index, token in enumerate(text.split(",")):
        key, eq, value = token.partition("=")
        if index == 0:
            if not eq:
                raise InputError(f"--node {text!r}: expected NAME=URL[,devices=sda,sdb][,role=ROLE]")
            entry["name"], entry["exporter"] = key.strip(), value.strip()
            continue
        if not eq:
            if last != "devices":
                raise InputError(f"--node {text!r}: {token!r} is not KEY=VALUE (keys: devices, role, host)")
            entry["devices"].append(key.strip())
            continue
        key = key.strip()
        if key == "devices":
            entry["devices"] = [value.strip()]
        elif key in ("role", "host", "instance"):
            entry[key] = value.strip()
        else:
            raise InputError(f"--node {text!r}: unknown key {key!r}; allowed: devices, role, host, instance")
        last = key
    return node_from_mapping(entry, "--node", None)


def cluster_from_specs(specs: list[str]) -> Cluster:
    nodes = [parse_node_spec(spec) for spec in specs]
    check_unique(nodes, "--node")
    return Cluster(tuple(nodes), None, "--node")


def dump_nodes(path: Path, cluster: Cluster) -> None:
    """Writes a nodes file ``load_nodes`` reads back (services write theirs with this)."""
    data: dict[str, Any] = {"nodes": []}
    for node in cluster.nodes:
        entry: dict[str, Any] = {"name": node.name, "role": node.role, "exporter": node.exporter}
        if node.devices is not None:
            entry["devices"] = list(node.devices)
        if node.host:
            entry["host"] = node.host
        if node.power:
            entry["power"] = node.power
        if node.limits:
            entry["limits"] = dict(node.limits)
        if node.telemetry:
            entry["telemetry"] = node.telemetry
        data["nodes"].append(entry)
    if cluster.prometheus:
        data["prometheus"] = cluster.prometheus
    path.write_text(yaml.safe_dump(data, sort_keys=False))
