"""Whether a run recorded as running still has its process: host, PID and the process's start time.

A run records the process that writes it (``manifest["process"]``) when it starts. A reader on the same host
checks ``/proc/PID/stat``: the process must exist, not be a zombie, and have started at the recorded clock tick
(field 22, since boot) in the same boot, so a PID the kernel reused for another program is not taken for the run.
A reader on another host cannot look: it says so rather than guess.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

RUNNING, CRASHED = "running", "crashed"
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat from field 3 (state) on; the command name in field 2 may hold spaces and parentheses."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2 :].split()


def _boot_id() -> str | None:
    try:
        return BOOT_ID.read_text().strip()
    except OSError:
        return None


def this_process() -> dict[str, Any]:
    """What identifies the calling process later, from any process on this host."""
    pid = os.getpid()
    fields = _stat_fields(pid)
    return {
        "host": socket.gethostname(),
        "pid": pid,
        "start_ticks": int(fields[19]) if fields else None,
        "boot_id": _boot_id(),
    }


def alive(process: dict[str, Any]) -> bool:
    """Whether the recorded process (on this host) still runs: same PID, same start tick, same boot."""
    pid, ticks = process.get("pid"), process.get("start_ticks")
    if not isinstance(pid, int) or pid <= 0:
        return False
    fields = _stat_fields(pid)
    if fields is None or fields[0] in ("Z", "X"):  # gone, or exited and waiting to be reaped
        return False
    if process.get("boot_id") and process["boot_id"] != _boot_id():
        return False  # the machine restarted since: PIDs and ticks start over
    return ticks is None or int(fields[19]) == ticks


def status(recorded: str, process: dict[str, Any] | None, host: str) -> str:
    """The status to show for a run ``recorded`` so in its manifest, as seen from ``host``.

    A running run whose process is gone is ``crashed``; one on another host, or recorded before runs kept their
    process, cannot be checked from here and says so (``running? (host NAME)``)."""
    if recorded != RUNNING:
        return recorded
    if not process or not process.get("host"):
        return f"{RUNNING}? (process not recorded)"
    if process["host"] != host:
        return f"{RUNNING}? (host {process['host']})"
    return RUNNING if alive(process) else CRASHED
