"""What a lab cluster may change on this machine, listed so a test can say it left the machine as it was, and
what a host's device has written."""

from __future__ import annotations

import subprocess
from pathlib import Path

from storbench.lab.disks import BLKIO


def snapshot() -> dict[str, set[str]]:
    def lines(*argv: str) -> set[str]:
        return set(subprocess.run(argv, capture_output=True, text=True, check=True).stdout.splitlines())

    return {
        "namespaces": {line.split()[0] for line in lines("ip", "netns", "list") if line.strip()},
        "links": {p.name for p in Path("/sys/class/net").iterdir()},
        "loop devices": {line for line in lines("losetup", "-a") if line.strip()},  # with its backing file
        "mounts": {line.split()[1] for line in Path("/proc/mounts").read_text().splitlines() if line.strip()},
        "cgroups": {p.name for p in BLKIO.iterdir() if p.is_dir()},
        "qdiscs": lines("tc", "qdisc", "show"),
    }


def device_written(device: str) -> int:
    """Bytes a block device (a lab host's loop device) has written, from its /sys/block stat."""
    return int(Path("/sys/block", Path(device).name, "stat").read_text().split()[6]) * 512


def changes(before: dict[str, set[str]], after: dict[str, set[str]], ours: str) -> dict[str, set[str]]:
    """What differs between two snapshots among the things whose names carry ``ours`` (the cluster's token or
    its directory): other tests running beside this one make and remove their own loop devices and mounts."""
    return {
        kind: {item for item in before[kind] ^ after[kind] if ours in item}
        for kind in before
        if {item for item in before[kind] ^ after[kind] if ours in item}
    }
