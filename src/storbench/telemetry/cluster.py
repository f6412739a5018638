"""Telemetry from every node of a cluster, and the papers' metrics per node and across nodes.

Each node has its own collector (this machine's /proc, its node_exporter, or Prometheus's
copy of it) sampling at the interval on its own thread. ``mark()`` snapshots every node at
once and remembers each node's own snapshot time, so a window is measured on each node
between its own marks.

Across nodes (paper 000's "maximum drive throughput", paper 002's per-node and cluster
throughput): the maxima of the nodes' maxima, the sum of MB moved, I/O-weighted average
latency (total ms over total I/Os, iostat's formula over the whole cluster), the peak of
the sum of the nodes' MB/s ("cluster throughput", averaged over 3 s as every maximum
throughput is: window.peak_rate), and the spread between the busiest and the least busy
node, with the slowest node named.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, Sequence

from storbench.errors import InputError
from storbench.telemetry.bound import figures, slowest
from storbench.telemetry.collector import Collector
from storbench.telemetry.snapshot import Snapshot
from storbench.telemetry.exporter import (
    FINGERPRINT_COLLECTORS,
    ExporterError,
    ExporterReader,
    default_devices,
    disk_names,
    fingerprint,
)
from storbench.telemetry.devices import local_disks
from storbench.telemetry.machine import fingerprint as local_fingerprint
from storbench.telemetry.nodes import NODE_SOURCES, Cluster, Node
from storbench.telemetry.power import NodePower, open_power
from storbench.telemetry.procfs import EnergyMeter
from storbench.telemetry.prometheus import PrometheusApi, PrometheusCollector
from storbench.telemetry.procfs import SECTOR_BYTES
from storbench.telemetry.window import peak_rate, window_intervals, window_metrics, window_series, window_totals

MB = 1e6
SOURCES = NODE_SOURCES  # --telemetry for a cluster: the sources a node can be read from


class NodeCollector(Protocol):
    devices: list[str]
    interval: float

    @property
    def cpu_seconds(self) -> float: ...
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def mark(self) -> float: ...
    def points(self) -> list[Snapshot]: ...
    def rates(self) -> list[dict[str, Any]]: ...
    def gaps(self) -> list[dict[str, Any]]: ...


@dataclass
class Member:
    node: Node
    label: str  # "<role>-<k>": lines nodes up by role across runs of different clusters
    collector: NodeCollector
    fingerprint: dict[str, Any]
    power: NodePower = field(default_factory=lambda: NodePower({"source": "none", "why": "not configured"}))


def node_labels(nodes: Sequence[Node]) -> list[str]:
    """worker-1, worker-2, datanode-1, ...: each node's ordinal within its role, in the file's order."""
    counts: dict[str, int] = {}
    labels = []
    for node in nodes:
        counts[node.role] = counts.get(node.role, 0) + 1
        labels.append(f"{node.role}-{counts[node.role]}")
    return labels


def _node_devices(
    node: Node, index: int, source: str, have: list[str], lister: str = "its exporter", shown: list[str] | None = None
) -> list[str]:
    if node.devices is None:
        return default_devices(have)
    for device in node.devices:
        if device not in have:  # measuring it would report n/a everywhere without a word
            raise InputError(
                f"{source}: nodes[{index}].devices: node {node.name} has no device {device!r} "
                f"({lister} lists: {', '.join(have if shown is None else shown) or 'none'})"
            )
    return list(node.devices)


def _power(
    node: Node, index: int, cluster: Cluster, interval: float, collector: NodeCollector, has_rapl: bool, insecure: bool
) -> NodePower:
    return open_power(
        node.power,
        f"{cluster.source}: nodes[{index}].power",
        interval,
        local=node.is_local,
        has_rapl=has_rapl,
        snapshots=collector.points,
        insecure=insecure,
    )


def _open_member(
    node: Node,
    index: int,
    label: str,
    cluster: Cluster,
    source: str,
    interval: float,
    local_devices: list[str],
    insecure: bool = False,
) -> Member:
    if node.is_local:
        known, shown = local_disks()
        devices = (
            _node_devices(node, index, cluster.source, sorted(known), "this machine", shown)
            if node.devices is not None
            else local_devices
        )
        local = Collector(devices, interval=interval)
        return Member(
            node,
            label,
            local,
            local_fingerprint(None, devices),
            _power(node, index, cluster, interval, local, EnergyMeter().available, insecure),
        )
    reader = ExporterReader(node.exporter, timeout=max(2.0, min(10.0, 2 * interval)))
    try:
        samples = reader.samples(FINGERPRINT_COLLECTORS)
    except ExporterError as exc:
        raise InputError(
            f"{cluster.source}: nodes[{index}].exporter: cannot read node {node.name}'s telemetry: {exc}"
        ) from None
    devices = _node_devices(node, index, cluster.source, disk_names(samples))
    if source == "prometheus":
        api = PrometheusApi(cluster.prometheus or "")
        collector: NodeCollector = PrometheusCollector(api, node.instance, devices, interval)
    else:
        collector = Collector(devices, interval=interval, reader=reader.read)
    has_rapl = bool(samples.get("node_rapl_package_joules_total"))
    return Member(
        node,
        label,
        collector,
        fingerprint(samples),
        _power(node, index, cluster, interval, collector, has_rapl, insecure),
    )


def open_cluster(
    cluster: Cluster, source: str, interval: float, local_devices: list[str], insecure: bool = False
) -> "ClusterTelemetry":
    """Checks every node's telemetry answers and its devices exist, before anything is measured."""
    if source not in SOURCES:
        raise InputError(f"--telemetry {source!r}: allowed: local, {', '.join(SOURCES)}")
    sources = [node.telemetry or source for node in cluster.nodes]  # a node's own telemetry: key wins
    for index, node in enumerate(cluster.nodes):
        if sources[index] != "prometheus":
            continue
        if not cluster.prometheus:
            asked = "--telemetry prometheus" if not node.telemetry else f"{cluster.source}: nodes[{index}].telemetry"
            raise InputError(f"{asked}: no Prometheus URL (--prometheus URL, or 'prometheus:' in {cluster.source})")
        _check_prometheus(PrometheusApi(cluster.prometheus), node)
    labels = node_labels(cluster.nodes)
    members = [
        _open_member(node, index, labels[index], cluster, sources[index], interval, local_devices, insecure)
        for index, node in enumerate(cluster.nodes)
    ]
    return ClusterTelemetry(members, interval)


