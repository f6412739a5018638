"""The secrets tests' watched CLI (tests/test_secrets_proc*.py): the real CLI in a child process while
tests/proc_watch.py polls every descendant's command line and environment for the secrets given, and the
samples its run stored."""

import json
import os
import secrets
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.helpers import QUICK_JVM, SRC
from tests.proc_watch import ProcWatch

CANARY = f"CANARY25{secrets.token_hex(6)}"
FIO_TINY = ("--set", "size=8m", "--set", "runtime_s=2", "--set", "ramp_time_s=0", "--set", "numjobs=1")
needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")


def watched_cli(
    home: Path,
    watch_secrets: dict[str, str],
    *args: str,
    env_extra: dict[str, str] | None = None,
    user_gave: tuple[str, ...] = (),
    results: str | None = None,
    extra_secrets: dict[str, str] | None = None,
    timeout: float = 900,
) -> tuple[subprocess.CompletedProcess, ProcWatch]:
    """The real CLI in a child process, watched from its start to its end. ``user_gave``: which of the CLI's
    own "cmdline"/"environ" hold a secret the test put there (exempt for that process alone)."""
    env = {
        **os.environ,
        "PYTHONPATH": SRC,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_SUBMIT_OPTS": os.environ.get("SPARK_SUBMIT_OPTS", QUICK_JVM),
        **(env_extra or {}),
    }
    argv = [sys.executable, "-m", "storbench", "--results", results or str(home), *args]
    watch = ProcWatch({**watch_secrets, **(extra_secrets or {})})  # extra: secrets the user never gave the CLI
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if "cmdline" in user_gave:
        watch.exempt_cmdline.add(proc.pid)
    if "environ" in user_gave:
        watch.exempt_environ.add(proc.pid)
    with watch:  # from before the CLI starts anything: Python's start-up takes far longer than one poll
        try:
            out, err = proc.communicate(timeout=timeout)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    return subprocess.CompletedProcess(argv, proc.returncode, out, err), watch


def samples_of(done: subprocess.CompletedProcess) -> list[dict]:
    outcome = json.loads(done.stdout)
    return [json.loads(line) for line in (Path(outcome["path"]) / "samples.jsonl").read_text().splitlines()]


def value_of(samples: list[dict], workload: str, metric: str) -> float:
    (value,) = [s["value"] for s in samples if s["workload"] == workload and s["metric"] == metric and not s["labels"]]
    return value
