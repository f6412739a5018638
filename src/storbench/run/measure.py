"""What a run measures with: this machine alone or a cluster's nodes (their telemetry source), and power.

The nodes come from ``--nodes``/``--node``, else from the storbench service the engine options point at
(an engine's ``service_nodes``: a cluster storbench started), else from the target's own storbench service.
Every source is checked to answer before anything is written: an unreachable exporter or BMC is one line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from storbench.engines.base import HOST_LABEL
from storbench.engines.lifecycle import RunEngines, runs_elsewhere, service_nodes
from storbench.errors import InputError
from storbench.results.model import Sample
from storbench.results.store import SERIES, RunWriter
from storbench.run.options import RunOptions
from storbench.telemetry import Collector
from storbench.telemetry.cluster import ClusterTelemetry, open_cluster
from storbench.telemetry.devices import devices_for_path
from storbench.telemetry.nodes import Cluster, cluster_from_specs, load_nodes
from storbench.telemetry.power import NodePower, open_power
from storbench.telemetry.procfs import EnergyMeter
from storbench.telemetry.run import HostTelemetry, NodesTelemetry, RunTelemetry
from storbench.telemetry.sentinel import NoiseSentinel


def telemetry_source(options: RunOptions, cluster: Cluster | None) -> str:
    """--telemetry, or node_exporter when nodes are given (prometheus when the nodes file names one)."""
    if options.telemetry:
        return options.telemetry
    if cluster is None:  # --nodes and --node always give a cluster
        return "local"
    return "prometheus" if (cluster.prometheus or options.prometheus) else "node_exporter"


def nodes_to_measure(options: RunOptions, home: Path, target_nodes: Path | None) -> Cluster | None:
    """The cluster's nodes (None: this machine alone)."""
    if options.nodes and options.node_specs:
        raise InputError("--nodes and --node: give the nodes one way, not both")
    if options.nodes:
        return load_nodes(options.nodes)
    if options.node_specs:
        return cluster_from_specs(options.node_specs)
    if service := service_nodes(options.engine_options, home):
        nodes_file, service_name = service
        return replace(load_nodes(nodes_file), source=f"{nodes_file} ({service_name})")
    if target_nodes:
        return replace(load_nodes(target_nodes), source=f"{target_nodes} (the target's storbench service)")
    return None


@dataclass
class MeasuredNodes:
    telemetry: ClusterTelemetry
    source: str  # node_exporter or prometheus
    nodes_from: str  # where the nodes were named (a nodes file, --node, a storbench service)


def open_nodes(
    options: RunOptions, home: Path, devices: list[str], warn: Callable[[str], None], target_nodes: Path | None
) -> MeasuredNodes | None:
    """The nodes to measure, opened and checked to answer; None: this machine alone."""
    cluster = nodes_to_measure(options, home, target_nodes)
    source = telemetry_source(options, cluster)
    if cluster is None:
        if source != "local":
            raise InputError(f"--telemetry {source}: needs the cluster's nodes (--nodes FILE or --node ...)")
        elsewhere = runs_elsewhere(options.engine_options)
        if elsewhere:
            warn(
                f"telemetry measures only this machine (the driver), not the nodes of {elsewhere}: "
                f"pass --nodes to measure the cluster's nodes"
            )
        return None
    if options.prometheus:
        cluster = replace(cluster, prometheus=options.prometheus)
    if options.power:
        raise InputError(
            f"--power: with nodes ({cluster.source}), give each node's source as its power: key in a nodes file"
        )
    _refuse_needless_insecure(options, [node.power for node in cluster.nodes], f"no node of {cluster.source} has one")
    return MeasuredNodes(
        open_cluster(cluster, source, options.interval, devices, options.power_insecure), source, cluster.source
    )


def _refuse_needless_insecure(options: RunOptions, specs: list[str | None], none: str) -> None:
    """--power-insecure concerns a Redfish BMC's certificate only: without one it would be silently ignored."""
    if options.power_insecure and not any((spec or "").strip().startswith("redfish:") for spec in specs):
        raise InputError(
            f"--power-insecure: applies to a Redfish power source (--power redfish:URL, or a node's "
            f"power: redfish:URL in a nodes file); {none}"
        )


def open_local_power(options: RunOptions) -> NodePower | None:
    """This machine's power source (--power, else RAPL where readable)."""
    _refuse_needless_insecure(
        options, [options.power], f"--power is {options.power}" if options.power else "no --power was given"
    )
    return open_power(
        options.power,
        "--power",
        options.interval,
        local=True,
        has_rapl=EnergyMeter().available,
        snapshots=list,
        insecure=options.power_insecure,
    )


def own_roots(options: RunOptions) -> set[int]:
    """The processes whose trees are the run's own: this one, and the experiment's when the run is one
    configuration of it in a worker (the other configurations' workers and engines are the experiment's load,
    met by every configuration alike, not a neighbour's)."""
    return {os.getpid()} | ({options.experiment_pid} if options.experiment_pid else set())


def run_telemetry(
    options: RunOptions,
    cluster: ClusterTelemetry | None,
    engines: RunEngines,
    devices: list[str],
    writer: RunWriter,
    power: NodePower | None,
) -> RunTelemetry:
    if cluster is not None:
        cluster.journal_to(writer.path)
        return NodesTelemetry(cluster, services=Path(writer.store.home) / "services", roots=own_roots(options))
    # Engine scratch (shuffle and spill) on another device than the target's: measured too, reported apart
    # (paper 001).
    shuffle = [] if options.devices else scratch_only_devices(engines.scratch_dirs(), devices)
    writer.record("config", shuffle_devices=shuffle)
    collector = Collector(devices + shuffle, interval=options.interval, journal=writer.path / SERIES)
    if power is not None and power.snapshots is not None:
        power.snapshots = collector.points  # the RAPL counters the collector reads are rapl's readings
    # the run's own processes: this one's tree and those of storbench's services under its results home
    sentinel = NoiseSentinel(roots=own_roots(options), services=Path(writer.store.home) / "services")
    return HostTelemetry(collector, devices, shuffle, options.interval, power, sentinel)


def node_labelled(sample: Sample, cluster: ClusterTelemetry) -> Sample:
    """An engine's per-host sample labelled with the node of that host, where a node has it."""
    host = sample.labels.get(HOST_LABEL)
    label = cluster.label_for_host(host) if host else None
    if label is None:
        return sample
    labels = {k: v for k, v in sample.labels.items() if k != HOST_LABEL}
    return replace(sample, labels={**labels, "node": label})


def scratch_only_devices(scratch_dirs: list[str], target_devices: list[str]) -> list[str]:
    """The devices behind the engines' scratch (shuffle/spill) directories that the target does not use."""
    found = [d for path in scratch_dirs for d in devices_for_path(path).devices]
    return [d for d in dict.fromkeys(found) if d not in target_devices]
