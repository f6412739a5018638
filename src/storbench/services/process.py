"""Start a service as a detached child and stop it by PID, checking that the PID is still ours.

A service's state lives in its own directory (``state.json`` + logs); ``stop`` checks
the process's command line against the recorded marker before signalling, so a
recycled PID is never killed, and escalates SIGTERM → SIGKILL after a timeout.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from storbench.errors import EngineError, InputError

STATE = "state.json"
MARK = ".storbench-service"  # in every service directory storbench made; names the service


def owned(workdir: Path, service: str) -> bool:
    """Whether ``workdir`` is a directory storbench made for ``service``: its marker names the service (or,
    made by a storbench from before the markers, its state.json does)."""
    if workdir.is_symlink():
        return False
    try:
        return (workdir / MARK).read_text().strip() == service
    except OSError:
        pass
    try:
        return json.loads((workdir / STATE).read_text()).get("service") == service
    except (OSError, ValueError, AttributeError):
        return False


def fresh_dir(workdir: Path, service: str) -> None:
    """An empty, marked service directory; an existing one is wiped only when it carries our marker."""
    if os.path.lexists(workdir):
        if not owned(workdir, service):
            raise InputError(
                f"{workdir} exists and was not made by storbench's {service} service; "
                f"refusing to remove it (move it away or use another results home)"
            )
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    (workdir / MARK).write_text(service + "\n")


def remove_dir(workdir: Path, service: str) -> None:
    """``down``'s cleanup: the service directory goes only when it is ours."""
    if owned(workdir, service):
        shutil.rmtree(workdir, ignore_errors=True)


def stop_in_order(
    entries: list[dict[str, Any]], order: tuple[str, ...], stop: Callable[[dict[str, Any]], bool]
) -> bool:
    """A multi-process service's recorded processes (``kind`` each), kind by kind in ``order``, each through
    ``stop``; True when any was running."""
    stopped = False
    for kind in order:
        for entry in [e for e in entries if e["kind"] == kind]:
            stopped = stop(entry) or stopped
    return stopped


def take_down(workdir: Path, service: str, stop: Callable[[dict[str, Any]], bool]) -> bool:
    """``down``: ``stop`` what the recorded state names (and clean what lies outside the service dir), then
    remove the service dir if it is ours; False when nothing was recorded or running."""
    state = read_state(workdir)
    if not state:
        return False
    stopped = stop(state)
    remove_dir(workdir, service)
    return stopped


@contextmanager
def starting(workdir: Path, state: dict[str, Any], *procs: subprocess.Popen) -> Iterator[None]:
    """Records the just-spawned ``procs`` in state.json before the wait for readiness; a failed or interrupted
    wait (Ctrl-C included) stops them, last first (our own unreaped children: no PID reuse to fear) and
    forgets them."""
    write_state(workdir, state)
    try:
        yield
    except BaseException:
        for proc in reversed(procs):
            proc.terminate()
            try:
                proc.wait(timeout=10.0)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        (workdir / STATE).unlink(missing_ok=True)
        raise


@contextmanager
def all_or_nothing(
    workdir: Path, state: dict[str, Any], stop: Callable[[dict[str, Any]], Any], main: int = 0
) -> Iterator[None]:
    """The start of a service of several processes listed in ``state["processes"]``: a failed or interrupted
    start (Ctrl-C included) stops whatever had started (``stop(state)``) and forgets the state; a start that
    completes names its ``main`` process (pid, marker) and its start-up time in ``state``."""
    write_state(workdir, state)  # from here on `down` stops whatever has started
    started = time.monotonic()
    try:
        yield
    except BaseException:
        stop(state)
        (workdir / STATE).unlink(missing_ok=True)
        raise
    first = state["processes"][main]
    state |= {"pid": first["pid"], "marker": first["marker"], "startup_s": round(time.monotonic() - started, 2)}


_CHILDREN: dict[int, subprocess.Popen] = {}  # what spawn() started in this process, by PID


def spawn(
    argv: list[str],
    workdir: Path,
    log_name: str,
    env: dict[str, str] | None = None,
    umask: int = -1,
    preexec: Callable[[], None] | None = None,
) -> subprocess.Popen:
    """``umask`` (e.g. 0o077): the files the service creates are its owner's only (-1: inherit ours); ``preexec``
    runs in the child before the program (a lab host's cgroup join: storbench.services.placement)."""
    workdir.mkdir(parents=True, exist_ok=True)
    log = open(workdir / log_name, "ab")
    proc = subprocess.Popen(
        argv,
        cwd=workdir,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
        start_new_session=True,
        umask=umask,
        preexec_fn=preexec,
    )
    _CHILDREN[proc.pid] = proc
    return proc