def _check_prometheus(api: PrometheusApi, node: Node) -> None:
    try:
        latest = api.latest_scrape(node.instance)
    except ExporterError as exc:
        raise InputError(f"--telemetry prometheus: {exc}") from None
    if latest is None:
        raise InputError(
            f"--telemetry prometheus: {api.base_url} has no series for node {node.name} "
            f"(instance {node.instance!r}); is it scraping {node.exporter}?"
        )


class ClusterTelemetry:
    def __init__(self, members: list[Member], interval: float):
        self.members = members
        self.interval = interval
        # a mark's time -> each node's (its counters' time, its power sampler's reading time or None)
        self._marks: dict[float, dict[str, tuple[float, float | None]]] = {}
        self._pool = ThreadPoolExecutor(max_workers=max(1, len(members)), thread_name_prefix="storbench-mark")

    @property
    def cpu_seconds(self) -> float:
        return sum(m.collector.cpu_seconds for m in self.members)

    def start(self) -> None:
        for member in self.members:
            member.collector.start()
            member.power.start()

    def stop(self) -> None:
        for member in self.members:
            member.collector.stop()
            member.power.stop()
        self._pool.shutdown(wait=False)

    @staticmethod
    def _mark_member(member: Member) -> tuple[float, float | None]:
        return member.collector.mark(), member.power.mark()

    def power_why(self) -> str | None:
        """Why the cluster's power is not measured (a node without a source, scopes that differ), or None."""
        missing = [m.label for m in self.members if not m.power.measured]
        if missing:
            return f"no power source on {', '.join(missing)}"
        scopes = sorted({m.power.scope or "" for m in self.members})
        if len(scopes) > 1:
            return f"the nodes' power sources cover different scopes ({', '.join(scopes)}): never added"
        return None

    def mark(self) -> float:
        """Marks every node at once; returns the time the caller's window is known by."""
        now = time.monotonic()
        futures = {m.label: self._pool.submit(self._mark_member, m) for m in self.members}
        self._marks[now] = {label: future.result() for label, future in futures.items()}
        return now

    def node_time(self, label: str, t: float) -> float:
        return self._marks.get(t, {}).get(label, (t, None))[0]

    def power_time(self, label: str, t: float) -> float:
        """Where the node's power window is bounded: its sampler's reading at the mark. A sampler reads from this
        machine, on this machine's clock, while the node's counters are timed by its own clock, which maps to
        this one within half a scrape's round trip: a window ending there could end after the last power
        reading and lose its figure (ci34: a node's avg_power_w None)."""
        node, power = self._marks.get(t, {}).get(label, (t, None))
        return power if power is not None else node

    def node_metrics(self, start: float, end: float) -> dict[str, dict[str, float | None]]:
        out = {}
        for m in self.members:
            node_start, node_end = self.node_time(m.label, start), self.node_time(m.label, end)
            values = window_metrics(m.collector.points(), node_start, node_end, self.interval)
            if m.power.measured:
                values.update(m.power.window(self.power_time(m.label, start), self.power_time(m.label, end)))
            else:
                values["energy_j"] = None
            out[m.label] = values
        return out

    def cluster_metrics(
        self, start: float, end: float, per_node: dict[str, dict[str, float | None]]
    ) -> tuple[dict[str, float | None], tuple[str, float, str] | None]:
        """The window's metrics across nodes, and the slowest node (telemetry.bound.slowest): its label, how far
        behind the busiest (%), what held it."""
        totals = {
            m.label: window_totals(m.collector.points(), self.node_time(m.label, start), self.node_time(m.label, end))
            for m in self.members
        }
        merged = {key: sum(t[key] for t in totals.values()) for key in next(iter(totals.values()))}
        values = list(per_node.values())
        row: dict[str, float | None] = {
            "max_read_mbps": _max(values, "max_read_mbps"),
            "max_write_mbps": _max(values, "max_write_mbps"),
            "avg_read_latency_ms": merged["read_ms"] / merged["reads"] if merged["reads"] else None,
            "avg_write_latency_ms": merged["write_ms"] / merged["writes"] if merged["writes"] else None,
            "max_cpu_pct": _max(values, "max_cpu_pct"),
            "avg_cpu_pct": _mean(values, "avg_cpu_pct"),
            "read_mb": _sum(values, "read_mb"),
            "written_mb": _sum(values, "written_mb"),
            "max_util_pct": _max(values, "max_util_pct"),
            "max_net_mbps": _max(values, "max_net_mbps"),
            "max_net_rx_mbps": _max(values, "max_net_rx_mbps"),
            "max_net_tx_mbps": _max(values, "max_net_tx_mbps"),
        }
        if self.power_why() is None and all(v.get("energy_j") is not None for v in values):  # one scope, every node
            row["energy_j"], row["avg_power_w"] = _sum(values, "energy_j"), _sum(values, "avg_power_w")
        else:
            row["energy_j"] = None
        row["cluster_read_mbps"], row["cluster_write_mbps"] = self._peak_sums(start, end)
        moved = {label: (t["read_sectors"] + t["write_sectors"]) * SECTOR_BYTES / MB for label, t in totals.items()}
        nodes = [figures(m.label, per_node[m.label], dict(m.node.limits)) for m in self.members]
        named = slowest(nodes, moved)
        row["node_spread_pct"] = named[1] if named else None
        return row, named

    def grid(self, start: float, end: float, keys: tuple[str, ...]) -> dict[int, dict[str, dict[str, float]]]:
        """Each node's rates on one time grid of the interval: bin -> node label -> key -> the node's mean
        over its intervals whose middle falls in the bin (nodes sample at their own phases)."""
        collected: dict[int, dict[str, dict[str, list[float]]]] = {}
        for m in self.members:
            for middle, rates in window_intervals(
                m.collector.points(), self.node_time(m.label, start), self.node_time(m.label, end), self.interval
            ):
                node = collected.setdefault(int((middle - start) // self.interval), {}).setdefault(m.label, {})
                for key in keys:
                    if rates.get(key) is not None:
                        node.setdefault(key, []).append(rates[key] or 0.0)
        return {
            index: {label: {key: sum(v) / len(v) for key, v in values.items()} for label, values in nodes.items()}
            for index, nodes in collected.items()
        }

    def _peak_sums(self, start: float, end: float) -> tuple[float | None, float | None]:
        """The cluster's read and write throughput: the peak of the nodes' summed MB/s, each node's intervals
        on its own times, averaged over the same span as a node's maximum (window.peak_rate)."""
        series = [
            window_series(
                m.collector.points(), self.node_time(m.label, start), self.node_time(m.label, end), self.interval
            )
            for m in self.members
        ]
        return peak_rate(series, "read_mbps"), peak_rate(series, "write_mbps")

    def gaps(self, origin: float) -> list[dict[str, Any]]:
        """Every node's telemetry gaps, times relative to ``origin`` (the series' start)."""
        return [
            {
                "node": m.label,
                "name": m.node.name,
                "from_s": round(g["from"] - origin, 3),
                "to_s": round(g["to"] - origin, 3),
                "error": g["error"],
            }
            for m in self.members
            for g in m.collector.gaps()
        ]

    def label_for_host(self, host: str) -> str | None:
        """The label of the node an executor host (address or name) belongs to."""
        return next((m.label for m in self.members if host in (m.node.host, m.node.name)), None)

    def journal_to(self, directory: Path) -> None:
        """Each scraped node's ticks appended to ``telemetry-<node>.csv`` as they come (a run killed outright
        keeps them)."""
        for m in self.members:
            if isinstance(m.collector, Collector):
                m.collector.journal_to(directory / f"telemetry-{m.label}.csv")

    def describe(self) -> list[dict[str, Any]]:
        return [{**m.node.describe(), "label": m.label, "devices": m.collector.devices} for m in self.members]


def _present(values: list[dict[str, float | None]], key: str) -> list[float]:
    return [v for row in values if (v := row.get(key)) is not None]


def _max(values: list[dict[str, float | None]], key: str) -> float | None:
    present = _present(values, key)
    return max(present) if present else None


def _sum(values: list[dict[str, float | None]], key: str) -> float | None:
    present = _present(values, key)
    return sum(present) if present else None


def _mean(values: list[dict[str, float | None]], key: str) -> float | None:
    present = _present(values, key)
    return sum(present) / len(present) if present else None
