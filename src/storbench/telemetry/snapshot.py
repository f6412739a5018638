"""One instant of a node's raw counters, as the local collector and a node_exporter scrape both take it: the
record every window computation reads."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from storbench.telemetry.procfs import CpuCounters, DiskCounters, NetCounters


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Raw counters at one instant; None where the host does not expose them."""

    time: float  # time.monotonic()
    disks: dict[str, DiskCounters]  # measured devices only
    cpu: CpuCounters | None
    net: dict[str, NetCounters] | None  # per interface, loopback included
    memory: tuple[int, int] | None  # (MemTotal, MemAvailable) bytes
    energy_uj: int | None  # cumulative RAPL package energy since the collector started
    # a node_exporter's pressure stall totals (psi_cpu_us, psi_io_us, psi_memory_us) and dirty_bytes (Dirty +
    # Writeback), for the noise sentinel's figures; None read locally (the sentinel reads this machine itself)
    noise: dict[str, int | None] | None = None


def _between(a: int | None, b: int | None, share: float) -> int | None:
    return None if a is None or b is None else round(a + (b - a) * share)


def _counters_between(a: Any, b: Any, share: float) -> Any:
    """A counters dataclass ``share`` of the way from ``a`` to ``b``, field by field (None where either lacks it)."""
    return type(a)(**{f.name: _between(getattr(a, f.name), getattr(b, f.name), share) for f in fields(a)})


def interpolate(a: Snapshot, b: Snapshot, when: float) -> Snapshot:
    """The counters at ``when`` between snapshots ``a`` and ``b``, as if they moved evenly between them: what a
    window edge that falls between two scrapes (a Prometheus source's) reads, instead of widening the window
    to the scrapes outside it. Devices and interfaces in one snapshot only are left out."""
    share = (when - a.time) / (b.time - a.time) if b.time > a.time else 0.0
    cpu = _counters_between(a.cpu, b.cpu, share) if a.cpu and b.cpu else None
    disks = {name: _counters_between(a.disks[name], b.disks[name], share) for name in a.disks.keys() & b.disks.keys()}
    net = (
        {name: _counters_between(a.net[name], b.net[name], share) for name in a.net.keys() & b.net.keys()}
        if a.net is not None and b.net is not None
        else None
    )
    noise = (
        {key: _between(a.noise.get(key), b.noise.get(key), share) for key in a.noise}
        if a.noise is not None and b.noise is not None
        else None
    )
    return Snapshot(
        time=when,
        disks=disks,
        cpu=cpu,
        net=net,
        memory=a.memory if share < 0.5 else b.memory,  # a level, not a counter: the nearer one
        energy_uj=_between(a.energy_uj, b.energy_uj, share),
        noise=noise,
    )
