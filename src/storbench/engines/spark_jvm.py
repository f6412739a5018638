"""Spark's JVM never outlives a start-up that a signal (Ctrl-C, SIGTERM, SIGHUP) cut short.

PySpark's ``launch_gateway`` starts ``spark-submit`` (which becomes the JVM) and keeps that process to
itself until the JVM has written its connection details; an interrupt in that wait loses it. PySpark then
removes the directory the JVM writes those details to, so the JVM, once up, fails to write them, its main
thread dies and py4j's server thread keeps it running for good, though storbench has exited (issue 38
item 10). :func:`killed_if_interrupted` records the process as PySpark starts it, in a process group of its
own (spark-submit's launcher JVM and the driver JVM it becomes), and kills that group when the start fails
or is interrupted before the gateway is handed to the SparkContext (from then on storbench's exit closes the
JVM's stdin, which ends it).
"""

from __future__ import annotations

import os
import signal
import subprocess
from contextlib import contextmanager
from typing import Any, Iterator

from storbench import interrupts

KILL_WAIT_S = 30


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL to the process group ``proc`` leads (nothing in it is worth a graceful stop: no SparkContext
    exists yet), then reap ``proc``."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(KILL_WAIT_S)
    except subprocess.TimeoutExpired:
        pass


@contextmanager
def killed_if_interrupted() -> Iterator[None]:
    """Around PySpark's ``launch_gateway`` and the SparkContext's taking the gateway: the JVM process group it
    starts is killed when anything (an interrupt above all) leaves this block by an exception."""
    from pyspark import java_gateway

    launched: list[subprocess.Popen] = []
    original = java_gateway.Popen

    def recorded(*args: Any, **kwargs: Any) -> subprocess.Popen:
        proc = original(*args, process_group=0, **kwargs)  # its own group: its launcher JVM goes with it
        launched.append(proc)
        return proc

    java_gateway.Popen = recorded  # launch_gateway looks Popen up in its module when it calls it
    try:
        yield
    except BaseException:
        with interrupts.shielded():  # a second signal must not cut the kill short
            for proc in launched:
                kill_group(proc)
        raise
    finally:
        java_gateway.Popen = original
