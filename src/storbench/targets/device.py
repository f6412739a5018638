"""``device://`` targets: a raw block device (``device:///dev/sdX`` or a plain ``/dev/sdX``).

A raw device has no file system, so no run root and nothing to claim or release: the
device itself is the one measured. Workloads that write it (fio) must first call
``check_device_overwrite``, which refuses any device that holds something and, even on
a blank one, wants --allow-device-overwrite.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any, Callable

from storbench.errors import InputError, TargetError
from storbench.targets.base import PathTarget, Target, TargetOptions, local_path_in, register
from storbench.telemetry.zoned import device_stack


def is_block_device(path: Path) -> bool:
    try:
        return stat.S_ISBLK(os.stat(path).st_mode)
    except OSError:
        return False


@register
class DeviceTarget(PathTarget):
    """``path`` is the block device."""

    scheme = "device"
    kind = "raw device"
    usage = "device:///dev/NAME (or a block device path)"
    wanted = "a raw device /dev/NAME"

    def devices(self, option: str | None, warn: Callable[[str], None]) -> tuple[list[str], str]:
        """The device itself, unless --devices names others."""
        if option:
            return super().devices(option, warn)
        return [Path(os.path.realpath(self.path)).name], f"raw device {self.path}"

    def flush(self) -> str:
        """Buffered writes to the device node sit in its page cache until fsync on the device."""
        fd = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        return "fsync"

    def manifest_config(self) -> dict[str, Any]:
        """The device's zoned model and zone geometry (none, host-aware, host-managed; paper 004)."""
        return {"zoned": device_stack(str(self.path))}

    @classmethod
    def parse(cls, text: str, options: TargetOptions) -> Target:
        path = local_path_in(text)
        if not is_block_device(path):
            raise InputError(f"--target {text!r}: {path} is not a block device")
        return cls(path, options)


# -- refuse to overwrite anything that holds data ---------------------------------------------


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiox" or word.lower().startswith(("lvm", "ntfs", "f2fs", "hfs")) else "a"


def device_refusal(
    device: str, lsblk: dict[str, Any] | str | None, blkid_code: int, blkid_out: str, holders: list[str] | None = None
) -> str | None:
    """Why ``device`` must not be overwritten, from lsblk's and ``blkid -p -o export``'s answers; None if blank.

    Pure on its inputs so it can be tested on fake answers. ``lsblk`` is the JSON of
    ``lsblk -J -o NAME,MOUNTPOINT,FSTYPE,PTTYPE DEVICE``; ``blkid_code`` is blkid's exit
    status (0 found, 2 nothing found, 8 ambiguous); ``holders`` are /sys holders (dm, md).
    """
    if isinstance(lsblk, str):
        lsblk = json.loads(lsblk) if lsblk.strip() else None
    nodes = (lsblk or {}).get("blockdevices") or []
    for node in nodes:
        children = node.get("children") or []
        for entry in [node, *children]:
            points = [p for p in (entry.get("mountpoints") or [entry.get("mountpoint")]) if p]
            if points:
                where = "" if entry is node else f"its partition {entry.get('name')} "
                verb = "is" if entry is node else "has"
                return f"{device} {verb} {where}mounted at {points[0]}; refusing to overwrite it"
        if children:
            names = ", ".join(str(c.get("name")) for c in children)
            return f"{device} has partitions ({names}); refusing to overwrite it"
        if node.get("pttype"):
            return f"{device} has {_article(node['pttype'])} {node['pttype']} partition table; refusing to overwrite it"
        if node.get("fstype"):
            return f"{device} has {_article(node['fstype'])} {node['fstype']} signature; refusing to overwrite it"
    found = dict(line.split("=", 1) for line in blkid_out.splitlines() if "=" in line)
    if blkid_code == 8:
        return f"{device} has more than one signature (blkid: ambiguous); refusing to overwrite it"
    if found.get("PTTYPE"):
        return f"{device} has {_article(found['PTTYPE'])} {found['PTTYPE']} partition table; refusing to overwrite it"
    if found.get("TYPE"):
        return f"{device} has {_article(found['TYPE'])} {found['TYPE']} signature; refusing to overwrite it"
    if blkid_code not in (0, 2):
        return f"{device} could not be probed (blkid exit {blkid_code}); refusing to overwrite it"
    if holders:
        return f"{device} is in use by {', '.join(holders)}; refusing to overwrite it"
    return None


def probe_device(device: Path) -> tuple[dict[str, Any] | None, int, str, list[str]]:
    """lsblk's JSON, blkid's exit status and output, and the /sys holders of ``device``."""
    try:
        listed = subprocess.run(
            ["lsblk", "-J", "-o", "NAME,MOUNTPOINT,FSTYPE,PTTYPE", str(device)],
            capture_output=True,
            text=True,
            timeout=30,
        )
        probed = subprocess.run(
            ["blkid", "-p", "-o", "export", str(device)], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise TargetError(
            f"{device}: cannot inspect the device with lsblk/blkid ({exc}); refusing to overwrite it"
        ) from None
    if listed.returncode != 0:
        raise TargetError(
            f"{device}: lsblk failed ({listed.stderr.strip() or listed.returncode}); refusing to overwrite it"
        )
    holders_dir = Path("/sys/class/block", Path(os.path.realpath(device)).name, "holders")
    holders = sorted(p.name for p in holders_dir.iterdir()) if holders_dir.is_dir() else []
    return json.loads(listed.stdout or "{}"), probed.returncode, probed.stdout, holders


def check_device_overwrite(device: Path, allowed: bool, probe: Any = probe_device) -> None:
    """Refuse a raw device unless --allow-device-overwrite was given and it holds nothing."""
    reason = device_refusal(str(device), *probe(device))
    if reason:
        raise InputError(reason)
    if not allowed:
        raise InputError(
            f"{device} is a raw device and fio would overwrite it; pass --allow-device-overwrite "
            f"to allow this (only devices with no filesystem, partition table or signature)"
        )


def device_number(device: Path) -> tuple[Path, int]:
    """The block device ``device`` resolves to now (os.path.realpath) and its major:minor (st_rdev)."""
    resolved = Path(os.path.realpath(device))
    try:
        info = os.stat(resolved)
    except OSError as exc:
        raise TargetError(f"{device}: {exc.strerror} ({resolved}); refusing to overwrite it") from None
    if not stat.S_ISBLK(info.st_mode):
        raise TargetError(f"{device} resolves to {resolved}, which is not a block device; refusing to overwrite it")
    return resolved, info.st_rdev


def same_device(device: Path, checked: int) -> Path:
    """The path ``device`` resolves to now, if it is still the device of major:minor ``checked``."""
    resolved, number = device_number(device)
    if number != checked:
        raise TargetError(
            f"{device} now resolves to {resolved} ({os.major(number)}:{os.minor(number)}), not the "
            f"device {os.major(checked)}:{os.minor(checked)} checked before; refusing to overwrite it"
        )
    return resolved


def device_size(device: Path) -> int | None:
    """Bytes on a block device, from /sys (None when unknown)."""
    node = Path("/sys/class/block", Path(os.path.realpath(device)).name, "size")
    try:
        return int(node.read_text().strip()) * 512
    except (OSError, ValueError):
        return None
