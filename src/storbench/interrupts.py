"""SIGTERM and SIGHUP stop storbench as Ctrl-C does, and no signal cuts a run's cleanup short.

A `timeout` expiry, a closed SSH session or a scheduler's kill sends SIGTERM or SIGHUP to
storbench alone. Each becomes one KeyboardInterrupt, so the code that handles Ctrl-C (the
run marked interrupted, its report written, every child process stopped) handles it too; the exit
status still names the signal, 128 + its number as shells report it (SIGINT 130, SIGTERM 143, SIGHUP 129).
Once storbench is stopping, or while a cleanup runs inside ``shielded()``, further signals
are noted and not raised.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_received: list[int] = []
_shields = 0
_installed = False


def _on_signal(signum: int, _frame: Any) -> None:
    _received.append(signum)
    if len(_received) == 1 and not _shields:
        raise KeyboardInterrupt


def install() -> None:
    """The process's own entry point: SIGINT, SIGTERM and SIGHUP interrupt it once, later ones are ignored."""
    global _installed
    _received.clear()
    _installed = True
    for sig in SIGNALS:
        signal.signal(sig, _on_signal)


def reclaim() -> None:
    """Takes the signals back from a library that set its own handler (pyspark's SparkContext sets SIGINT's,
    which cancels Spark's jobs itself before the run can quiet them), when :func:`install` set storbench's."""
    if _installed and threading.current_thread() is threading.main_thread():
        for sig in SIGNALS:
            signal.signal(sig, _on_signal)


def installed() -> bool:
    """Whether storbench's handlers are in place (a signal then interrupts; without them it kills)."""
    return _installed


def received() -> int:
    """How many signals have arrived since :func:`install` (a mark to compare with later)."""
    return len(_received)


def exit_code() -> int:
    """The status of a process stopped by a signal: 128 + the first signal received (SIGINT's when none came
    through the handlers, such as a KeyboardInterrupt raised without them)."""
    return 128 + int(_received[0] if _received else signal.SIGINT)


def exiting() -> None:
    """Nothing is left to clean up: later signals are ignored, so that the exit status stays storbench's own
    (Python restores the default handlers while it shuts down, and the default kills)."""
    global _installed
    _installed = False
    for sig in SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


@contextmanager
def shielded() -> Iterator[Callable[[], bool]]:
    """Signals arriving inside are noted, not raised; yields a check: did one arrive?"""
    global _shields
    before = len(_received)
    previous = {}
    if threading.current_thread() is threading.main_thread():  # only the main thread may set handlers
        previous = {sig: signal.signal(sig, _on_signal) for sig in SIGNALS}
    _shields += 1
    try:
        yield lambda: len(_received) > before
    finally:
        _shields -= 1
        for sig, handler in previous.items():
            signal.signal(sig, handler)
