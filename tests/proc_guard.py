"""The tests' one guard on starting programs: a single wrapper on ``subprocess.Popen.__init__`` (which
run/check_output and asyncio use), installed once, that asks each active refusal whether a program may start.

Users: the fast lane's guard (tests/lanes.py: an unmarked test may start only cheap tools) and the run core's
tests (tests/run/conftest.py: nothing starts). A refused start fails the test with one line, before the
program starts, as ``pytest.fail`` (a BaseException: no ``except Exception`` in the code under test hides it);
the refusal also keeps the line, so a failure swallowed by the code or raised on another thread still counts.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

_active: list[Refusal] = []  # the refusals in force now, outermost first


class Refusal:
    """``why(program)`` returns the failure's line for a program that may not start, or None."""

    def __init__(self, why: Callable[[str], str | None]):
        self.why = why
        self.violations: list[str] = []


def program_name(args: tuple, kwargs: dict) -> str:
    """The base name of the program a ``Popen(*args, **kwargs)`` call would start."""
    argv = args[0] if args else kwargs.get("args", "")
    if isinstance(argv, (str, bytes, os.PathLike)):
        argv = [argv] if not kwargs.get("shell") else str(argv).split()
    return os.path.basename(os.fsdecode(kwargs.get("executable") or (argv[0] if argv else "")))


def _install() -> None:
    if hasattr(subprocess.Popen.__init__, "proc_guard"):
        return
    original = subprocess.Popen.__init__

    def guarded(self, *args, **kwargs):
        if _active:
            program = program_name(args, kwargs)
            for refusal in reversed(_active):
                message = refusal.why(program)
                if message:
                    refusal.violations.append(message)
                    pytest.fail(message, pytrace=False)
        original(self, *args, **kwargs)

    guarded.proc_guard = True
    subprocess.Popen.__init__ = guarded


@contextmanager
def refusing(why: Callable[[str], str | None]) -> Iterator[Refusal]:
    """While inside, a program for which ``why`` returns a line does not start; the test fails with that line."""
    _install()
    refusal = Refusal(why)
    _active.append(refusal)
    try:
        yield refusal
    finally:
        _active.remove(refusal)  # not pop(): a fixture's refusal may outlive the set-up's that began around it
