"""Zoned block devices (SMR, ZNS; paper 004) and the storage stack under a target, as the manifest records them.

A disk's zoned model is ``queue/zoned`` in sysfs (``none``, ``host-aware``, ``host-managed``); its zone size
is ``queue/chunk_sectors`` × 512, and ``nr_zones``, ``max_open_zones`` and ``max_active_zones`` sit beside
it (0: no limit). sysfs has no zone capacity: it comes from the first zone of a BLKREPORTZONE ioctl, the
call ``blkzone report`` makes, when the device can be opened (None otherwise).

For a file-system target the stack is followed from the mount down to the disks: through partitions,
device-mapper and md (``slaves/``), a multi-device btrfs (``/sys/fs/btrfs/<fsid>/devices/``, whose
``features/zoned`` says the file system runs in zoned mode) and a multi-device f2fs, whose mount source is
the first (metadata) device and whose superblock lists every device (``mkfs.f2fs -c``; the superblock
can only be read where the device can be opened). Roots are parameters so tests can point them at a fake
tree (tests/data/telemetry/zoned).
"""

from __future__ import annotations

import fcntl
import os
import struct
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from storbench.telemetry.devices import _disks_under, _node_for_source, _read_attr, mount_of, parse_mountinfo

MODELS = ("none", "host-aware", "host-managed")

# <linux/blkzoned.h>: struct blk_zone_report (16 bytes) and struct blk_zone (64 bytes)
BLKREPORTZONE = (3 << 30) | (16 << 16) | (0x12 << 8) | 130  # _IOWR(0x12, 130, struct blk_zone_report)
REPORT_HEADER = struct.Struct("<QII")
ZONE = struct.Struct("<QQQBBBB4xQ24x")
REP_CAPACITY = 1  # BLK_ZONE_REP_CAPACITY: the capacity field is valid
F2FS_MAGIC, F2FS_SUPER_OFFSET, F2FS_DEVS, F2FS_DEV = 0xF2F52010, 1024, 2201, 68  # packed f2fs_super_block


@dataclass(frozen=True)
class Zone:
    start: int  # sectors of 512 bytes, as the kernel reports them
    length: int
    wp: int
    type: int  # 1 conventional, 2 sequential write required, 3 sequential write preferred
    cond: int  # 1 empty, 2/3 open, 4 closed, 0xe full, ...
    capacity: int


def parse_zone_report(buffer: bytes) -> list[Zone]:
    """The zones of a filled ``struct blk_zone_report``; a kernel without zone capacity reports the length."""
    _sector, count, flags = REPORT_HEADER.unpack_from(buffer)
    zones = []
    for index in range(count):
        start, length, wp, kind, cond, _non_seq, _reset, capacity = ZONE.unpack_from(
            buffer, REPORT_HEADER.size + index * ZONE.size
        )
        zones.append(Zone(start, length, wp, kind, cond, capacity if flags & REP_CAPACITY else length))
    return zones


def report_zones(device: str, sector: int = 0, count: int = 4096) -> list[Zone]:
    """Up to ``count`` zones of ``device`` from ``sector`` on (BLKREPORTZONE; OSError where refused)."""
    buffer = bytearray(REPORT_HEADER.size + count * ZONE.size)
    REPORT_HEADER.pack_into(buffer, 0, sector, count, 0)
    fd = os.open(device, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, BLKREPORTZONE, buffer, True)
    finally:
        os.close(fd)
    return parse_zone_report(bytes(buffer))


def all_zones(device: str, total_sectors: int) -> list[Zone]:
    """Every zone of ``device`` (reported 4096 at a time)."""
    zones: list[Zone] = []
    sector = 0
    while sector < total_sectors:
        batch = report_zones(device, sector)
        if not batch:
            break
        zones += batch
        sector = batch[-1].start + batch[-1].length
    return zones


