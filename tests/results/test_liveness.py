"""A run recorded as running is checked by host, PID and the process's start time (no process is started here:
this test's own process stands for a live run, a PID above the kernel's limit for a dead one)."""

import os
import socket
from pathlib import Path

from storbench.results import liveness

HOST = socket.gethostname()


def _pid_max() -> int:
    return int(Path("/proc/sys/kernel/pid_max").read_text())


def test_this_process_is_recorded_with_its_start_tick_and_boot():
    me = liveness.this_process()
    assert me["host"] == HOST and me["pid"] == os.getpid() and me["start_ticks"] > 0 and me["boot_id"]
    stat = Path(f"/proc/{os.getpid()}/stat").read_text()
    assert me["start_ticks"] == int(stat.rsplit(")", 1)[1].split()[19])  # field 22 of proc(5)
    assert liveness.status("running", me, HOST) == "running"


def test_a_run_whose_process_is_gone_is_crashed():
    gone = {**liveness.this_process(), "pid": _pid_max() + 1}  # no process can have it
    assert liveness.status("running", gone, HOST) == "crashed"


def test_a_reused_pid_is_not_taken_for_the_run():
    """The same PID, started at another tick (or before a reboot): another program, the run is gone."""
    me = liveness.this_process()
    assert liveness.status("running", {**me, "start_ticks": me["start_ticks"] - 1}, HOST) == "crashed"
    assert liveness.status("running", {**me, "boot_id": "another-boot"}, HOST) == "crashed"


def test_what_cannot_be_checked_here_says_so():
    me = liveness.this_process()
    assert liveness.status("running", {**me, "host": "elsewhere"}, HOST) == "running? (host elsewhere)"
    assert liveness.status("running", None, HOST) == "running? (process not recorded)"


def test_a_finished_run_keeps_its_status():
    for status in ("succeeded", "failed", "interrupted", "crashed"):
        assert liveness.status(status, {"host": HOST, "pid": _pid_max() + 1}, HOST) == status
