"""Tool engines: an engine that is a command-line tool (fio, rados, storbench-load, Hadoop's tools).

A tool engine's ``run(spec)`` takes a small per-tool dataclass that says what to run, where and within
which limits (never an argv) and returns what the tool reported, read by the tool's own parsers. The
engine owns everything about the process: its command line, its start in a process group of its own,
its time limit, its end when storbench is interrupted (Ctrl-C, SIGTERM: both arrive as
KeyboardInterrupt, see storbench.interrupts) or the run cancels its engines, and the tool's version
(``start`` reads it, so a missing or too old tool fails before anything runs, and the run records it).

A workload reaches the run's engine with ``ctx.engine(FioEngine)``; its ``check``, which runs before the
run's engines exist, with ``FioEngine.of(ctx.engines)``. Either is the class registered under the
engine's name, which a test may replace with a stand-in (:func:`stand_in`) that returns canned output.
"""

from __future__ import annotations

import os
import signal
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, TypeVar

from storbench.engines import base
from storbench.engines.base import Engine, all_engines

T = TypeVar("T", bound="ToolEngine")

# -- time limits for a tool's run ---------------------------------------------------------

FLOOR_RATE_BPS = 1_000_000  # slower than 1 MB/s, a device is taken as stalled
MARGIN_S = 600  # start-up, layout of metadata, fsync and exit
MAX_SIZE_TIMEOUT_S = 6 * 3600  # a size-based run may take at most this long


def io_timeout(nbytes: int = 0, seconds: float = 0) -> float:
    """Seconds a tool may run: ``seconds`` of time-based work, else ``nbytes`` at the floor rate (at most
    MAX_SIZE_TIMEOUT_S), plus MARGIN_S."""
    if seconds:
        return seconds + MARGIN_S
    return min(nbytes / FLOOR_RATE_BPS + MARGIN_S, MAX_SIZE_TIMEOUT_S)


# -- a tool's processes ---------------------------------------------------------------------


def kill_group(proc: subprocess.Popen) -> None:
    """Kills ``proc``'s process group (its forked workers too: fio's jobs) and reaps ``proc``."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def run_limited(
    argv: list[str], timeout: float | None, cwd: str | Path, running: set[int] | None = None
) -> subprocess.CompletedProcess:
    """``subprocess.run`` in a process group of its own that is killed whole (forked workers too) when
    ``timeout`` expires (subprocess.TimeoutExpired) or storbench is interrupted. ``running``: the caller's
    set of groups in flight (a ToolEngine's, which ``cancel`` kills), holding this one while it runs."""
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        cwd=str(cwd),
        start_new_session=True,
    )
    if running is not None:
        running.add(proc.pid)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:
        kill_group(proc)
        proc.communicate()
        raise
    finally:
        if running is not None:
            running.discard(proc.pid)
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


class ToolEngine(Engine):
    """An engine that is a command-line tool: started = found and its version read; ``run(spec)`` runs it."""

    def __init__(self) -> None:
        self.version: str | None = None
        self.running: set[int] = set()  # process groups of this engine's tool runs in flight

    @classmethod
    def of(cls: type[T], engines: dict[str, Engine] | None = None) -> T:
        """The run's engine of this kind (``engines``: the run's), or before the run's engines are made (a
        workload's ``check``) a new one of the class registered under its name, for the checks alone."""
        engine = (engines or {}).get(cls.name) or all_engines()[cls.name]()
        assert isinstance(engine, cls), f"{cls.name}: registered as {type(engine).__name__}, not a {cls.__name__}"
        return engine

    def read_version(self) -> str:
        """The tool's version; EngineError when it is missing or cannot serve (too old)."""
        raise NotImplementedError

    def run(self, spec: Any) -> Any:
        """Runs the tool as ``spec`` describes and returns what it reported (each tool its own types)."""
        raise NotImplementedError

    def start(self) -> None:
        self.tool_version()

    def tool_version(self) -> str:
        """The tool's version, read once (by ``start``, or now when a workload's check asks first)."""
        if self.version is None:
            self.version = self.read_version()
        return self.version

    def versions(self) -> dict[str, str]:
        return {self.name: self.version} if self.version else {}

    def spawn(self, argv: list[str], **popen: Any) -> subprocess.Popen:
        """The tool started in a process group of its own, no stdin; held as running until :meth:`reap`."""
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, start_new_session=True, **popen)
        self.running.add(proc.pid)
        return proc

    def wait(self, proc: subprocess.Popen, timeout: float | None) -> int:
        """``proc``'s exit code; at ``timeout`` (subprocess.TimeoutExpired) or an interrupt its group is killed
        and the exception goes on."""
        try:
            return proc.wait(timeout=timeout)
        except BaseException:
            self.reap(proc)
            raise
        finally:
            self.running.discard(proc.pid)

    def reap(self, proc: subprocess.Popen) -> None:
        """Kills ``proc``'s group if it still runs, and forgets it."""
        if proc.poll() is None:
            kill_group(proc)
        self.running.discard(proc.pid)

    def cancel(self) -> None:
        """An interrupted run: every tool process still running is killed with its group."""
        for group in list(self.running):
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.running.clear()


@contextmanager
def stand_in(cls: type[ToolEngine]) -> Iterator[type[ToolEngine]]:
    """Tests: ``cls`` (a subclass of a registered tool engine, of the same name) is the engine of that name
    while the block runs, for the run core and the workloads' checks alike; the real one is back after it."""
    real = all_engines()[cls.name]
    assert issubclass(cls, real), f"a stand-in for {cls.name} must subclass {real.__name__}"
    base._ENGINES[cls.name] = cls
    try:
        yield cls
    finally:
        base._ENGINES[cls.name] = real
