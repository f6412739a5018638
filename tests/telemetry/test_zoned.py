"""Zoned models, zone geometry and the stack under a target, on a fake sysfs tree (tests/data/telemetry/zoned)."""

from __future__ import annotations

import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

import pytest

from storbench.telemetry.zoned import (
    REP_CAPACITY,
    REPORT_HEADER,
    ZONE,
    Zone,
    device_stack,
    f2fs_devices,
    parse_zone_report,
    size_text,
    zoned_device,
    zoned_stack,
)


@pytest.fixture
def tree(data):
    root = data / "zoned"
    return {"sys_root": str(root / "sys"), "proc_root": str(root / "proc"), "dev_root": str(root / "dev")}


def test_a_zns_namespace_reports_model_and_geometry(tree):
    zns = zoned_device("nvme0n1", tree["sys_root"], tree["dev_root"])
    # no device node to ask for zone capacity: the zone size stands for it
    assert zns.to_dict() == {
        "name": "nvme0n1",
        "model": "host-managed",
        "zone_size": 64 << 20,
        "zone_capacity": 64 << 20,
        "nr_zones": 32,
        "max_open_zones": 14,
        "max_active_zones": 14,
        "logical_block": 4096,
    }
    assert zns.text() == "nvme0n1 (host-managed: 32 zones of 64 MiB, max open 14, max active 14)"


def test_conventional_partition_and_unknown_devices(tree):
    sys_root = tree["sys_root"]
    assert zoned_device("sdc", sys_root).to_dict() == {"name": "sdc", "model": "none", "logical_block": 512}
    assert zoned_device("sda1", sys_root).model == "host-aware"  # a partition reports its disk
    assert zoned_device("nosuch", sys_root).model == "unknown"
    assert not zoned_device("sdc", sys_root).zoned and zoned_device("sda", sys_root).zoned


@pytest.mark.parametrize(
    "path, layer, zoned, summary",
    [
        (
            "/mnt/btrfs/run",
            "btrfs zoned",
            True,
            "btrfs zoned on nvme0n1 (host-managed: 32 zones of 64 MiB, max open 14, max active 14) + "
            "nvme3n1 (host-managed: 32 zones of 64 MiB, max open 14, max active 14)",
        ),
        (
            "/mnt/f2fs/x",
            "f2fs",
            True,
            "f2fs on nvme1n1 (none, metadata) + nvme2n1 (host-managed: 32 zones of 64 MiB, max open 14, max active 14)",
        ),
        ("/mnt/dmz/d", "xfs", True, "xfs on sdb (host-managed: 55880 zones of 256 MiB, max open 128)"),
        ("/mnt/ha", "ext4", True, "ext4 on sda (host-aware: 1000 zones of 256 MiB)"),
        ("/home/user", "ext4", False, "ext4 on sdc (none)"),
    ],
)
def test_the_stack_under_a_file_system(tree, path, layer, zoned, summary):
    stack = zoned_stack(path, **tree)
    assert (stack["layer"], stack["zoned"], stack["summary"]) == (layer, zoned, summary)
    assert "note" not in stack


def test_f2fs_roles_and_an_unreadable_superblock(tree, tmp_path):
    devices = zoned_stack("/mnt/f2fs", **tree)["devices"]
    assert [(d["name"], d.get("role")) for d in devices] == [("nvme1n1", "metadata"), ("nvme2n1", None)]
    unreadable = zoned_stack("/mnt/f2fs", tree["sys_root"], tree["proc_root"], str(tmp_path))
    assert unreadable["summary"] == "f2fs on nvme1n1 (none)"
    assert unreadable["note"].startswith("the f2fs superblock on nvme1n1 is not readable")


def test_a_file_system_without_a_device_and_a_raw_device(tree):
    assert zoned_stack("/tmp/x", **tree) == {
        "filesystem": "tmpfs",
        "mount": "/tmp",
        "source": "tmpfs",
        "zoned": False,
        "devices": [],
        "summary": "tmpfs (no block device)",
    }
    raw = device_stack("/dev/nvme2n1", tree["sys_root"], tree["dev_root"])
    assert raw["zoned"] and raw["summary"].startswith("raw nvme2n1 (host-managed: 32 zones of 64 MiB")


def test_zone_report_parsing_with_and_without_capacity():
    def report(flags: int, zones: list[tuple[int, ...]]) -> bytes:
        return REPORT_HEADER.pack(0, len(zones), flags) + b"".join(ZONE.pack(*z) for z in zones)

    zones = [(0, 131072, 0, 1, 0, 0, 0, 131072), (131072, 131072, 140000, 2, 2, 0, 0, 98304)]
    assert parse_zone_report(report(REP_CAPACITY, zones))[1] == Zone(131072, 131072, 140000, 2, 2, 98304)
    assert parse_zone_report(report(0, zones))[1].capacity == 131072  # an older kernel: capacity = length
    assert ZONE.size == 64 and REPORT_HEADER.size == 16  # struct blk_zone, struct blk_zone_report


def test_sizes_in_binary_units():
    assert [size_text(v) for v in (64 << 20, 2 << 30, 1077 << 20, 3000, None)] == [
        "64 MiB",
        "2 GiB",
        "1077 MiB",
        "3000 B",
        "?",
    ]


def test_f2fs_superblock_without_magic_lists_nothing():
    assert f2fs_devices(bytes(4096)) == []
    assert f2fs_devices(struct.pack("<I", 0xF2F52010)) == []  # too short to hold the device list


@pytest.mark.real
@pytest.mark.skipif(not shutil.which("mkfs.f2fs"), reason="f2fs-tools (mkfs.f2fs) is not installed")
def test_a_real_multi_device_f2fs_superblock():
    with tempfile.TemporaryDirectory(prefix="sb-", dir="/tmp") as short:  # f2fs keeps 64 bytes per path
        meta, zoned = Path(short, "meta.img"), Path(short, "zoned.img")
        for image in (meta, zoned):
            with open(image, "wb") as handle:
                handle.truncate(256 << 20)
        subprocess.run(["mkfs.f2fs", "-f", "-c", str(zoned), str(meta)], check=True, capture_output=True)
        with open(meta, "rb") as handle:
            handle.seek(1024)
            assert f2fs_devices(handle.read(4096)) == [str(meta), str(zoned)]
