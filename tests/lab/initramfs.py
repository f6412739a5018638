"""The lab guest's initramfs: busybox-static, the modules that mount the host's root over 9p, an init script.

Everything else the guest runs (Python, storbench, fio, lsblk, dmsetup, mkfs, modprobe and the
other modules) comes from the host's root, shared read-only over 9p, after ``chroot``.
"""

from __future__ import annotations

import gzip
import shutil
import subprocess
from pathlib import Path

# What mounts 9p and opens the command port; the rest is loaded by modprobe inside the chroot.
BOOT_MODULES = ["virtio_pci", "virtio_console", "9pnet_virtio", "9p"]
# The lab's devices and stacks (crc32/crc32c_generic before f2fs and libcrc32c: LAB.md).
GUEST_MODULES = [
    "virtio_blk",
    "nvme",
    "crc32_generic",
    "crc32c_generic",
    "dm-mod",
    "dm-delay",
    "dm-flakey",
    "btrfs",
    "f2fs",
    "ext4",
]

INIT = """#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc && mount -t sysfs sys /sys && mount -t devtmpfs dev /dev
fail() { echo "lab-init: $*"; poweroff -f; }
for m in $(cat /modules.order); do insmod /modules/$m || fail "insmod $m"; done
mkdir -p /host
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=524288,cache=loose host /host || fail "mount host"
mount -t proc proc /host/proc && mount -t sysfs sys /host/sys && mount -t devtmpfs dev /host/dev
. /lab.env
mkdir -p /hosttmp && mount -o bind /host/tmp /hosttmp  # the host's /tmp, before the guest's tmpfs hides it
mount -t tmpfs tmp /host/tmp && mount -t tmpfs run /host/run
for keep in $LAB_KEEP; do  # a checkout under the host's /tmp: bound back, read-only, at its own path
  mkdir -p "/host$keep" && mount -o bind "/hosttmp/${keep#/tmp/}" "/host$keep" || fail "bind $keep"
done
mkdir -p /host/dev/shm "/host$LAB_SHARE" && mount -t tmpfs shm /host/dev/shm
mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 share "/host$LAB_SHARE" || fail "mount share"
chroot /host /sbin/modprobe -d "$LAB_KERNEL" -S "$LAB_KVER" -a $LAB_MODULES || fail "modprobe"
echo "lab-init: devices $(ls /sys/block | tr '\\n' ' ')"
chroot /host /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp TMPDIR=/tmp \\
    PYTHONPATH="$LAB_SRC" PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 "$LAB_PYTHON" "$LAB_AGENT" cmd
fail "agent exited"
"""


def module_order(kernel: Path, kver: str, names: list[str]) -> list[str]:
    """Paths (under lib/modules/KVER) of ``names`` and what they need, dependencies first, from modules.dep."""
    base = kernel / "lib" / "modules" / kver
    deps: dict[str, list[str]] = {}
    by_name: dict[str, str] = {}
    for line in (base / "modules.dep").read_text().splitlines():
        path, _, needs = line.partition(":")
        deps[path] = needs.split()
        by_name[Path(path).name.split(".ko")[0].replace("-", "_")] = path
    builtin = {
        Path(line).name.split(".ko")[0].replace("-", "_")
        for line in (base / "modules.builtin").read_text().splitlines()
    }
    order: list[str] = []

    def visit(path: str) -> None:
        if path in order:
            return
        for need in reversed(deps[path]):  # modules.dep lists the nearest need first
            visit(need)
        order.append(path)

    for name in names:
        key = name.replace("-", "_")
        if key in builtin:
            continue
        visit(by_name[key])
    return order


def build(kernel: Path, kver: str, env: dict[str, str], out: Path) -> Path:
    """Write the initramfs (gzipped newc cpio) to ``out``; ``env`` becomes /lab.env, read by init."""
    tree = out.with_suffix(".tree")
    for sub in ("bin", "modules", "proc", "sys", "dev"):
        (tree / sub).mkdir(parents=True, exist_ok=True)
    shutil.copy2("/bin/busybox", tree / "bin" / "busybox")
    order = module_order(kernel, kver, BOOT_MODULES)
    for path in order:
        shutil.copy2(kernel / "lib" / "modules" / kver / path, tree / "modules" / Path(path).name)
    (tree / "modules.order").write_text("\n".join(Path(p).name for p in order) + "\n")
    (tree / "lab.env").write_text("".join(f"{k}='{v}'\n" for k, v in env.items()))
    (tree / "init").write_text(INIT)
    (tree / "init").chmod(0o755)
    listing = subprocess.run(["find", "."], cwd=tree, capture_output=True, check=True).stdout
    archive = subprocess.run(
        ["cpio", "-o", "-H", "newc", "--quiet"], cwd=tree, input=listing, capture_output=True, check=True
    ).stdout
    out.write_bytes(gzip.compress(archive, compresslevel=1))
    shutil.rmtree(tree)
    return out
