"""The machine fingerprint recorded with every run: CPU, memory, kernel, devices, filesystem."""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

from storbench.telemetry.devices import device_info, mount_of, parse_mountinfo


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def available_memory() -> int | None:
    """MemAvailable in bytes (what a workload may use without swapping), None where unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def filesystem_of(path: Path) -> dict[str, str]:
    """Mount point, filesystem type and source of the mount holding ``path``."""
    try:
        mounts = parse_mountinfo(Path("/proc/self/mountinfo").read_text())
    except OSError:
        return {}
    mount = mount_of(str(path.resolve()), mounts)
    return {"mount": mount.point, "type": mount.fstype, "source": mount.source} if mount else {}


def fingerprint(target_path: Path | None, devices: list[str]) -> dict[str, Any]:
    return {
        "hostname": platform.node(),
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count(),
        "memory_gb": _memory_gb(),
        "kernel": platform.release(),
        "os": platform.platform(),
        "filesystem": filesystem_of(target_path) if target_path else {},
        "devices": {name: device_info(name) for name in devices},
    }
