"""Writes tests/data/telemetry/zoned: a fake /sys, /proc/self/mountinfo and /dev of a host with zoned disks.

Run it again after changing it (``python tests/data/telemetry/make_zoned_tree.py``); the tree is committed.
dev/nvme1n1 holds an f2fs superblock listing /dev/nvme1n1 and /dev/nvme2n1 (``mkfs.f2fs -c /dev/nvme2n1
/dev/nvme1n1``), only the fields storbench reads, at the offsets of the packed ``f2fs_super_block``;
tests/telemetry/test_zoned.py also reads a real mkfs.f2fs image where f2fs-tools is installed.
"""

from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path

ROOT = Path(__file__).resolve().parent / "zoned"
PCI = "devices/pci0000:00/0000:00:04.0"
MIB = 1 << 20

# name: (major:minor, sysfs directory under sys/, queue attributes, parent disk for a partition)
ZNS = {
    "zoned": "host-managed",
    "chunk_sectors": str(64 * MIB // 512),
    "nr_zones": "32",
    "max_open_zones": "14",
    "max_active_zones": "14",
    "logical_block_size": "4096",
}
SMR = {
    "zoned": "host-managed",
    "chunk_sectors": str(256 * MIB // 512),
    "nr_zones": "55880",
    "max_open_zones": "128",
    "max_active_zones": "0",
    "logical_block_size": "4096",
}
HA = {
    "zoned": "host-aware",
    "chunk_sectors": str(256 * MIB // 512),
    "nr_zones": "1000",
    "max_open_zones": "0",
    "max_active_zones": "0",
    "logical_block_size": "512",
}
CONV = {"zoned": "none", "chunk_sectors": "0", "logical_block_size": "512"}
DISKS = {
    "nvme0n1": ("259:0", f"{PCI}/nvme/nvme0/nvme0n1", ZNS),  # btrfs zoned, with nvme3n1
    "nvme3n1": ("259:3", f"{PCI}/nvme/nvme3/nvme3n1", ZNS),
    "nvme1n1": ("259:1", f"{PCI}/nvme/nvme1/nvme1n1", CONV),  # f2fs metadata device
    "nvme2n1": ("259:2", f"{PCI}/nvme/nvme2/nvme2n1", ZNS),  # f2fs zoned device
    "sda": ("8:0", f"{PCI}/ata1/host0/target0:0:0/0:0:0:0/block/sda", HA),  # host-aware, partitioned
    "sdb": ("8:16", f"{PCI}/ata2/host1/target1:0:0/1:0:0:0/block/sdb", SMR),  # under dm-zoned
    "sdc": ("8:32", f"{PCI}/ata3/host2/target2:0:0/2:0:0:0/block/sdc", CONV),  # ext4 on a partition
    "dm-0": ("253:0", "devices/virtual/block/dm-0", CONV),
}
PARTITIONS = {"sda1": ("8:1", "sda"), "sdc1": ("8:33", "sdc")}
MOUNTS = """\
22 28 0:21 / /proc rw - proc proc rw
28 1 8:33 / / rw,relatime - ext4 /dev/sdc1 rw
31 28 0:50 / /mnt/btrfs rw,relatime - btrfs /dev/nvme0n1 rw,ssd,space_cache=v2,subvolid=5,subvol=/
32 28 259:1 / /mnt/f2fs rw,relatime - f2fs /dev/nvme1n1 rw,lazytime,background_gc=on
33 28 253:0 / /mnt/dmz rw,relatime - xfs /dev/mapper/dmz-sdb rw,attr2
34 28 8:1 / /mnt/ha rw,relatime - ext4 /dev/sda1 rw
35 28 0:26 / /tmp rw - tmpfs tmpfs rw
"""


def link(at: Path, to: Path) -> None:
    at.parent.mkdir(parents=True, exist_ok=True)
    at.symlink_to(os.path.relpath(to, at.parent))


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def f2fs_superblock(paths: list[str]) -> bytes:
    """The real superblock's fields storbench reads: magic and the device list (path, total segments)."""
    block = bytearray(4096)
    struct.pack_into("<I", block, 0, 0xF2F52010)
    for index, (path, segments) in enumerate(zip(paths, (127, 1024))):
        struct.pack_into("<64sI", block, 2201 + index * 68, path.encode(), segments)
    return bytes(1024) + bytes(block)


def main() -> None:
    shutil.rmtree(ROOT, ignore_errors=True)
    sys_root = ROOT / "sys"
    nodes = {}
    for name, (number, where, queue) in DISKS.items():
        node = nodes[name] = sys_root / where
        write(node / "dev", number)
        write(node / "size", str(2 * 1024 * MIB // 512))
        for key, value in queue.items():
            write(node / "queue" / key, value)
        for alias in (f"class/block/{name}", f"block/{name}", f"dev/block/{number}"):
            link(sys_root / alias, node)
    for name, (number, disk) in PARTITIONS.items():
        node = nodes[name] = nodes[disk] / name
        write(node / "dev", number)
        write(node / "partition", "1")
        for alias in (f"class/block/{name}", f"dev/block/{number}"):
            link(sys_root / alias, node)
    write(nodes["dm-0"] / "dm" / "name", "dmz-sdb")
    link(nodes["dm-0"] / "slaves" / "sdb", nodes["sdb"])
    btrfs = sys_root / "fs" / "btrfs" / "3b1e0c2a-9d1f-4c55-8e1a-5f0b7a1c2d3e"
    for name in ("nvme0n1", "nvme3n1"):
        link(btrfs / "devices" / name, nodes[name])
    write(btrfs / "features" / "zoned", "0")
    write(ROOT / "proc" / "self" / "mountinfo", MOUNTS.rstrip())
    (ROOT / "dev").mkdir()
    (ROOT / "dev" / "nvme1n1").write_bytes(f2fs_superblock(["/dev/nvme1n1", "/dev/nvme2n1"]))


if __name__ == "__main__":
    main()
