"""One QEMU TCG guest with the lab's devices, started and stopped by PID, and a way to run commands in it.

The guest runs the host's own Python, storbench (this worktree's src) and fio from the host's root,
shared read-only over 9p; ``share`` (a private host temp dir under /tmp) is writable in the guest at
the same path (the guest's /tmp is a tmpfs), so the results' paths mean the same on both sides. Commands go over a virtio-serial port to tests/lab/agent.py. QEMU always runs under
``timeout`` (a hard limit even if the test process dies) and is stopped by PID: SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.lab import initramfs

ROOT = Path(__file__).resolve().parents[2]
KERNEL_DIR = ROOT / "lab" / "target" / "kernel"
MIB = 1 << 20
GIB = 1 << 30
PRIORITY = -15  # QEMU's nice value and, under autogroup, its session's (weight 29154 against 1024)


KIB = 1 << 10
KERNEL_ARGS = "console=ttyS0 panic=-1 quiet loglevel=4 nvme_core.io_timeout=600 nvme_core.admin_timeout=600"


@dataclass(frozen=True)
class DriveModel:
    """A named set of QEMU throttling limits (``throttling.*`` keys) standing for a kind of drive."""

    name: str
    throttling: dict[str, int]


# A hard drive's limits (issue 41), for the stacks of paper 004: 150 MiB/s, and 300 operations a second where a
# request counts one operation per 512 KiB (QEMU's iops-size: a 4 MiB request is 8). Every request pays at least
# one operation, a seek's worth (3.3 ms), large ones pay for their bytes: the cost of n small writes is n
# operations, so a layer that merges small random writes into long appends gets more done under the same limits.
# The emulator itself (TCG) is far faster (~2.8 GB/s unthrottled), so these limits, not the emulator, bind; they
# also bound how fast a file system can flood the guest's page cache (which stalled zoned-004 on ext4 before).
HDD = DriveModel("hdd-150", {"bps-total": 150 * MIB, "iops-total": 300, "iops-size": 512 * KIB})


@dataclass(frozen=True)
class Disk:
    """One lab device: a sparse image, its bus and QEMU's throttling (``throttling.*`` keys, or a model's)."""

    serial: str
    size: int
    bus: str = "virtio"  # or "nvme"
    throttling: dict[str, int] = field(default_factory=dict)
    nvme_ns: str = ""  # extra nvme-ns properties (the zoned namespace's)
    model: DriveModel | None = None  # its limits are the model's

    @property
    def limits(self) -> dict[str, int]:
        return {**(self.model.throttling if self.model else {}), **self.throttling}


ZONED = "zoned=true,zoned.zone_size=64M,zoned.zone_capacity=64M,zoned.max_open=16,zoned.max_active=16"
# The lab's devices by serial; tests find their guest names with Guest.device(serial).
DISKS = [
    Disk("bw20", 1 * GIB, throttling={"bps-write": 20 * MIB}),
    Disk("bw20b", 1 * GIB, throttling={"bps-write": 20 * MIB}),  # bw20's twin: "not significant"
    Disk("bw21", 1 * GIB, throttling={"bps-write": 21 * MIB}),  # 5% above bw20
    Disk("bw30", 1 * GIB, throttling={"bps-write": 30 * MIB}),
    Disk("bw45", 1 * GIB, throttling={"bps-write": 45 * MIB}),  # 50% above bw30
    Disk("iops200", 256 * MIB, throttling={"iops-total": 200}),
    Disk("plain", 1 * GIB),  # under dm-delay and dm-flakey tables
    # zoned-004's stacks (tests/lab/test_zoned_lab.py), all on the hard-drive model: btrfs zoned on zns, ext4 on
    # conv, f2fs on zns2 with its metadata on conv2 (three stacks mounted at once: one interleaved experiment)
    Disk("zns", 2 * GIB, bus="nvme", nvme_ns=ZONED, model=HDD),  # 32 zones of 64 MiB, host-managed
    Disk("conv", 2 * GIB, bus="nvme", model=HDD),
    Disk("zns2", 2 * GIB, bus="nvme", nvme_ns=ZONED, model=HDD),
    Disk("conv2", 2 * GIB, bus="nvme", model=HDD),
    Disk("guard1", 32 * MIB),  # blank, formatted and swapped by the raw-device guard cases (test_device_guard)
    Disk("guard2", 32 * MIB),
]


@dataclass
class Result:
    rc: int
    stdout: str
    stderr: str


class LabError(RuntimeError):
    pass


def under_tmp(*paths: Path) -> list[str]:
    """The host paths the guest must still see though its /tmp is a tmpfs: a checkout (and its Python) under
    /tmp (a CI clone, say) is bound back over the tmpfs, read-only, at the same path."""
    keep = [str(path if path.is_dir() else path.parents[1]) for path in paths if str(path).startswith("/tmp/")]
    return list(dict.fromkeys(keep))


def kernel_version() -> str:
    versions = sorted(p.name for p in (KERNEL_DIR / "lib" / "modules").iterdir())
    return versions[-1]


def drive_args(disk: Disk, image: Path, index: int) -> list[str]:
    throttle = "".join(f",throttling.{k}={v}" for k, v in disk.limits.items())
    drive = f"file={image},id=d{index},format=raw,if=none,cache=writeback,aio=threads{throttle}"
    if disk.bus == "nvme":
        extra = f",{disk.nvme_ns}" if disk.nvme_ns else ""
        return [
            "-drive",
            drive,
            "-device",
            f"nvme,serial={disk.serial},id=nvme{index}",
            "-device",
            f"nvme-ns,drive=d{index},bus=nvme{index},nsid=1{extra}",
        ]
    return ["-drive", drive, "-device", f"virtio-blk-pci,drive=d{index},serial={disk.serial}"]


class Guest:
    """The running guest: ``run(cmd)`` in it, ``stop()`` it; ``share`` is writable on both sides."""

    def __init__(self, workdir: Path, python: str, limit_s: int, memory_mb: int = 1536):
        self.workdir = workdir
        if not str(workdir).startswith("/tmp/"):
            raise LabError(f"{workdir}: the lab's work directory must be under /tmp (a tmpfs in the guest)")
        self.share = workdir / "share"
        self.share.mkdir()
        self.console = workdir / "console.log"
        self.socket_path = workdir / "cmd.sock"
        self.pidfile = workdir / "qemu.pid"
        kver = kernel_version()
        env = {
            "LAB_KERNEL": str(KERNEL_DIR),
            "LAB_KVER": kver,
            "LAB_MODULES": " ".join(initramfs.GUEST_MODULES),
            "LAB_SRC": str(ROOT / "src"),
            "LAB_PYTHON": python,
            "LAB_AGENT": str(ROOT / "tests/lab/agent.py"),
            "LAB_SHARE": str(self.share),
            "LAB_KEEP": " ".join(under_tmp(ROOT, Path(python).resolve())),
        }
        initrd = initramfs.build(KERNEL_DIR, kver, env, workdir / "initrd.gz")
        # The emulator runs at a higher priority than the tests beside it: under TCG the guest's devices are
        # only as fast as the one host thread that emulates them, and a known truth (a 20 MiB/s device) must
        # not sag because other workers' JVMs took that thread's core. `nice` is what counts where the kernel
        # does not group by session; where it does (autogroup), see raise_priority().
        args = [
            "nice",
            "-n",
            str(PRIORITY),
            "timeout",
            "--signal=TERM",
            "--kill-after=10",
            str(limit_s),
            "qemu-system-x86_64",
            # One vCPU, but multi-threaded TCG told that a second may come: only then does TCG give the guest's
            # memory barriers to the host CPU (CF_PARALLEL: MTTCG and maxcpus > 1). Without them the guest's
            # NVMe driver and QEMU's controller, in two host threads, race on the shadow doorbells: the guest
            # stores its queue's new tail and reads the controller's event index (mb() between, dropped), the
            # store still in the host core's store buffer; the controller, in the other thread, reads the old
            # tail and goes idle; the guest sees no reason to ring the doorbell. The request then waits forever
            # (the zoned-004 stalls of issue 41: the guest waiting on a journal or writeback request while QEMU's
            # drives sat idle, seen 1 run in 5 under load).
            "-accel",
            "tcg,thread=multi",
            "-cpu",
            "max",
            "-smp",
            "1,maxcpus=2",
            "-m",
            str(memory_mb),
            "-nographic",
            "-no-reboot",
            "-nodefaults",
            "-pidfile",
            str(self.pidfile),
            "-serial",
            f"file:{self.console}",
            "-kernel",
            str(KERNEL_DIR / "boot" / f"vmlinuz-{kver}"),
            "-initrd",
            str(initrd),
            # Under TCG a flood of buffered writes can keep an emulated NVMe command waiting past the
            # kernel's 30 s: the controller is reset and the namespace vanishes (seen in CI). Wait instead.
            "-append",
            KERNEL_ARGS,
            "-virtfs",
            "local,path=/,mount_tag=host,security_model=none,readonly=on,multidevs=remap",
            "-virtfs",
            f"local,path={self.share},mount_tag=share,security_model=none",
            "-monitor",
            f"unix:{workdir / 'monitor.sock'},server=on,wait=off",
            "-device",
            "virtio-serial-pci",
            "-chardev",
            f"socket,id=cmd,path={self.socket_path},server=on,wait=off",
            "-device",
            "virtserialport,chardev=cmd,name=cmd",
        ]
        for index, disk in enumerate(DISKS):
            image = workdir / f"{disk.serial}.img"
            with open(image, "wb") as handle:
                handle.truncate(disk.size)  # sparse
            args += drive_args(disk, image, index)
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=open(workdir / "qemu.out", "wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        raise_priority(self.proc.pid)
        self.conn: socket.socket | None = None
        self.buffer = b""
        self.next_id = 0
        self.devices: dict[str, str] = {}

    # -- the command channel ------------------------------------------------------------------
    def wait_ready(self, timeout_s: float) -> float:
        """Ping the agent until it answers; the seconds it took. A QEMU that exits first is an error."""
        start = time.monotonic()
        while time.monotonic() - start < timeout_s:
            self._check_alive()
            if self.conn is None and self.socket_path.exists():
                try:
                    self.conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    self.conn.connect(str(self.socket_path))
                except OSError:
                    self.conn = None
            if self.conn is not None:
                try:
                    if self._request({}, 2.0) is not None:
                        self._find_devices()
                        return time.monotonic() - start
                except TimeoutError:
                    pass
            time.sleep(0.5)
        raise LabError(f"the guest did not answer within {timeout_s:.0f} s; console:\n{self.console_tail()}")

    def run(self, cmd: str, timeout_s: float = 300) -> Result:
        """Run ``cmd`` with /bin/sh in the guest; its exit code, stdout and stderr."""
        reply = self._request({"cmd": cmd, "timeout": timeout_s}, timeout_s + 30)
        return Result(reply["rc"], reply["stdout"], reply["stderr"])

    def storbench(self, args: list[str], timeout_s: float = 300, cwd: str = "/tmp") -> Result:
        """``python -m storbench ARGS`` in the guest (forked from its agent, which imported storbench once)."""
        reply = self._request({"storbench": list(args), "cwd": cwd, "timeout": timeout_s}, timeout_s + 30)
        return Result(reply["rc"], reply["stdout"], reply["stderr"])

    def check(self, cmd: str, timeout_s: float = 300) -> str:
        """Run ``cmd``; its stdout, or LabError with its stderr when it fails."""
        done = self.run(cmd, timeout_s)
        if done.rc != 0:
            raise LabError(f"guest: {cmd!r} exited {done.rc}: {done.stderr.strip()[-2000:]}")
        return done.stdout

    def _request(self, body: dict, timeout_s: float) -> dict | None:
        self.next_id += 1
        ident = self.next_id
        assert self.conn is not None
        self.conn.sendall((json.dumps({"id": ident, **body}) + "\n").encode())
        deadline = time.monotonic() + timeout_s
        while True:
            while b"\n" in self.buffer:
                line, self.buffer = self.buffer.split(b"\n", 1)
                reply = json.loads(line)
                if reply.get("id") == ident:
                    return reply  # older ids are pings answered late
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no answer from the guest within {timeout_s:.0f} s")
            self._check_alive()
            self.conn.settimeout(min(left, 1.0))
            try:
                chunk = self.conn.recv(1 << 20)
            except socket.timeout:
                continue
            if not chunk:
                raise LabError(f"the guest's command port closed; console:\n{self.console_tail()}")
            self.buffer += chunk

    def _check_alive(self) -> None:
        if self.proc.poll() is not None:
            out = (self.workdir / "qemu.out").read_text(errors="replace")[-2000:]
            raise LabError(f"QEMU exited ({self.proc.returncode}): {out}\nconsole:\n{self.console_tail()}")

    def _find_devices(self) -> None:
        """serial -> /dev/NAME, from the guest's sysfs (virtio: serial; nvme: device/serial)."""
        listing = self.check(
            "for b in /sys/block/vd* /sys/block/nvme*; do "
            "s=$(cat $b/serial 2>/dev/null || cat $b/device/serial); echo ${b##*/} $s; done"
        )
        for line in listing.splitlines():
            name, _, serial = line.partition(" ")
            self.devices[serial.strip()] = f"/dev/{name}"

    def device(self, serial: str) -> str:
        return self.devices[serial]

    def monitor(self, command: str, timeout_s: float = 5) -> str:
        """One QEMU human-monitor command's output (``info blockstats``: each drive's completed requests and idle
        time, which tell a wedged emulator from a guest that stopped asking); "" when the monitor is not there."""
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.settimeout(timeout_s)
                conn.connect(str(self.workdir / "monitor.sock"))
                conn.sendall(f"{command}\n".encode())
                out, deadline = b"", time.monotonic() + timeout_s
                while time.monotonic() < deadline and out.count(b"(qemu)") < 2:
                    chunk = conn.recv(1 << 16)
                    if not chunk:
                        break
                    out += chunk
        except OSError:  # no monitor, or it answered slowly: what came is kept
            pass
        # the answer is between the echoed command (line-editing escapes) and the next prompt
        body = out.decode(errors="replace").split("(qemu)")[1:2]
        lines = body[0].splitlines()[1:] if body else []
        return "\n".join(line.rstrip() for line in lines if line.strip())

    def console_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.console.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no console log)"

    # -- stopping, by PID ---------------------------------------------------------------------
    def stop(self, grace_s: float = 10) -> None:
        """SIGTERM to QEMU (and its `timeout` wrapper), SIGKILL after ``grace_s``; waits for both."""
        if self.conn is not None:
            self.conn.close()
        qemu_pid = self._qemu_pid()
        for pid in (qemu_pid, self.proc.pid):
            if pid is not None:
                _signal(pid, signal.SIGTERM)
        try:
            self.proc.wait(grace_s)
        except subprocess.TimeoutExpired:
            for pid in (qemu_pid, self.proc.pid):
                if pid is not None:
                    _signal(pid, signal.SIGKILL)
            self.proc.wait(grace_s)
        if qemu_pid is not None:
            _wait_gone(qemu_pid, grace_s)

    def _qemu_pid(self) -> int | None:
        """QEMU's PID from its pidfile, if that process is still this QEMU (not a reused PID)."""
        try:
            pid = int(self.pidfile.read_text().strip())
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except (OSError, ValueError):
            return None
        return pid if str(self.pidfile).encode() in cmdline else None

    def alive(self) -> bool:
        return self.proc.poll() is None or self._qemu_pid() is not None


def raise_priority(session_leader: int) -> None:
    """Give QEMU's session the priority PRIORITY where the kernel schedules by session (autogroup).

    With autogroup on, every session shares the CPU equally whatever its processes' nice values, and QEMU runs in
    a session of its own: its `nice -10` counted for nothing beside the lane's ten service sessions (Cassandra,
    Spark, HDFS, ...), which left the emulator a fifth of a core and sagged the write-limited devices (17.75 MB/s
    on a 20 MiB/s device in CI). Needs root (CAP_SYS_NICE); without it the lab runs at the default priority.
    """
    try:
        Path(f"/proc/{session_leader}/autogroup").write_text(f"{PRIORITY}\n")
    except OSError:
        pass  # no autogroup (the nice value then counts) or not permitted


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _wait_gone(pid: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    _signal(pid, signal.SIGKILL)
