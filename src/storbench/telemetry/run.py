"""What the runner asks of telemetry: start, mark windows, the samples of a window, the stored series.

``HostTelemetry`` measures this machine (the case N=1): the target's devices, and the
devices behind the engines' scratch directories reported apart. ``NodesTelemetry``
measures every node of a cluster: each window's metrics per node (labelled
``node=<role>-<k>``) and, unlabelled, across nodes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from storbench.results.model import Sample
from storbench.results.series import to_csv
from storbench.results.store import RunWriter
from storbench.telemetry.cluster import ClusterTelemetry
from storbench.telemetry.collector import Collector
from storbench.telemetry.metrics import METRICS
from storbench.telemetry.power import NodePower, PowerPoint
from storbench.telemetry.sentinel import METRICS as NOISE_METRICS
from storbench.telemetry.sentinel import NoiseSentinel, node_window
from storbench.telemetry.window import interface_max_mbps, latest_rates, only_devices, rate_rows, window_metrics

UNITS = {spec.name: spec.unit for spec in METRICS + NOISE_METRICS}
REUSE_S = 0.25  # the noise sentinel's reading at a window's end stands for the next one's start this long
SHUFFLE_METRICS = ("max_read_mbps", "max_write_mbps", "max_util_pct", "read_mb", "written_mb")


class Window(Protocol):
    start: float
    end: float


class RunTelemetry(Protocol):
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def mark(self) -> float: ...
    def samples(self, workload: str, window: Window, repetition: int) -> list[Sample]: ...
    def write_series(self, writer: RunWriter, windows: list[dict[str, Any]]) -> None: ...
    def latest(self) -> dict[str, dict[str, float | None]]: ...
    def idle(self, start: float, end: float) -> dict[str | None, float | None]: ...


def _power_csv(points: list[PowerPoint], origin: float) -> str:
    return to_csv(
        [{"t": round(p.time - origin, 4), "power_w": p.watts, "energy_j": round(p.joules, 4)} for p in points]
    )


def _power_gaps(power: NodePower, origin: float) -> list[dict[str, Any]]:
    return [
        {"from_s": round(g["from"] - origin, 3), "to_s": round(g["to"] - origin, 3), "error": g["error"]}
        for g in power.gaps()
    ]


def _metric_samples(
    workload: str,
    values: dict[str, float | None],
    repetition: int,
    labels: dict[str, str] | None = None,
    only: tuple[str, ...] | None = None,
) -> list[Sample]:
    return [
        Sample(workload, metric, value, UNITS.get(metric, ""), repetition, dict(labels or {}))
        for metric, value in values.items()
        if only is None or metric in only
    ]


def _relative(windows: list[dict[str, Any]], origin: float) -> None:
    for window in windows:
        window["t0"] -= origin
        window["t1"] -= origin


class HostTelemetry:
    def __init__(
        self,
        collector: Collector,
        devices: list[str],
        shuffle_devices: list[str],
        interval: float,
        power: NodePower | None = None,
        sentinel: NoiseSentinel | None = None,
    ):
        """``sentinel``: what else the machine did in each window (the ``noise_*`` samples), read at marks."""
        self.collector, self.devices, self.shuffle_devices, self.interval = (
            collector,
            devices,
            shuffle_devices,
            interval,
        )
        self.power = power or NodePower({"source": "none", "why": "not configured"})
        self.sentinel = sentinel
        self._opening = True  # marks come in pairs: a window's start, then its end

    def start(self) -> None:
        self.collector.start()
        self.power.start()

    def stop(self) -> None:
        self.collector.stop()
        self.power.stop()
        if self.sentinel is not None:
            self.sentinel.close()

    def mark(self) -> float:
        # The sentinel reads before a window's start mark and after its end mark: its cost stays outside. A
        # window that opens within REUSE_S of the last one's end starts from that reading.
        opening, self._opening = self._opening, not self._opening
        taken = self.sentinel.read(reuse=REUSE_S) if self.sentinel is not None and opening else None
        when = self.collector.mark()
        self.power.mark()
        if self.sentinel is not None:
            self.sentinel.mark(when, taken)
        return when

    def idle(self, start: float, end: float) -> dict[str | None, float | None]:
        self.power.idle_w = self.power.window(start, end)["avg_power_w"]
        return {None: self.power.idle_w}

    def samples(self, workload: str, window: Window, repetition: int) -> list[Sample]:
        """The paper's device and host metrics over the target's devices, the shuffle devices' own, and the
        busy network interfaces."""
        points = self.collector.points()
        target_points = only_devices(points, self.devices) if self.shuffle_devices else points
        values = window_metrics(target_points, window.start, window.end, self.interval)
        if self.power.measured:
            values.update(self.power.window(window.start, window.end))
        else:
            values["energy_j"] = None  # no source: n/a (the manifest's power says why)
        samples = _metric_samples(workload, values, repetition)
        if self.shuffle_devices:
            shuffle = window_metrics(
                only_devices(points, self.shuffle_devices), window.start, window.end, self.interval
            )
            samples += _metric_samples(workload, shuffle, repetition, {"devices": "shuffle"}, SHUFFLE_METRICS)
        for interface, value in interface_max_mbps(points, window.start, window.end, self.interval).items():
            if value > 0:  # idle interfaces would only add empty rows to every report
                samples.append(
                    Sample(workload, "max_net_mbps", value, "MB/s", repetition, labels={"interface": interface})
                )
        if self.sentinel is not None:
            samples += _metric_samples(workload, self.sentinel.window(window.start, window.end), repetition)
        return samples

    def latest(self) -> dict[str, dict[str, float | None]]:
        """The last sampling interval's rates, under the node label "" (this machine), for a live view."""
        return {"": latest_rates(self.collector.points(), self.interval)}

    def write_series(self, writer: RunWriter, windows: list[dict[str, Any]]) -> None:
        """Telemetry over the whole run, with each timed window on its time axis."""
        points = self.collector.points()
        _relative(windows, points[0].time if points else 0.0)
        origin = points[0].time if points else 0.0
        writer.write_series(to_csv(self.collector.rates()), windows)
        power = {**self.power.info, "gaps": _power_gaps(self.power, origin), "idle_w": self.power.idle_w}
        if self.power.measured:
            writer.write_text("power.csv", _power_csv(self.power.points(), origin))
        writer.update_manifest(
            collector_cpu_s=round(self.collector.cpu_seconds, 4),
            power=power,
            power_cpu_s=round(self.power.cpu_seconds, 4),
            **({"sentinel_cpu_s": round(self.sentinel.cpu_seconds, 4)} if self.sentinel else {}),
        )


