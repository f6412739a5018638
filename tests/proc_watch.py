"""Watch the command lines and environments of a process tree for secrets while something runs (issue 25).

:class:`ProcWatch` polls ``/proc/PID/cmdline`` and ``/proc/PID/environ`` of every descendant of its roots
(the test process by default: the CLI it runs, the services it started, their children such as Spark's
executors and the engine's processes) on a thread, and records each secret found with the process holding
it. ``seen`` keeps each process's command line with any secret masked, so a test can show that the
processes it meant to watch were there while it watched. A process that ends between the listing and the
read is skipped (it was seen on an earlier poll, or lived less than one interval).

    with ProcWatch({"s3 secret key": key}) as watch:
        run(...)
    assert watch.found == [] and watch.saw("SparkSubmit")

A secret made by what runs (a service's generated password) is not known beforehand: ``keep=True`` keeps
every distinct command line and environment seen, and :meth:`check` looks for it in them afterwards.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

PROC = Path("/proc")


def _read(path: Path | str) -> bytes:
    """The whole file, by os calls: a poll reads every process's stat, 20 times a second, on a CPU-bound lane
    (pathlib's read_bytes took twice the CPU: 4.9 ms against 2.4 ms a listing of 225 processes)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # gone
        return b""
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:  # gone while read, or a kernel thread's empty file
        return b""
    finally:
        os.close(fd)


def _parents() -> dict[int, int]:
    """Every process's parent, from /proc/PID/stat (the fields after the command's closing parenthesis)."""
    out = {}
    for name in os.listdir(PROC):
        if name.isdigit():
            stat = _read(f"/proc/{name}/stat")
            fields = stat[stat.rfind(b")") + 2 :].split(b" ", 2)
            if len(fields) > 1:
                out[int(name)] = int(fields[1])
    return out


def descendants(roots: set[int], parents: dict[int, int] | None = None) -> set[int]:
    """The roots and every process below them."""
    children: dict[int, list[int]] = {}
    for pid, parent in (parents if parents is not None else _parents()).items():
        children.setdefault(parent, []).append(pid)
    out, todo = set(), list(roots)
    while todo:
        pid = todo.pop()
        if pid not in out:
            out.add(pid)
            todo.extend(children.get(pid, ()))
    return out


@dataclass
class Finding:
    secret: str  # the secret's name, never its value
    pid: int
    where: str  # "cmdline" or "environ"
    command: str  # the process's command line, secrets masked

    def __str__(self) -> str:
        return f"{self.secret} in /proc/{self.pid}/{self.where} of: {self.command[:300]}"


@dataclass
class ProcWatch:
    secrets: dict[str, str]  # name -> value
    roots: set[int] = field(default_factory=lambda: {os.getpid()})
    exempt_cmdline: set[int] = field(default_factory=set)  # a process whose argv the user wrote (the CLI itself)
    exempt_environ: set[int] = field(default_factory=set)  # a process whose environment the user set
    interval: float = 0.05
    found: list[Finding] = field(default_factory=list)
    seen: dict[int, str] = field(default_factory=dict)  # pid -> its last command line seen, secrets masked
    polls: int = 0
    keep: bool = False  # keep what was seen for check(): secrets that exist only once the run made them

    def __post_init__(self) -> None:
        self._check_lengths(self.secrets)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="proc-watch", daemon=True)
        self._where: set[tuple[str, int, str]] = set()
        self._kept: dict[tuple[int, str], set[bytes]] = {}  # (pid, "cmdline"/"environ") -> each distinct content

    @staticmethod
    def _check_lengths(secrets: dict[str, str]) -> None:
        assert all(len(value) >= 6 for value in secrets.values()), "a canary this short could match by chance"

    def _mask(self, text: str) -> str:
        for name, value in self.secrets.items():
            text = text.replace(value, f"<{name}>")
        return text

    def _forked_unchanged(self, pid: int, parents: dict[int, int], where: str, data: bytes) -> bool:
        """A child of an exempt process between fork and exec: it still shows its parent's argv (or environment),
        which is the user's; once it execs, its own is checked."""
        exempt = self.exempt_cmdline if where == "cmdline" else self.exempt_environ
        parent = parents.get(pid)
        return parent in exempt and data == _read(PROC / str(parent) / where)

    def poll(self) -> None:
        parents = _parents()
        for pid in descendants(self.roots, parents):
            cmdline = _read(f"/proc/{pid}/cmdline")
            environ = _read(f"/proc/{pid}/environ")
            command = self._mask(cmdline.replace(b"\0", b" ").decode(errors="replace").strip())
            if command:  # the latest: a child first seen between fork and exec still shows its parent's argv
                self.seen[pid] = command
            if self.keep:
                self._kept.setdefault((pid, "cmdline"), set()).add(cmdline)
                self._kept.setdefault((pid, "environ"), set()).add(environ)
            for name, value in self.secrets.items():
                for where, data in (("cmdline", cmdline), ("environ", environ)):
                    exempt = self.exempt_cmdline if where == "cmdline" else self.exempt_environ
                    if (
                        value.encode() in data
                        and pid not in exempt
                        and not self._forked_unchanged(pid, parents, where, data)
                    ):
                        if (name, pid, where) not in self._where:
                            self._where.add((name, pid, where))
                            self.found.append(Finding(name, pid, where, command))
        self.polls += 1

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.poll()
            self._stop.wait(self.interval)

    def check(self, secrets: dict[str, str]) -> list[Finding]:
        """``keep``: each of ``secrets`` found in what was seen while watching (the exempt processes excepted)."""
        assert self.keep, "check() needs ProcWatch(keep=True)"
        self._check_lengths(secrets)
        found = []
        for (pid, where), contents in sorted(self._kept.items()):
            exempt = self.exempt_cmdline if where == "cmdline" else self.exempt_environ
            for name, value in secrets.items():
                if pid not in exempt and any(value.encode() in data for data in contents):
                    found.append(Finding(name, pid, where, self.seen.get(pid, "").replace(value, f"<{name}>")))
        return found

    def saw(self, text: str) -> bool:
        """Whether a watched process's command line contained ``text``."""
        return any(text in command for command in self.seen.values())

    def __enter__(self) -> "ProcWatch":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.poll()  # once more: what is left after the run (services, a JVM that outlived it)

    def report(self) -> str:
        return "\n".join(map(str, self.found))
