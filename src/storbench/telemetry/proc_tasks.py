"""What /proc says of each process and of the machine's pressure, for the noise sentinel (and the client CPU
sampler): parsers of /proc/PID/stat and io, /proc/pressure/* and /proc/meminfo, and a cache of open per-process
files re-read in place."""

from __future__ import annotations

import os
import resource
from dataclasses import dataclass

KTHREADD = 2
PF_KTHREAD = 0x00200000


@dataclass(frozen=True, slots=True)
class PidStat:
    """The fields of one /proc/PID/stat line the sentinel uses."""

    pid: int
    ppid: int
    flags: int
    ticks: int  # utime + stime + cutime + cstime, clock ticks
    start: int  # starttime, ticks after boot: with the PID, who the process is (a reused PID starts later)

    @property
    def kernel_thread(self) -> bool:
        return self.pid == KTHREADD or self.ppid == KTHREADD or bool(self.flags & PF_KTHREAD)


def parse_pid_stat(text: str) -> PidStat:
    """One /proc/PID/stat line (proc(5)); the command name may hold spaces and parentheses."""
    head, _, rest = text.rpartition(")")
    fields = rest.split(None, 21)  # fields[0] is field 3 (state); starttime (22) is the last one needed
    if not head or len(fields) < 20:
        raise ValueError(f"not a /proc/PID/stat line: {text[:80]!r}")
    return PidStat(
        int(head.partition("(")[0]),
        int(fields[1]),
        int(fields[6]),
        int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14]),
        int(fields[19]),
    )


def _after(text: str, key: str) -> str | None:
    """The rest of the line that starts with ``key`` (a find, not a split of every line: read per process)."""
    at = text.find("\n" + key)
    if at < 0:
        if not text.startswith(key):
            return None
        at = -1
    at += len(key) + 1
    end = text.find("\n", at)
    return text[at : end if end >= 0 else len(text)]


def parse_pid_io(text: str) -> int | None:
    """read_bytes + write_bytes of /proc/PID/io (storage I/O, not rchar/wchar); None when absent."""
    read, written = _after(text, "read_bytes:"), _after(text, "write_bytes:")
    return int(read) + int(written) if read is not None and written is not None else None


def parse_pressure(text: str) -> int | None:
    """The ``some`` line's ``total=`` of a /proc/pressure file: µs in which some task stalled."""
    for line in text.splitlines():
        if line.startswith("some "):
            for field in line.split()[1:]:
                if field.startswith("total="):
                    return int(field[6:])
    return None


def parse_dirty(text: str) -> int | None:
    """Dirty + Writeback of /proc/meminfo, bytes; None when either is missing."""
    total = 0
    for key in ("Dirty:", "Writeback:"):
        line = _after(text, key)
        if line is None:
            return None
        fields = line.split()
        total += int(fields[0]) * (1024 if fields[1:2] == ["kB"] else 1)
    return total


class PidFiles:
    """One file of every process (``stat``, ``io``), kept open and re-read at offset 0 while the process lives
    (a third of the system calls of open/read/close); at most ``budget`` descriptors are kept."""

    def __init__(self, proc_root: str, leaf: str, budget: int):
        self.proc_root, self.leaf, self.budget = proc_root, leaf, budget
        self._fds: dict[str, int] = {}

    def read(self, pid: str) -> bytes | None:
        fd = self._fds.get(pid)
        if fd is not None:
            try:
                data = os.pread(fd, 4096, 0)
                if data:
                    return data
            except OSError:
                pass
            self._drop(pid)  # that process ended (a new one may have its PID: opened afresh below)
        try:
            fd = os.open(f"{self.proc_root}/{pid}/{self.leaf}", os.O_RDONLY)
        except OSError:
            return None
        try:
            data = os.pread(fd, 4096, 0)
        except OSError:
            data = b""
        if data and len(self._fds) < self.budget:
            self._fds[pid] = fd
        else:
            os.close(fd)
        return data or None

    def keep_only(self, alive: set[str]) -> None:
        for pid in [pid for pid in self._fds if pid not in alive]:
            self._drop(pid)

    def forget(self, pid: str) -> None:
        if pid in self._fds:
            self._drop(pid)

    def _drop(self, pid: str) -> None:
        os.close(self._fds.pop(pid))

    def close(self) -> None:
        for pid in list(self._fds):
            self._drop(pid)


def fd_budget() -> int:
    """Descriptors the sentinel may keep open: a quarter of the soft limit, at most 1024."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return max(0, min(1024, (soft if soft != resource.RLIM_INFINITY else 4096) // 4))