def still_running(pid: int, marker: str) -> bool:
    """Whether a service process is still up while it starts: for one this process spawned, its own exit status
    (its command line in /proc was seen not to name its program yet right after the start, so a marker check
    there could call a healthy process dead); for any other, its command line."""
    child = _CHILDREN.get(pid)
    if child is not None:
        return child.poll() is None
    return alive(pid, marker)


def socket_dir(workdir: Path, longest: str) -> Path:
    """Where a service's unix sockets go: ``workdir/run``, or, when a socket path there would pass the
    108-byte limit, a private directory of its own (mkdtemp: unpredictable, 0700, never reused)."""
    run = workdir / "run"
    if len(str(run / longest)) < 100:
        return run
    return Path(tempfile.mkdtemp(prefix="storbench-sock-", dir="/tmp"))  # not TMPDIR: it may be as long


def remove_own_sockets(paths: list[str]) -> None:
    """Unlinks the sockets among ``paths`` that are this user's; anything else there is left alone."""
    for path in map(Path, paths):
        try:
            info = path.lstat()
        except OSError:
            continue
        if stat.S_ISSOCK(info.st_mode) and info.st_uid == os.geteuid():
            path.unlink(missing_ok=True)


def wait_for_file(path: Path, proc: subprocess.Popen, timeout: float, what: str, log: Path) -> dict[str, Any]:
    """The JSON a launcher writes once it is ready; fails fast if the process dies first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            return json.loads(path.read_text())
        if proc.poll() is not None:
            raise EngineError(
                f"{what} exited with code {proc.returncode} before it was ready; "
                f"last log line: {last_line(log)} (log: {log})"
            )
        time.sleep(0.1)
    raise EngineError(f"{what} was not ready after {timeout:.0f} s; log: {log}")


def raise_if_exited(service: str, workdir: Path, state: dict[str, Any]) -> None:
    """EngineError naming the first of ``state``'s processes that exited while starting, with its log's last line
    (``workdir/log/NAME.log``)."""
    for entry in state["processes"]:
        if not still_running(entry["pid"], entry["marker"]):
            log = workdir / "log" / f"{entry['name']}.log"
            raise EngineError(
                f"{service} {entry['name']} (pid {entry['pid']}) exited while starting; "
                f"last log line: {last_line(log)} (log: {log})"
            )


def last_line(path: Path) -> str:
    try:
        lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return "(no log)"
    return lines[-1][:300] if lines else "(empty log)"


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def alive(pid: int, marker: str) -> bool:
    line = cmdline(pid)
    return bool(line) and marker in line


def stop_pid(pid: int, marker: str, timeout: float = 20.0) -> bool:
    """SIGTERM, wait, then SIGKILL; only a process this storbench spawned and still runs, or one whose command
    line still contains ``marker`` (never a reused PID)."""
    if not still_running(pid, marker):
        return False
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 5.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return True
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not still_running(pid, marker) or _zombie(pid):
                _reap(pid)
                return True
            time.sleep(0.1)
    return not still_running(pid, marker)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (OSError, IndexError):
        return False


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def running_state(workdir: Path) -> dict[str, Any] | None:
    """The recorded state while its main process (``pid``, ``marker``) is alive, else None."""
    state = read_state(workdir)
    if state and state.get("pid") and alive(state["pid"], state["marker"]):
        return state
    return None


def read_state(workdir: Path) -> dict[str, Any] | None:
    path = workdir / STATE
    return json.loads(path.read_text()) if path.exists() else None


def write_private(path: Path, text: str) -> None:
    """A file readable by its owner only from the start (it may hold keys): never a moment world-readable."""
    path.unlink(missing_ok=True)  # an existing file would keep its mode
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as handle:
        handle.write(text)


def write_state(workdir: Path, state: dict[str, Any]) -> None:
    """state.json, owner-only: the S3 and RGW services keep their keys in it."""
    tmp = workdir / (STATE + ".tmp")
    write_private(tmp, json.dumps(state, indent=2))
    os.replace(tmp, workdir / STATE)


def service_dir(home: Path, name: str) -> Path:
    """Where service ``name`` keeps its state under results home ``home``."""
    return home / "services" / name


def worker_host(index: int) -> str:
    """Worker ``index`` (1-based) binds 127.0.0.(index+1); the master has 127.0.0.1."""
    return f"127.0.0.{index + 1}"


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (executor JVMs, their Python workers), children first-found order."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    found, queue = [], [pid]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def stop_tree(entry: dict[str, Any]) -> bool:
    """The process and whatever it spawned that outlives it (a worker's executors), each by PID."""
    if not alive(entry["pid"], entry["marker"]):
        return False
    below = [(pid, cmdline(pid)) for pid in descendants(entry["pid"])]
    stopped = stop_pid(entry["pid"], entry["marker"], timeout=20.0)
    for pid, line in reversed(below):
        if line:  # still the same process only while its command line is the one seen under the worker
            stop_pid(pid, line, timeout=10.0)
    return stopped
