"""A node's counters from its Prometheus node_exporter, as the same Snapshot the local collector takes.

node_exporter serves /proc/diskstats, /proc/stat, /proc/net/dev and meminfo as counters in
seconds and bytes; turned back into sectors, milliseconds and ticks they feed the same
window arithmetic as the local collector (iostat's formulas), so a node read remotely and
one read locally give the same metrics. The exposition text is parsed with the maintained
``prometheus-client`` parser; only the families storbench uses are handed to it. Pressure stall totals
and Dirty + Writeback memory ride along in ``Snapshot.noise`` for the noise sentinel's node figures.
"""

from __future__ import annotations

import http.client
import re
import time
from collections import defaultdict
from typing import Any, Iterable
from urllib.parse import urlsplit

from prometheus_client.parser import text_string_to_metric_families

from storbench.telemetry.snapshot import Snapshot
from storbench.telemetry.procfs import SECTOR_BYTES, CpuCounters, DiskCounters, NetCounters

# node_exporter's collectors storbench reads; asked for by name so a scrape costs the exporter little
# "time": node_time_seconds, the node's clock when it collected: what each scrape is timed by (ExporterReader.read)
COLLECTORS = ("cpu", "diskstats", "meminfo", "netdev", "rapl", "pressure", "time")
FINGERPRINT_COLLECTORS = COLLECTORS + ("uname",)
# DiskCounters field -> (node_exporter counter, scale to /proc/diskstats units)
DISK_FIELDS = {
    "reads": ("node_disk_reads_completed_total", 1),
    "reads_merged": ("node_disk_reads_merged_total", 1),
    "read_sectors": ("node_disk_read_bytes_total", 1 / SECTOR_BYTES),
    "read_ms": ("node_disk_read_time_seconds_total", 1000),
    "writes": ("node_disk_writes_completed_total", 1),
    "writes_merged": ("node_disk_writes_merged_total", 1),
    "write_sectors": ("node_disk_written_bytes_total", 1 / SECTOR_BYTES),
    "write_ms": ("node_disk_write_time_seconds_total", 1000),
    "in_flight": ("node_disk_io_now", 1),
    "io_ticks": ("node_disk_io_time_seconds_total", 1000),
    "time_in_queue": ("node_disk_io_time_weighted_seconds_total", 1000),
}
CPU_MODES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
USER_HZ = 100  # node_cpu_seconds_total is /proc/stat's ticks divided by USER_HZ
WANTED = re.compile(
    r"^(node_disk_|node_cpu_seconds_total|node_network_(receive|transmit)_bytes_total|"
    r"node_memory_(Mem(Total|Available)|Dirty|Writeback)_bytes|node_rapl_|node_uname_info|"
    r"node_pressure_(cpu|io|memory)_waiting_seconds_total|node_time_seconds\b)"
)
PRESSURE = {
    "psi_cpu_us": "node_pressure_cpu_waiting_seconds_total",  # "some": at least one task waited
    "psi_io_us": "node_pressure_io_waiting_seconds_total",
    "psi_memory_us": "node_pressure_memory_waiting_seconds_total",
}
# Disks a node's default "storage under test" leaves out: virtual devices and partitions
VIRTUAL = re.compile(r"^(loop|ram|zram|dm-|md|sr|fd|nbd|rbd)\d*|^((s|v|xv|h)d[a-z]+\d+|nvme\d+n\d+p\d+|mmcblk\d+p\d+)$")


class ExporterError(OSError):
    """The exporter could not be read (refused, timed out, not node_exporter's format)."""


