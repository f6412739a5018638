"""Where the data lives: a ``file://`` directory, an ``hdfs://`` path or a raw ``device://``.

Every run claims ``<target>/storbench-<run-id>/`` with a marker file naming the run;
cleanup removes that directory only when the marker is ours, and nothing else
(see storbench.storage for the file-system operations behind each scheme). A raw
block device (``device:///dev/sdX`` or a plain ``/dev/sdX``) has no run root: only fio
workloads use it, and only with --allow-device-overwrite on a device that holds nothing.
"""

from __future__ import annotations

import json
import os
import re
import socket
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

from storbench.errors import InputError, TargetError

MARKER = ".storbench-owned"
SUPPORTED_SCHEMES = ("file", "hdfs", "device", "s3", "rados")  # device: raw block device (fio); s3: objects workloads
# rados: a Ceph pool (rados-bench workloads): rados://POOL on `storbench services up ceph`, or rados://POOL?conf=PATH
CONNECT_TIMEOUT_S = 3.0


@dataclass(frozen=True)
class Target:
    uri: str  # normalised: file:///abs/dir or hdfs://host:port/dir
    scheme: str
    path: Path | None  # the local directory behind a file:// target; None for remote file systems

    def run_root_uri(self, run_id: str) -> str:
        return f"{self.uri.rstrip('/')}/storbench-{run_id}"

    @property
    def is_local(self) -> bool:
        return self.scheme == "file"

    @property
    def authority(self) -> tuple[str, int] | None:
        parsed = urlparse(self.uri)
        return (parsed.hostname, parsed.port) if parsed.hostname and parsed.port else None


def parse_target(text: str) -> Target:
    parsed = urlparse(text)
    scheme = parsed.scheme or "file"
    if scheme not in SUPPORTED_SCHEMES:
        raise InputError(f"--target {text!r}: scheme {scheme}:// is not supported; "
                         f"supported: file:///path (or a plain directory), hdfs://host:port/path, "
                         f"device:///dev/NAME (or a block device path; fio workloads only), "
                         f"s3://bucket/prefix (objects workloads), rados://POOL[?conf=/etc/ceph/ceph.conf] "
                         f"(rados-bench workloads)")
    if scheme == "hdfs":
        return _parse_hdfs(text, parsed)
    if scheme == "s3":
        return _parse_s3(text, parsed)
    if scheme == "rados":
        return _parse_rados(text, parsed)
    raw = parsed.path if parsed.scheme else text
    if not raw:
        raise InputError(f"--target {text!r}: no path; use file:///absolute/path or a directory")
    path = Path(raw).expanduser().absolute()
    if scheme == "device" or is_block_device(path):
        return _parse_device(text, path)
    if path.exists() and not path.is_dir():
        raise TargetError(f"--target {text!r}: {path} exists and is not a directory")
    return Target(uri=f"file://{path}", scheme="file", path=path)


def _parse_hdfs(text: str, parsed) -> Target:
    if not parsed.hostname or not parsed.port:
        raise InputError(f"--target {text!r}: an hdfs:// target needs host and port, "
                         f"e.g. hdfs://127.0.0.1:8020/storbench (see `storbench services up hdfs`)")
    path = parsed.path.rstrip("/") or ""
    return Target(uri=f"hdfs://{parsed.hostname}:{parsed.port}{path}", scheme="hdfs", path=None)


def _parse_s3(text: str, parsed) -> Target:
    bucket = parsed.netloc
    if not bucket or "@" in bucket or ":" in bucket:
        raise InputError(f"--target {text!r}: an s3:// target is s3://BUCKET/PREFIX (the endpoint comes from "
                         f"--endpoint, $AWS_ENDPOINT_URL or the running `storbench services up s3`)")
    prefix = parsed.path.strip("/")
    return Target(uri=f"s3://{bucket}" + (f"/{prefix}" if prefix else ""), scheme="s3", path=None)


