"""The run directory's ``spark.log`` (the JVM's stdout and stderr): what a failed run shows of it.

Spark, Hadoop and the JVM write start-up notes and warnings (incubator modules, NativeCodeLoader,
the default log level) that never reach the terminal; when a run fails, its last relevant lines
(errors, exceptions, their causes and the line before each) are printed with the log's path.
"""

from __future__ import annotations

import re
from pathlib import Path

JVM_LOG = "spark.log"  # the JVM's stdout and stderr, in the run directory
TAIL_LINES = 8
TAIL_BYTES = 256 * 1024  # the end of a long log is enough to find its last errors
RELEVANT = re.compile(r"\b(ERROR|FATAL|SEVERE)\b|Exception|Error:|Caused by:|^\s+at \S+\(")
NOISE = re.compile(r"Using incubator modules|NativeCodeLoader|Setting default log level|To adjust logging level")
# Root causes that say everything: the log's stack frames would add nothing but noise to the failure
COMPLETE = re.compile(r"No space left on device|Disk quota exceeded")


def relevant_tail(path: Path, lines: int = TAIL_LINES) -> list[str]:
    """The last ``lines`` relevant lines of the log (errors, exceptions, their causes and first frames), else
    its last non-empty lines; [] when there is no log."""
    try:
        with open(path, "rb") as log:
            log.seek(0, 2)
            log.seek(max(log.tell() - TAIL_BYTES, 0))
            text = log.read().decode("utf-8", "replace")
    except OSError:
        return []
    every = [line.rstrip() for line in text.splitlines() if line.strip() and not NOISE.search(line)]
    keep: set[int] = set()
    frames = 0
    for index, line in enumerate(every):
        if not RELEVANT.search(line):
            frames = 0
            continue
        frames = frames + 1 if line.lstrip().startswith("at ") else 0
        if frames <= 2:  # at most two stack frames after an error line: where, not the whole stack
            keep.add(index)
        if frames == 0 and index:  # the line before an error often names it ("Unrecognized VM option ...")
            keep.add(index - 1)
    return ([every[i] for i in sorted(keep)] or every)[-lines:]


def complete_cause(line: str | None) -> str | None:
    """``line`` (a root cause) with what it means, when it says all there is (a full disk); else None."""
    if line and COMPLETE.search(line):
        return f"{line} (a file system Spark writes to is full: the target, or Spark's local directories)"
    return None


def root_cause(exc: BaseException) -> str | None:
    """For a JVM error (py4j's Py4JJavaError) its root cause's one line, which names what failed
    (``org.apache.hadoop.hdfs.BlockMissingException: Could not obtain block ...``); None for any other error,
    or when the JVM is gone."""
    cause = getattr(exc, "java_exception", None)
    if cause is None:
        return None
    try:
        while cause.getCause() is not None and not cause.getCause().equals(cause):
            cause = cause.getCause()
        text = f"{cause.toString()}".strip()
    except Exception:  # the JVM is gone: the Python text is all there is
        return None
    return text.splitlines()[0] if text else ""
