"""Which physical disks hold a path, what a ``--devices`` option names, and what a disk is.

A path is mapped through its mount's major:minor (mountinfo field 3: the device the
kernel actually mounted, unlike the source string, which may be a label, a
/dev/mapper alias or "none") to /sys/dev/block, then a partition to its disk and a
dm-* or md* device through ``slaves/`` down to the disks that see the I/O.
Roots are parameters so tests can point them at a fake tree.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from storbench.errors import InputError
from storbench.telemetry.procfs import parse_diskstats


@dataclass
class Resolution:
    devices: list[str]
    how: str  # the chain, for the manifest: "/data on /dev/md0 (xfs): md0 → sda, sdb"
    warning: str | None = None


@dataclass
class Mount:
    point: str
    dev: str  # "major:minor"
    fstype: str
    source: str
    options: dict[str, str] = field(default_factory=dict)


def _unescape(text: str) -> str:
    """mountinfo writes space, tab, newline and backslash as octal escapes (\\040 ...)."""
    if "\\" not in text:
        return text
    out, index = [], 0
    while index < len(text):
        chunk = text[index : index + 4]
        if len(chunk) == 4 and chunk[0] == "\\" and chunk[1:].isdigit():
            out.append(chr(int(chunk[1:], 8)))
            index += 4
        else:
            out.append(text[index])
            index += 1
    return "".join(out)


def parse_mountinfo(text: str) -> list[Mount]:
    mounts = []
    for line in text.splitlines():
        left, _, right = line.partition(" - ")
        fields, rest = left.split(), right.split()
        if len(fields) >= 5 and len(rest) >= 2:
            mounts.append(Mount(_unescape(fields[4]), fields[2], rest[0], _unescape(rest[1])))
    return mounts


def mount_of(path: str, mounts: list[Mount]) -> Mount | None:
    """The mount holding ``path``: the longest matching mount point, the last one if stacked."""
    best: Mount | None = None
    for mount in mounts:
        inside = path == mount.point or path.startswith(mount.point.rstrip("/") + "/")
        if inside and (best is None or len(mount.point) >= len(best.point)):
            best = mount
    return best


def _disks_under(node: Path, seen: set[Path]) -> list[str]:
    """Physical disks below a sysfs block node: partition → its disk, dm/md → their slaves' disks."""
    node = node.resolve()
    if node in seen:
        return []
    seen.add(node)
    if (node / "partition").exists():
        return _disks_under(node.parent, seen)
    slaves = sorted((node / "slaves").iterdir()) if (node / "slaves").is_dir() else []
    if not slaves:
        return [node.name]
    disks: list[str] = []
    for slave in slaves:
        disks += [disk for disk in _disks_under(slave, seen) if disk not in disks]
    return disks


def _node_for_source(source: str, sys_root: str) -> Path | None:
    """Fallback for filesystems that report an anonymous 0:N device (btrfs): use the source name."""
    if not source.startswith("/dev/"):
        return None
    name = Path(source).name
    node = Path(sys_root, "class", "block", name)
    if node.exists():
        return node
    for dm_name in Path(sys_root, "block").glob("dm-*/dm/name"):  # /dev/mapper/<name>
        if dm_name.read_text().strip() == name:
            return dm_name.parent.parent
    return None


def devices_for_path(path: str, sys_root: str = "/sys", proc_root: str = "/proc") -> Resolution:
    """The physical disks whose counters measure I/O to ``path``."""
    path = os.path.realpath(path)
    try:
        mounts = parse_mountinfo(Path(proc_root, "self", "mountinfo").read_text())
    except OSError as exc:
        return Resolution([], "unknown", f"cannot read mountinfo ({exc}); pass --devices to measure disks")
    mount = mount_of(path, mounts)
    if mount is None:
        return Resolution([], "unknown", f"{path}: no mount found; pass --devices to measure disks")
    how = f"{mount.point} on {mount.source} ({mount.fstype})"
    node: Path | None = Path(sys_root, "dev", "block", mount.dev)
    if mount.dev.startswith("0:") or not node.exists():
        node = _node_for_source(mount.source, sys_root)
    if node is None:
        return Resolution(
            [],
            how,
            f"{path} is on {mount.fstype} ({mount.source}), which has no block device; "
            f"device metrics will be empty unless you pass --devices NAME[,NAME]",
        )
    name = node.resolve().name
    disks = _disks_under(node, set())
    return Resolution(disks, how if disks == [name] else f"{how}: {name} → {', '.join(disks)}")


def _names_in_diskstats(proc_root: str) -> list[str]:
    try:
        return list(parse_diskstats(Path(proc_root, "diskstats").read_text()))
    except OSError:
        return []


def _listed_disks(sys_root: str) -> list[str]:
    """Disks worth suggesting: /sys/block without detached loop devices."""
    disks = []
    for node in sorted(Path(sys_root, "block").iterdir()) if Path(sys_root, "block").is_dir() else []:
        if node.name.startswith("loop") and not (node / "loop" / "backing_file").exists():
            continue
        disks.append(node.name)
    return disks


def local_disks(sys_root: str = "/sys", proc_root: str = "/proc") -> tuple[set[str], list[str]]:
    """(every device name this machine's counters know, the disks worth suggesting in a message)."""
    return set(_names_in_diskstats(proc_root)) or set(_listed_disks(sys_root)), _listed_disks(sys_root)


def parse_devices_option(text: str, sys_root: str = "/sys", proc_root: str = "/proc") -> list[str]:
    """``--devices sda,sdb`` or ``/dev/sda``: names as /proc/diskstats knows them, checked, in order."""
    known = set(_names_in_diskstats(proc_root)) or set(_listed_disks(sys_root))
    devices: list[str] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name = Path(os.path.realpath(item) if item.startswith("/dev/") else item).name
        if name not in known:
            suggestions = ", ".join(_listed_disks(sys_root)) or ", ".join(sorted(known)) or "none found"
            raise InputError(f"--devices: unknown block device {item!r}; known: {suggestions}")
        if name not in devices:
            devices.append(name)
    if not devices:
        raise InputError(f"--devices {text!r}: no device named; e.g. --devices sda,sdb")
    return devices


def _read_attr(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


def device_info(name: str, sys_root: str = "/sys") -> dict[str, Any]:
    """Model, vendor, size, rotational and I/O scheduler of a disk (a partition reports its disk's)."""
    node = Path(sys_root, "class", "block", name)
    if not node.exists():
        node = Path(sys_root, "block", name)
    node = node.resolve()
    disk = node.parent if (node / "partition").exists() else node
    sectors = _read_attr(node / "size")
    rotational = _read_attr(disk / "queue" / "rotational")
    scheduler = _read_attr(disk / "queue" / "scheduler")
    if scheduler and "[" in scheduler:
        scheduler = scheduler.split("[", 1)[1].split("]", 1)[0]
    return {
        "model": _read_attr(disk / "device" / "model"),
        "vendor": _read_attr(disk / "device" / "vendor"),
        "size_bytes": int(sectors) * 512 if sectors and sectors.isdigit() else None,
        "rotational": rotational == "1" if rotational in ("0", "1") else None,
        "scheduler": scheduler,
    }
