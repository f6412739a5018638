"""One instant of a node's raw counters, as the local collector and a node_exporter scrape both take it: the
record every window computation reads."""

from __future__ import annotations

from dataclasses import dataclass

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
