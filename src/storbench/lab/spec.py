"""What a lab cluster is asked to be: how many hosts and each one's limits, checked before anything is made."""

from __future__ import annotations

from dataclasses import dataclass

from storbench.errors import InputError

MAX_NODES = 16
DISK_MB_DEFAULT = 512  # each host's disk: a sparse file, written only as far as the runs write


@dataclass(frozen=True)
class NodeLimits:
    """One host's limits (None: unlimited). Rates in MB/s (10^6 bytes) and Mbit/s, as storbench reports them."""

    disk_write_mbps: float | None = None
    disk_read_mbps: float | None = None
    link_mbit: float | None = None
    link_delay_ms: float | None = None

    def describe(self) -> dict[str, float]:
        """The limits that are set, for the nodes file and the reports."""
        return {k: v for k, v in vars(self).items() if v is not None}


@dataclass(frozen=True)
class ClusterSpec:
    nodes: int
    limits: tuple[NodeLimits, ...]
    disk_mb: int = DISK_MB_DEFAULT

    @property
    def throttles_disks(self) -> bool:
        return any(lim.disk_write_mbps or lim.disk_read_mbps for lim in self.limits)

    @property
    def shapes_links(self) -> bool:
        return any(lim.link_mbit or lim.link_delay_ms for lim in self.limits)


def per_node(text: str | None, nodes: int, flag: str) -> list[float | None]:
    """``--flag 20,40,80`` (one value per host) or ``--flag 50`` (every host); empty entries mean unlimited."""
    if text is None:
        return [None] * nodes
    parts = [p.strip() for p in text.split(",")]
    if len(parts) == 1:
        parts *= nodes
    if len(parts) != nodes:
        raise InputError(f"{flag} {text}: {len(parts)} values for {nodes} nodes (give one, or one per node)")
    values: list[float | None] = []
    for part in parts:
        if part in ("", "-", "none"):
            values.append(None)
            continue
        try:
            value = float(part)
        except ValueError:
            raise InputError(
                f"{flag} {text}: {part!r} is not a number (allowed: positive numbers; empty or none for no limit)"
            )
        if not value > 0:
            raise InputError(f"{flag} {text}: {part} must be above 0 (empty or none for no limit)")
        values.append(value)
    return values


def build_spec(
    nodes: int,
    disk_write_mbps: str | None = None,
    disk_read_mbps: str | None = None,
    link_mbit: str | None = None,
    link_delay_ms: str | None = None,
    disk_mb: int = DISK_MB_DEFAULT,
) -> ClusterSpec:
    if not 1 <= nodes <= MAX_NODES:
        raise InputError(f"--nodes {nodes}: allowed 1 to {MAX_NODES}")
    if disk_mb < 64:
        raise InputError(f"--disk-mb {disk_mb}: each host's disk needs at least 64 MB")
    writes = per_node(disk_write_mbps, nodes, "--disk-write-mbps")
    reads = per_node(disk_read_mbps, nodes, "--disk-read-mbps")
    links = per_node(link_mbit, nodes, "--link-mbit")
    delays = per_node(link_delay_ms, nodes, "--link-delay-ms")
    limits = tuple(NodeLimits(*values) for values in zip(writes, reads, links, delays))
    return ClusterSpec(nodes, limits, disk_mb)
