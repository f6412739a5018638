"""Host counters from /proc (disks, CPU, network, memory) and RAPL energy from /sys.

``parse_*`` functions take file text, so golden snapshots can be tested without a
live machine; ``read_*`` functions read one file once. Everything returned is a raw,
monotonically increasing counter: rates are computed later from two snapshots.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

SECTOR_BYTES = 512  # /proc/diskstats counts 512-byte sectors whatever the device's block size


@dataclass(frozen=True, slots=True)
class DiskCounters:
    """One /proc/diskstats line (Documentation/admin-guide/iostats.rst).

    14 fields before Linux 4.18, 18 with discards (4.18+), 20 with flushes (5.5+);
    the fields a kernel does not report stay None.
    """

    reads: int
    reads_merged: int
    read_sectors: int
    read_ms: int
    writes: int
    writes_merged: int
    write_sectors: int
    write_ms: int
    in_flight: int
    io_ticks: int  # ms the device had I/O in flight: the basis of %util
    time_in_queue: int
    discards: int | None = None
    discards_merged: int | None = None
    discard_sectors: int | None = None
    discard_ms: int | None = None
    flushes: int | None = None
    flush_ms: int | None = None


@dataclass(frozen=True, slots=True)
class CpuCounters:
    """The aggregate ``cpu`` line of /proc/stat, in USER_HZ ticks.

    guest and guest_nice are already counted in user and nice, so they are left out
    of ``total`` (as top and iostat do).
    """

    user: int
    nice: int
    system: int
    idle: int
    iowait: int
    irq: int
    softirq: int
    steal: int

    @property
    def total(self) -> int:
        return self.user + self.nice + self.system + self.idle + self.iowait + self.irq + self.softirq + self.steal

    @property
    def busy(self) -> int:
        return self.total - self.idle - self.iowait


@dataclass(frozen=True, slots=True)
class NetCounters:
    rx_bytes: int
    tx_bytes: int


def parse_diskstats(text: str, only: frozenset[str] | set[str] | None = None) -> dict[str, DiskCounters]:
    """Counters per device name; ``only`` keeps just the measured devices (and skips parsing the rest)."""
    disks: dict[str, DiskCounters] = {}
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 14 or (only is not None and fields[2] not in only):
            continue
        disks[fields[2]] = DiskCounters(*(int(value) for value in fields[3:20]))
    return disks


def parse_stat(text: str) -> CpuCounters:
    """The aggregate ``cpu`` line; kernels before 2.6.11 lack steal, which then counts as 0."""
    for line in text.splitlines():
        if line.startswith("cpu "):
            values = [int(value) for value in line.split()[1:9]]
            return CpuCounters(*values, *[0] * (8 - len(values)))
    raise ValueError("/proc/stat: no aggregate 'cpu' line")


def parse_net_dev(text: str) -> dict[str, NetCounters]:
    """Bytes received and sent per interface (the two header lines are skipped)."""
    interfaces: dict[str, NetCounters] = {}
    for line in text.splitlines()[2:]:
        name, sep, rest = line.partition(":")
        fields = rest.split()
        if sep and len(fields) >= 9:
            interfaces[name.strip()] = NetCounters(int(fields[0]), int(fields[8]))
    return interfaces


def parse_meminfo(text: str, until: tuple[str, ...] = ()) -> dict[str, int]:
    """/proc/meminfo entries in bytes (``kB`` values are KiB; HugePages_* counts stay counts).

    With ``until``, parsing stops once those keys are found: the collector needs two
    of some fifty lines, and they come first.
    """
    info: dict[str, int] = {}
    for line in text.splitlines():
        key, sep, rest = line.partition(":")
        fields = rest.split()
        if sep and fields:
            info[key] = int(fields[0]) * (1024 if fields[1:2] == ["kB"] else 1)
            if until and all(wanted in info for wanted in until):
                break
    return info


def non_loopback_total(interfaces: dict[str, NetCounters]) -> NetCounters:
    """All traffic except ``lo``, which is local and never touches a network."""
    rx = sum(c.rx_bytes for name, c in interfaces.items() if name != "lo")
    tx = sum(c.tx_bytes for name, c in interfaces.items() if name != "lo")
    return NetCounters(rx, tx)


def _read(path: Path) -> str | None:
    try:
        with open(path) as handle:
            return handle.read()
    except OSError:
        return None


class CounterFiles:
    """/proc files kept open and re-read with pread at offset 0.

    procfs regenerates a file's text on every read from offset 0, so one open per
    file is enough; this halves the cost of a sample against open/read/close.
    """

    CHUNK = 65536

    def __init__(self, proc_root: str = "/proc"):
        self.proc_root = proc_root
        self._fds: dict[str, int] = {}

    def read(self, relative: str) -> str | None:
        """The file's text now, or None if it cannot be read."""
        try:
            fd = self._fds.get(relative)
            if fd is None:
                fd = self._fds[relative] = os.open(Path(self.proc_root, relative), os.O_RDONLY)
            chunks = [os.pread(fd, self.CHUNK, 0)]
            while len(chunks[-1]) == self.CHUNK:
                chunks.append(os.pread(fd, self.CHUNK, self.CHUNK * len(chunks)))
            return b"".join(chunks).decode()
        except OSError:
            return None

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def __del__(self) -> None:
        self.close()