@dataclass(frozen=True)
class ZonedDevice:
    name: str
    model: str  # none | host-aware | host-managed
    zone_size: int | None = None  # bytes
    zone_capacity: int | None = None  # bytes writable per zone (ZNS may be less than the size)
    nr_zones: int | None = None
    max_open_zones: int | None = None  # 0: no limit
    max_active_zones: int | None = None
    logical_block: int | None = None  # bytes; O_DIRECT must be a multiple of it
    role: str = ""  # "metadata" for f2fs's first device of several

    @property
    def zoned(self) -> bool:
        return self.model in ("host-aware", "host-managed")

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v not in (None, "")}

    def text(self) -> str:
        """ "nvme0n1 (host-managed: 32 zones of 64 MiB, capacity 48 MiB, max open 14, max active 14)"."""
        return f"{self.name} ({self.facts()})"

    def facts(self) -> str:
        """ "host-managed: 32 zones of 64 MiB, ...", "none" or "none, metadata"."""
        facts = [f"{self.nr_zones} zones of {size_text(self.zone_size)}" if self.nr_zones and self.zone_size else ""]
        if self.zone_capacity and self.zone_capacity != self.zone_size:
            facts.append(f"capacity {size_text(self.zone_capacity)}")
        for what, limit in (("open", self.max_open_zones), ("active", self.max_active_zones)):
            if limit:
                facts.append(f"max {what} {limit}")
        said = ", ".join(f for f in facts if f)
        model = f"{self.model}: {said}" if self.zoned and said else self.model
        return f"{model}, {self.role}" if self.role else model


def size_text(value: int | None) -> str:
    """Zone sizes in binary units, as the kernel and mkfs speak of them: 64 MiB, 2 GiB, 1077 MiB."""
    if not value:
        return "?"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value % size == 0:
            return f"{value // size} {unit}"
    return f"{value} B"


def _int(path: Path) -> int | None:
    text = _read_attr(path)
    return int(text) if text and text.isdigit() else None


def _disk_node(name: str, sys_root: str) -> Path | None:
    for node in (Path(sys_root, "class", "block", name), Path(sys_root, "block", name)):
        if node.exists():
            node = node.resolve()
            return node.parent if (node / "partition").exists() else node  # a partition: its disk's queue
    return None


def zoned_device(name: str, sys_root: str = "/sys", dev_root: str = "/dev", role: str = "") -> ZonedDevice:
    """The zoned model and zone geometry of disk ``name`` (a partition reports its disk's)."""
    node = _disk_node(name, sys_root)
    if node is None:
        return ZonedDevice(name, "unknown", role=role)
    queue = node / "queue"
    model = _read_attr(queue / "zoned") or "none"  # kernels before 4.10 have no attribute: nothing is zoned
    chunk = _int(queue / "chunk_sectors")
    device = ZonedDevice(name, model, logical_block=_int(queue / "logical_block_size"), role=role)
    if not device.zoned:
        return device
    zone_size = chunk * 512 if chunk else None
    return ZonedDevice(
        name,
        model,
        zone_size,
        _zone_capacity(Path(dev_root, node.name)) or zone_size,
        _int(queue / "nr_zones"),
        _int(queue / "max_open_zones"),
        _int(queue / "max_active_zones"),
        device.logical_block,
        role,
    )


def _zone_capacity(device: Path) -> int | None:
    """The first sequential zone's capacity in bytes, when the device can be opened and asked."""
    try:
        zones = report_zones(str(device), 0, 64)
    except OSError:
        return None
    sequential = [zone for zone in zones if zone.type != 1] or zones
    return sequential[0].capacity * 512 if sequential else None


# -- the stack under a file system -------------------------------------------------------------


def _btrfs_devices(name: str, sys_root: str) -> tuple[list[str], bool]:
    """All devices of the btrfs holding device ``name`` and whether it runs in zoned mode."""
    for fs in sorted(Path(sys_root, "fs", "btrfs").glob("*/devices")):
        names = sorted(entry.name for entry in fs.iterdir())
        if name in names:
            return names, (fs.parent / "features" / "zoned").exists()
    return [name], False


