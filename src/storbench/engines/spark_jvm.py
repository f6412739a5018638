"""Spark's JVM never outlives storbench: not after a start-up a signal (Ctrl-C, SIGTERM, SIGHUP) cut short, not
at exit (its stdin closed, then waited for); and py4j's own tracebacks of an interrupted call kept off stderr.

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

import atexit
import logging
import os
import signal
import subprocess
import sys
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


def _end_jvm() -> None:
    """At exit: PySpark's JVM ends by itself once its stdin closes; wait for it, so that it does not outlive us."""
    context = sys.modules.get("pyspark.context")  # None: Spark was never started
    proc = getattr(getattr(getattr(context, "SparkContext", None), "_gateway", None), "proc", None)
    if proc is None or proc.poll() is not None:
        return
    proc.stdin.close()
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


atexit.register(_end_jvm)


def running_tasks(context: Any) -> int:
    """Tasks still running on the executors: a cancelled job is over at once for the scheduler, while its
    tasks (and the processes they started: a fan-out's engines) end when the executors have killed them."""
    return sum(info.numRunningTasks() for info in context._jsc.sc().statusTracker().getExecutorInfos())


def _not_from_py4j(record: logging.LogRecord) -> bool:
    return f"{os.sep}py4j{os.sep}" not in record.pathname


def quiet_py4j() -> None:
    """py4j reports a call cut short by an interrupt (Ctrl-C, or SIGTERM made one) with a traceback on
    stderr, through the root logger; storbench says it was interrupted in one line of its own instead.
    Its own loggers stay quiet too (a failed call still reaches storbench as an exception)."""
    root = logging.getLogger()
    if _not_from_py4j not in root.filters:
        root.addFilter(_not_from_py4j)
    logging.getLogger("py4j").setLevel(logging.CRITICAL + 1)