def _parse_rados(text: str, parsed) -> Target:
    """``rados://POOL`` (the pool on storbench's own Ceph) or ``rados://POOL?conf=/path/ceph.conf``."""
    pool = parsed.netloc
    query = parse_qs(parsed.query, keep_blank_values=True)
    usage = ("a rados:// target is rados://POOL (on `storbench services up ceph`) or "
             "rados://POOL?conf=/etc/ceph/ceph.conf")
    if not pool or not re.fullmatch(r"[A-Za-z0-9._-]+", pool) or parsed.path.strip("/") or set(query) - {"conf"}:
        raise InputError(f"--target {text!r}: {usage}")
    conf = query.get("conf", [""])[0]
    if "conf" in query:
        path = Path(conf).expanduser().absolute()
        if not conf or not path.is_file():
            raise TargetError(f"--target {text!r}: the Ceph conf {conf or '(empty)'} is not a file")
        return Target(uri=f"rados://{pool}?conf={path}", scheme="rados", path=None)
    return Target(uri=f"rados://{pool}", scheme="rados", path=None)


def rados_parts(target: Target) -> tuple[str, str | None]:
    """(pool, conf path or None for storbench's own cluster) of a rados:// target."""
    parsed = urlparse(target.uri)
    return parsed.netloc, (parse_qs(parsed.query).get("conf") or [None])[0]


def is_block_device(path: Path) -> bool:
    try:
        return stat.S_ISBLK(os.stat(path).st_mode)
    except OSError:
        return False


def _parse_device(text: str, path: Path) -> Target:
    if not is_block_device(path):
        raise InputError(f"--target {text!r}: {path} is not a block device")
    return Target(uri=f"device://{path}", scheme="device", path=path)


# -- raw devices: refuse to overwrite anything that holds data ---------------------------------

def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiox" or word.lower().startswith(("lvm", "ntfs", "f2fs", "hfs")) else "a"


def device_refusal(device: str, lsblk: dict[str, Any] | str | None, blkid_code: int, blkid_out: str,
                   holders: list[str] | None = None) -> str | None:
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
        listed = subprocess.run(["lsblk", "-J", "-o", "NAME,MOUNTPOINT,FSTYPE,PTTYPE", str(device)],
                                capture_output=True, text=True, timeout=30)
        probed = subprocess.run(["blkid", "-p", "-o", "export", str(device)],
                                capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise TargetError(f"{device}: cannot inspect the device with lsblk/blkid ({exc}); "
                          f"refusing to overwrite it") from None
    if listed.returncode != 0:
        raise TargetError(f"{device}: lsblk failed ({listed.stderr.strip() or listed.returncode}); "
                          f"refusing to overwrite it")
    holders_dir = Path("/sys/class/block", Path(os.path.realpath(device)).name, "holders")
    holders = sorted(p.name for p in holders_dir.iterdir()) if holders_dir.is_dir() else []
    return json.loads(listed.stdout or "{}"), probed.returncode, probed.stdout, holders


def check_device_overwrite(device: Path, allowed: bool,
                           probe: Any = probe_device) -> None:
    """Refuse a raw device unless --allow-device-overwrite was given and it holds nothing."""
    reason = device_refusal(str(device), *probe(device))
    if reason:
        raise InputError(reason)
    if not allowed:
        raise InputError(f"{device} is a raw device and fio would overwrite it; pass --allow-device-overwrite "
                         f"to allow this (only devices with no filesystem, partition table or signature)")


def device_size(device: Path) -> int | None:
    """Bytes on a block device, from /sys (None when unknown)."""
    node = Path("/sys/class/block", Path(os.path.realpath(device)).name, "size")
    try:
        return int(node.read_text().strip()) * 512
    except (OSError, ValueError):
        return None


def check_reachable(target: Target) -> None:
    """A remote target's address answers within seconds, or the run is refused before Spark starts."""
    if target.authority is None:
        return
    host, port = target.authority
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        raise TargetError(f"target {target.uri}: cannot connect to {host}:{port} "
                          f"({exc.strerror or exc}); is the NameNode running?") from None