def f2fs_devices(superblock: bytes) -> list[str]:
    """The device paths an f2fs superblock lists (empty: a single-device f2fs)."""
    if len(superblock) < F2FS_DEVS + F2FS_DEV or struct.unpack_from("<I", superblock)[0] != F2FS_MAGIC:
        return []
    paths = []
    for index in range(8):
        raw = superblock[F2FS_DEVS + index * F2FS_DEV : F2FS_DEVS + index * F2FS_DEV + 64].split(b"\0")[0]
        if raw:
            paths.append(raw.decode(errors="replace"))
    return paths


def _f2fs_devices(name: str, sys_root: str, dev_root: str) -> tuple[list[str], str]:
    """f2fs's devices by kernel name, the mount source first, and why the list may be incomplete."""
    try:
        with open(Path(dev_root, name), "rb") as device:
            device.seek(F2FS_SUPER_OFFSET)
            paths = f2fs_devices(device.read(4096))
    except OSError as exc:
        return [name], f"the f2fs superblock on {name} is not readable ({exc.strerror}): other devices unknown"
    names = []
    for path in paths:
        node = _node_for_source(path, sys_root) if path.startswith("/dev/") else None
        names.append(node.resolve().name if node else Path(path).name)
    return (names if name in names else [name, *names]) if names else [name], ""


def zoned_stack(path: str, sys_root: str = "/sys", proc_root: str = "/proc", dev_root: str = "/dev") -> dict[str, Any]:
    """The storage stack under the file system holding ``path``: its disks and their zoned models.

    ``summary`` reads e.g. "btrfs zoned on nvme0n1 (host-managed: 32 zones of 64 MiB)", "f2fs on nvme1n1
    (none, metadata) + nvme0n1 (host-managed: ...)" or "ext4 on sda (none)"; ``zoned`` says whether any disk
    under it is zoned.
    """
    try:
        mounts = parse_mountinfo(Path(proc_root, "self", "mountinfo").read_text())
    except OSError:
        return {}
    mount = mount_of(os.path.realpath(path), mounts)
    if mount is None:
        return {}
    node: Path | None = Path(sys_root, "dev", "block", mount.dev)
    if mount.dev.startswith("0:") or not node.exists():
        node = _node_for_source(mount.source, sys_root)
    stack: dict[str, Any] = {"filesystem": mount.fstype, "mount": mount.point, "source": mount.source}
    if node is None:
        return {**stack, "zoned": False, "devices": [], "summary": f"{mount.fstype} (no block device)"}
    name, layer, note = node.resolve().name, mount.fstype, ""
    if mount.fstype == "btrfs":
        names, zoned_mode = _btrfs_devices(name, sys_root)
        layer = "btrfs zoned" if zoned_mode else "btrfs"
        disks = [d for n in names for d in _disks_under(Path(sys_root, "class", "block", n), set())]
    elif mount.fstype == "f2fs":
        names, note = _f2fs_devices(name, sys_root, dev_root)
        disks = [d for n in names for d in _disks_under(Path(sys_root, "class", "block", n), set())]
    else:
        disks = _disks_under(node, set())
    devices = [
        zoned_device(disk, sys_root, dev_root, "metadata" if layer == "f2fs" and len(disks) > 1 and index == 0 else "")
        for index, disk in enumerate(dict.fromkeys(disks))
    ]
    stack.update(
        layer=layer,
        zoned=any(d.zoned for d in devices),
        devices=[d.to_dict() for d in devices],
        summary=f"{layer} on " + " + ".join(d.text() for d in devices),
    )
    if note:
        stack["note"] = note
    return stack


def device_stack(device: str, sys_root: str = "/sys", dev_root: str = "/dev") -> dict[str, Any]:
    """A raw device target: its zoned model and geometry, ``summary`` e.g. "nvme0n1 (host-managed: ...)"."""
    name = Path(os.path.realpath(device)).name
    found = zoned_device(name, sys_root, dev_root)
    return {"layer": "raw device", "zoned": found.zoned, "devices": [found.to_dict()], "summary": f"raw {found.text()}"}
