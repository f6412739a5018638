"""Each lab host's disk: a sparse file on a loop device with an ext4 file system, and the host's blkio cgroup
(cgroup v1) whose throttle holds the loop device to the host's limits.

cgroup v1 charges a write to the cgroup of the process that submits it: a buffered write is submitted later by
the kernel's flusher threads, outside every host's cgroup. A throttled disk is therefore mounted ``sync``, so
every write the host's processes make reaches the device from them and its limit holds (LAB.md)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from storbench.lab.commands import LabError, run
from storbench.lab.journal import Journal
from storbench.lab.spec import NodeLimits

BLKIO = Path("/sys/fs/cgroup/blkio")
THROTTLES = {
    "disk_write_mbps": "blkio.throttle.write_bps_device",
    "disk_read_mbps": "blkio.throttle.read_bps_device",
}


def make_disk(journal: Journal, directory: Path, size_mb: int, sync: bool) -> tuple[str, Path]:
    """(loop device, mount point) of a new ext4 file system of ``size_mb`` MB in ``directory``."""
    image = directory / "disk.img"
    with open(image, "wb") as handle:
        handle.truncate(size_mb * 1_000_000)
    device = run("losetup", "--find", "--show", str(image)).strip()
    journal.made("loop", device=device, file=str(image))
    run("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", device)
    mount = directory / "disk"
    mount.mkdir(mode=0o755)
    run("mount", "-o", "sync" if sync else "defaults", device, str(mount))
    journal.made("mount", path=str(mount), device=device)
    return device, mount


def make_cgroup(journal: Journal, name: str, device: str, limits: NodeLimits) -> Path:
    """The host's blkio cgroup, its throttles set on ``device``."""
    if not (BLKIO / THROTTLES["disk_write_mbps"]).exists():
        raise LabError(f"{BLKIO}: no blkio throttling in this kernel (cgroup v1 blkio.throttle.*)")
    path = BLKIO / name
    path.mkdir()
    journal.made("cgroup", path=str(path))
    rdev = os.stat(device).st_rdev
    for key, control in THROTTLES.items():
        mbps = getattr(limits, key)
        if mbps:
            (path / control).write_text(f"{os.major(rdev)}:{os.minor(rdev)} {int(mbps * 1_000_000)}\n")
    return path


def join(cgroup: str) -> None:
    """Moves the calling process into ``cgroup`` (its children follow)."""
    Path(cgroup, "cgroup.procs").write_text(f"{os.getpid()}\n")


def remove_loop(device: str, image: str) -> None:
    """Detaches ``device`` if it is still backed by ``image`` (a reused loop number is someone else's)."""
    backing = Path("/sys/block") / Path(device).name / "loop" / "backing_file"
    try:
        if backing.read_text().strip() != image:
            return
    except OSError:
        return
    run("losetup", "--detach", device)


def unmount(path: str) -> None:
    mounted = {line.split()[1] for line in Path("/proc/mounts").read_text().splitlines() if line.strip()}
    if path in mounted:
        run("umount", path)


def remove_cgroup(path: str) -> None:
    """Removes the cgroup once the processes left in it (only the host's: nothing else is put there) are gone."""
    cgroup = Path(path)
    if not cgroup.is_dir():
        return
    for pid in (cgroup / "cgroup.procs").read_text().split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass
    for _ in range(50):
        try:
            cgroup.rmdir()
            return
        except OSError:
            time.sleep(0.1)
    raise LabError(f"{path}: could not remove the cgroup (processes still in it)")
