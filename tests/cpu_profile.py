"""Opt-in: where the suite's CPU goes. With STORBENCH_TEST_CPU=FILE set, each test appends one line to FILE: its
wall seconds, the CPU seconds of the test process and of the children it reaped (a CLI run, its Spark JVM) over
setup, call and teardown, and its node id. A daemon a fixture leaves running is counted only when reaped.
The full lane is CPU-bound (more workers than cores), so these, not wall times, show what to make cheaper."""

from __future__ import annotations

import os
import resource
import time

import pytest


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    path = os.environ.get("STORBENCH_TEST_CPU")
    if not path:
        yield
        return
    wall, own, children = time.monotonic(), _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    yield
    line = (
        f"{time.monotonic() - wall:.2f} {_cpu(resource.RUSAGE_SELF) - own:.2f} "
        f"{_cpu(resource.RUSAGE_CHILDREN) - children:.2f} {item.nodeid}\n"
    )
    with open(path, "a") as out:  # one short append per test: lines from parallel workers do not interleave
        out.write(line)
