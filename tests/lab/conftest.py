"""The device lab: one QEMU TCG guest per test session (tests/lab/guest.py), stopped by PID at the end.

Needs `scripts/setup.sh --part lab` (QEMU, busybox, Debian's generic kernel in lab/target); without
it the lab's tests are skipped, saying so.
"""

from __future__ import annotations

import compileall
import json
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.lab.guest import KERNEL_DIR, ROOT, Guest
from tests.lab.steal import StealWatch

# QEMU's hard limit. The lab lane took 5 min 17 s on a quiet machine (6 min 10 s at load 15-21 on 2 cores before).
# zoned-004 on three stacks stalled 1 CI run in 5 under load (4 in 14 probe runs at load 7-55): the guest waiting
# on a journal or writeback request of an emulated NVMe drive that QEMU never fetched (its counters idle). The cause
# was the lab's own QEMU configuration: single-threaded TCG drops the guest's memory barriers (it assumes nothing
# else reads guest memory), but QEMU's NVMe controller does, in another host thread, through the shadow doorbells;
# the driver's "store the new tail, then read the event index" raced the controller's "store the event index, then
# read the tail", and both missed. The guest now runs multi-threaded TCG with maxcpus=2 (tests/lab/guest.py), under
# which TCG keeps the barriers (issue 41).
LIMIT_S = 1200
BOOT_S = 180


@pytest.fixture(scope="session")
def lab(request):
    from tests.grouping import stop_after_last_user

    if shutil.which("qemu-system-x86_64") is None or not (KERNEL_DIR / "boot").is_dir():
        pytest.skip("the device lab is not set up: scripts/setup.sh --part lab")
    # The guest reads the source over 9p and cannot write bytecode: compile it here, once.
    compileall.compile_dir(ROOT / "src", quiet=1)
    workdir = Path(tempfile.mkdtemp(prefix="storbench-lab-", dir="/tmp"))
    guest = Guest(workdir, sys.executable, LIMIT_S)

    def down():
        guest.stop()
        assert not guest.alive(), "QEMU still runs after stop()"
        shutil.rmtree(workdir, ignore_errors=True)

    stop = stop_after_last_user(request, down)  # in a parallel run: after its last test (tests/grouping.py)
    try:
        guest.wait_ready(BOOT_S)
        yield guest
    finally:
        stop()


@pytest.fixture(scope="session")
def host_steal():
    """The host's CPU steal through the lab's session (tests/lab/steal.py): a known truth measured while the
    hypervisor held this machine back is not judged."""
    watch = StealWatch().start()
    yield watch
    watch.stop()


@dataclass
class GuestRun:
    """One `storbench run` in the guest: its exit code, output, and what it stored (read on the host)."""

    rc: int
    stdout: str
    stderr: str
    run_dir: Path | None
    run_dirs: list[Path] = field(default_factory=list)  # every run it made (an interleaved experiment's, in order)

    @property
    def manifest(self) -> dict[str, Any]:
        assert self.run_dir is not None, self.stderr
        return json.loads((self.run_dir / "manifest.json").read_text())

    @property
    def samples(self) -> list[dict[str, Any]]:
        assert self.run_dir is not None, self.stderr
        lines = (self.run_dir / "samples.jsonl").read_text().splitlines()
        return [json.loads(line) for line in lines if line.strip()]


def results_home(guest: Guest) -> Path:
    return guest.share / "results"


def storbench_in_guest(guest: Guest, *args: str, timeout_s: float = 240) -> GuestRun:
    """`python -m storbench --results SHARE/results run ARGS` in the guest; the run directory it made (the last,
    and all of them in ``run_dirs``: run ids sort by start time)."""
    home = results_home(guest)
    before = set((home / "runs").iterdir()) if (home / "runs").is_dir() else set()
    done = guest.storbench(["--results", str(home), "run", "--quiet", *args], timeout_s)
    made = sorted(set((home / "runs").iterdir()) - before) if (home / "runs").is_dir() else []
    return GuestRun(done.rc, done.stdout, done.stderr, made[-1] if made else None, made)


def storbench_on_host(guest: Guest, *args: str) -> subprocess.CompletedProcess:
    """storbench on the host, over the results the guest wrote."""
    return subprocess.run(
        [sys.executable, "-m", "storbench", "--results", str(results_home(guest)), *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