def read_diskstats(files: CounterFiles, only: frozenset[str]) -> dict[str, DiskCounters]:
    text = files.read("diskstats")
    return parse_diskstats(text, only) if text is not None else {}


def read_cpu(files: CounterFiles) -> CpuCounters | None:
    text = files.read("stat")
    try:
        return parse_stat(text.partition("\n")[0]) if text is not None else None  # the aggregate line is first
    except ValueError:
        return None


def read_net(files: CounterFiles) -> dict[str, NetCounters] | None:
    """Per interface, loopback included (a local cluster's traffic crosses ``lo``)."""
    text = files.read("net/dev")
    return parse_net_dev(text) if text is not None else None


def read_memory(files: CounterFiles) -> tuple[int, int] | None:
    """(MemTotal, MemAvailable) in bytes; None on kernels without MemAvailable (< 3.14)."""
    text = files.read("meminfo")
    info = parse_meminfo(text, until=("MemTotal", "MemAvailable")) if text is not None else {}
    if "MemTotal" in info and "MemAvailable" in info:
        return info["MemTotal"], info["MemAvailable"]
    return None


class EnergyMeter:
    """Cumulative RAPL package energy in µJ, with counter wraparound undone.

    Only top-level zones (``intel-rapl:N``, one per package) are summed: their
    sub-zones (core, uncore, dram) are parts of, or beside, the package and would
    double count. Reading the counters usually needs root; when none can be read,
    :meth:`read` returns None and energy is reported as not measured.
    """

    def __init__(self, sys_root: str = "/sys", zone: str = "package"):
        """``zone``: ``package`` (the top-level zones) or ``dram`` (the sub-zones whose name is ``dram``)."""
        self._zones: list[tuple[Path, int]] = []
        self.zone_names: list[str] = []
        for path in sorted(Path(sys_root, "class", "powercap").glob("intel-rapl:*")):
            top = path.name.count(":") == 1
            if zone == "package" and not top:
                continue
            if zone == "dram" and (top or (_read(path / "name") or "").strip() != "dram"):
                continue
            max_range = _read(path / "max_energy_range_uj")
            if max_range is not None and _read(path / "energy_uj") is not None:
                self._zones.append((path / "energy_uj", int(max_range)))
                self.zone_names.append(f"{path.name}:{(_read(path / 'name') or '').strip()}")
        self._last: list[int | None] = [None] * len(self._zones)
        self._total = 0

    @property
    def available(self) -> bool:
        return bool(self._zones)

    def read(self) -> int | None:
        if not self._zones:
            return None
        for index, (path, max_range) in enumerate(self._zones):
            text = _read(path)
            if text is None:
                return None
            raw, last = int(text), self._last[index]
            if last is not None:
                self._total += raw - last if raw >= last else raw + max_range - last
            self._last[index] = raw
        return self._total