class NodesTelemetry:
    def __init__(self, cluster: ClusterTelemetry, services: Path | None = None, roots: set[int] | None = None):
        """``services``: the results home's services directory, whose processes are the run's own on this
        machine's node (see :class:`~storbench.telemetry.sentinel.NoiseSentinel`)."""
        self.cluster = cluster
        self.slowest: list[dict[str, Any]] = []  # per window: the node that moved the least
        # The noise sentinel: whole on this machine's node; on the others, what their node_exporter shows
        # (steal, pressure, dirty memory; never other processes' CPU or I/O: it shows no processes).
        self.sentinels = {
            m.label: NoiseSentinel(roots=roots, services=services) for m in cluster.members if m.node.is_local
        }
        self._opening = True

    def start(self) -> None:
        self.cluster.start()
        self._origin = self.cluster.mark()

    def stop(self) -> None:
        self.cluster.stop()
        for sentinel in self.sentinels.values():
            sentinel.close()

    def mark(self) -> float:
        opening, self._opening = self._opening, not self._opening  # as HostTelemetry: the readings outside
        taken = {label: s.read(reuse=REUSE_S) for label, s in self.sentinels.items()} if opening else {}
        when = self.cluster.mark()
        for label, sentinel in self.sentinels.items():
            sentinel.mark(self.cluster.node_time(label, when), taken.get(label))
        return when

    def idle(self, start: float, end: float) -> dict[str | None, float | None]:
        idle: dict[str | None, float | None] = {}
        for member in self.cluster.members:
            power = member.power
            power.idle_w = power.window(
                self.cluster.power_time(member.label, start), self.cluster.power_time(member.label, end)
            )["avg_power_w"]
            idle[member.label] = power.idle_w
        why = self.cluster.power_why()
        idle[None] = sum(v for v in idle.values() if v is not None) if why is None and idle else None
        return idle

    def samples(self, workload: str, window: Window, repetition: int) -> list[Sample]:
        per_node = self.cluster.node_metrics(window.start, window.end)
        samples = []
        for member in self.cluster.members:
            label = member.label
            start, end = self.cluster.node_time(label, window.start), self.cluster.node_time(label, window.end)
            sentinel = self.sentinels.get(label)
            noise = (
                sentinel.window(start, end)
                if sentinel is not None
                else node_window(member.collector.points(), start, end)
            )
            samples += _metric_samples(workload, {**per_node[label], **noise}, repetition, {"node": label})
        across, slowest = self.cluster.cluster_metrics(window.start, window.end, per_node)
        samples += _metric_samples(workload, across, repetition)
        if slowest is not None:
            node, behind, held = slowest
            self.slowest.append(
                {
                    "workload": workload,
                    "repetition": repetition,
                    "node": node,
                    "spread_pct": round(behind, 2),
                    **({"held_by": held} if held else {}),
                }
            )
        return samples

    def latest(self) -> dict[str, dict[str, float | None]]:
        """Each polled node's last sampling interval's rates, by node label (a Prometheus source's nodes are
        left out: reading them is a query to that Prometheus, which holds them anyway)."""
        return {
            m.label: latest_rates(m.collector.points(), self.cluster.interval)
            for m in self.cluster.members
            if isinstance(m.collector, Collector)
        }

    def write_series(self, writer: RunWriter, windows: list[dict[str, Any]]) -> None:
        """Each node's series (``telemetry-<node>.csv``) and, in telemetry.csv, the cluster's on one time grid:
        summed MB/s, mean CPU, busiest device, and each node's MB/s beside."""
        origin = getattr(self, "_origin", 0.0)
        _relative(windows, origin)
        for member in self.cluster.members:
            points = member.collector.points()
            rows = rate_rows(points, self.cluster.interval)
            shift = (points[0].time - origin) if points else 0.0
            writer.write_text(
                f"telemetry-{member.label}.csv", to_csv([{**row, "t": round(row["t"] + shift, 4)} for row in rows])
            )
        writer.write_series(to_csv(self._grid(origin)), windows)
        power: dict[str, Any] = {"nodes": {}, "cluster_why": self.cluster.power_why()}
        for member in self.cluster.members:
            power["nodes"][member.label] = {
                **member.power.info,
                "idle_w": member.power.idle_w,
                "gaps": _power_gaps(member.power, origin),
            }
            if member.power.measured:
                writer.write_text(f"power-{member.label}.csv", _power_csv(member.power.points(), origin))
        writer.update_manifest(
            collector_cpu_s=round(self.cluster.cpu_seconds, 4),
            telemetry_gaps=self.cluster.gaps(origin),
            slowest_nodes=self.slowest,
            power=power,
            power_cpu_s=round(sum(m.power.cpu_seconds for m in self.cluster.members), 4),
        )

    def _grid(self, origin: float) -> list[dict[str, Any]]:
        keys = ("read_mbps", "write_mbps", "cpu_pct", "util_pct", "net_mbps")
        rows = []
        for index, nodes in sorted(self.cluster.grid(origin, float("inf"), keys).items()):
            row: dict[str, Any] = {"t": round((index + 1) * self.cluster.interval, 4)}
            for key, combine in (
                ("read_mbps", sum),
                ("write_mbps", sum),
                ("util_pct", max),
                ("net_mbps", sum),
                ("cpu_pct", lambda v: sum(v) / len(v)),
            ):
                values = [node[key] for node in nodes.values() if key in node]
                if values:
                    row[key] = round(combine(values), 4)
            for label, node in nodes.items():
                row.update({f"{label}.{key}": round(value, 4) for key, value in node.items()})
            rows.append(row)
        return rows