def parse_exposition(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """The wanted samples of an exposition text: name -> [(labels, value)]."""
    lines = [line for line in text.splitlines() if WANTED.match(line)]
    samples: dict[str, list[tuple[dict[str, str], float]]] = defaultdict(list)
    for family in text_string_to_metric_families("\n".join(lines) + "\n"):
        for sample in family.samples:
            samples[sample.name].append((sample.labels, sample.value))
    return samples


def _by_label(samples: dict[str, list[tuple[dict[str, str], float]]], name: str, label: str) -> dict[str, float]:
    return {labels[label]: value for labels, value in samples.get(name, ()) if label in labels}


def disk_names(samples: dict[str, list[tuple[dict[str, str], float]]]) -> list[str]:
    return sorted(_by_label(samples, "node_disk_reads_completed_total", "device"))


def default_devices(names: Iterable[str]) -> list[str]:
    """Every non-virtual whole disk: what a node's storage under test is when its entry names none."""
    return [name for name in names if not VIRTUAL.match(name)]


def snapshot_from_samples(
    samples: dict[str, list[tuple[dict[str, str], float]]], devices: frozenset[str], taken: float
) -> Snapshot:
    per_field = {f: _by_label(samples, metric, "device") for f, (metric, _) in DISK_FIELDS.items()}
    disks = {}
    for device in devices:
        if device in per_field["reads"]:
            disks[device] = DiskCounters(
                **{f: round(per_field[f].get(device, 0.0) * scale) for f, (_, scale) in DISK_FIELDS.items()}
            )
    modes: dict[str, float] = defaultdict(float)
    for labels, value in samples.get("node_cpu_seconds_total", ()):
        modes[labels.get("mode", "")] += value
    cpu = CpuCounters(**{m: round(modes.get(m, 0.0) * USER_HZ) for m in CPU_MODES}) if modes else None
    rx = _by_label(samples, "node_network_receive_bytes_total", "device")
    tx = _by_label(samples, "node_network_transmit_bytes_total", "device")
    net = {name: NetCounters(round(rx[name]), round(tx.get(name, 0.0))) for name in rx} if rx else None
    total = samples.get("node_memory_MemTotal_bytes")
    available = samples.get("node_memory_MemAvailable_bytes")
    memory = (round(total[0][1]), round(available[0][1])) if total and available else None
    package = [value for labels, value in samples.get("node_rapl_package_joules_total", ())]
    energy_uj = round(sum(package) * 1e6) if package else None
    return Snapshot(
        time=taken, disks=disks, cpu=cpu, net=net, memory=memory, energy_uj=energy_uj, noise=_noise(samples)
    )


def _noise(samples: dict[str, list[tuple[dict[str, str], float]]]) -> dict[str, int | None] | None:
    """Pressure stall totals in µs and Dirty + Writeback bytes (the noise sentinel's node figures)."""
    noise: dict[str, int | None] = {
        key: round(found[0][1] * 1e6) if (found := samples.get(name)) else None for key, name in PRESSURE.items()
    }
    dirty, writeback = samples.get("node_memory_Dirty_bytes"), samples.get("node_memory_Writeback_bytes")
    noise["dirty_bytes"] = round(dirty[0][1] + writeback[0][1]) if dirty and writeback else None
    return noise if any(value is not None for value in noise.values()) else None


class ExporterReader:
    """Scrapes one node_exporter over a kept-alive HTTP connection."""

    def __init__(self, url: str, timeout: float = 5.0):
        parts = urlsplit(url)
        self.url = url
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if self._https else 80)
        self._path = parts.path or "/metrics"
        self._timeout = timeout
        self._filtered = True  # ask for COLLECTORS only, until the exporter refuses the filter
        self._connection: http.client.HTTPConnection | None = None
        self._node_to_local: float | None = None  # this machine's monotonic clock minus the node's

    def fetch(self, collectors: tuple[str, ...] = COLLECTORS) -> str:
        query = "&".join(f"collect[]={name}" for name in collectors) if self._filtered else ""
        try:
            status, body = self._get(f"{self._path}?{query}" if query else self._path)
            if status == 400 and query:  # a collector this exporter lacks (e.g. rapl disabled): ask for all
                self._filtered = False
                status, body = self._get(self._path)
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            raise ExporterError(f"{self.url}: {exc.__class__.__name__}: {exc}") from None
        if status != 200:
            raise ExporterError(f"{self.url}: HTTP {status}")
        return body

    def samples(self, collectors: tuple[str, ...] = COLLECTORS) -> dict[str, list[tuple[dict[str, str], float]]]:
        try:
            samples = parse_exposition(self.fetch(collectors))
        except ValueError as exc:
            raise ExporterError(f"{self.url}: not a Prometheus exposition ({exc})") from None
        if "node_cpu_seconds_total" not in samples and "node_disk_reads_completed_total" not in samples:
            raise ExporterError(f"{self.url}: no node_cpu/node_disk metrics (is this a node_exporter?)")
        return samples

    def read(self, devices: frozenset[str]) -> Snapshot:
        before = time.monotonic()
        samples = self.samples()
        after = time.monotonic()
        return snapshot_from_samples(samples, devices, self._when(samples, before, after))

    def _when(self, samples: dict, before: float, after: float) -> float:
        """When the node read its counters, on this machine's clock. Timed by the answer's arrival alone, a
        scrape is off by up to half its round trip, which a loaded machine stretches: a 1 s interval's rate
        moved 2.4% that way (issue 40). The node's own clock (node_time_seconds) stamps the moment it collected;
        its offset to this machine's clock is fixed at the first scrape (a constant offset moves no rate) and
        taken again when the node's clock steps (its stamp outside this scrape's round trip by over 0.5 s)."""
        middle = (before + after) / 2
        stamp = samples.get("node_time_seconds")
        if not stamp:
            return middle  # an exporter without the time collector
        node = stamp[0][1]
        if self._node_to_local is None or not before - 0.5 <= node + self._node_to_local <= after + 0.5:
            self._node_to_local = middle - node
        return node + self._node_to_local

    def _get(self, path: str) -> tuple[int, str]:
        if self._connection is None:
            kind = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            self._connection = kind(self._host, self._port, timeout=self._timeout)
        self._connection.request("GET", path, headers={"Accept": "text/plain"})
        response = self._connection.getresponse()
        return response.status, response.read().decode("utf-8", "replace")

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def fingerprint(samples: dict[str, list[tuple[dict[str, str], float]]]) -> dict[str, Any]:
    """What a node is, as its exporter tells: kernel, cores, memory, disks."""
    uname = samples.get("node_uname_info", [({}, 0.0)])[0][0]
    cpus = {labels.get("cpu") for labels, _ in samples.get("node_cpu_seconds_total", ())}
    total = samples.get("node_memory_MemTotal_bytes")
    return {
        "hostname": uname.get("nodename"),
        "kernel": uname.get("release"),
        "arch": uname.get("machine"),
        "cores": len(cpus) or None,
        "memory_gb": round(total[0][1] / 2**30, 1) if total else None,
        "disks": disk_names(samples),
    }
