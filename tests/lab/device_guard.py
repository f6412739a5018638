"""The raw-device guard's cases, run inside the lab guest as root (tests/lab/test_device_guard.py).

``python device_guard.py FIRST SECOND`` (two blank-able lab drives) runs, in one process (each Python start
costs seconds under TCG):

- swapped: fio-write checks a symlink to FIRST, the link is re-pointed to SECOND, then the run must refuse
  before fio writes;
- gained: fio-write checks the blank SECOND, it is formatted ext4, then the run must refuse;
- ext4: ``storbench run fio-write --target FIRST --allow-device-overwrite`` on FIRST formatted ext4, through
  the CLI's ``main`` (what the ``storbench`` command runs), its exit code and stderr.

It prints one JSON line: each case's refusal and what the host test checks besides. Read by the guest from the
host's tree, not imported by the tests: storbench (PYTHONPATH) and the standard library only.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from storbench.cli import main as storbench_main
from storbench.context import RunContext
from storbench.engines.fio import FioEngine
from storbench.suites import load_suite
from storbench.targets import parse_target
from storbench.workloads import get_workload


def sh(*argv: str) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def wiped(*devices: str) -> None:
    sh("wipefs", "-a", "-q", *devices)


def scratch() -> str:
    """A private directory, removed when the cases end."""
    made = tempfile.mkdtemp(prefix="storbench-guard-")
    atexit.register(shutil.rmtree, made, True)
    return made


def digest(device: str) -> str:
    """The device's whole content (the guard drives are small), to show what a refused run did not write."""
    with open(device, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def fio_write(target: str, run_id: str):
    """fio-write (4 MiB) on ``target`` with --allow-device-overwrite: its context, parameters and workload."""
    ctx = RunContext(
        run_id=run_id,
        target=parse_target(target),
        root_uri="",
        allow_device_overwrite=True,
        engines={"fio": FioEngine()},
    )
    _, _, per = load_suite("fio-basic").resolve("tiny", {"runtime_s": "0", "size": "4m"})
    return ctx, per["fio-write"], get_workload("fio-write")


def refusal(workload, ctx, params) -> dict | None:
    try:
        workload.run(ctx, params)
    except Exception as exc:  # the guard's TargetError or InputError; anything else is shown to the test too
        return {"type": type(exc).__name__, "line": str(exc)}
    finally:
        workload.cleanup(ctx, params)  # the run's scratch (job file, fio's output) when it went ahead
    return None


def swapped(first: str, second: str) -> dict:
    wiped(first, second)
    link = os.path.join(scratch(), "disk")
    os.symlink(first, link)
    ctx, params, workload = fio_write(link, "guard-swapped")
    workload.check(ctx, params)
    os.unlink(link)
    os.symlink(second, link)  # re-pointed between the check and the write
    before = digest(second)
    refused = refusal(workload, ctx, params)
    return {
        "link": link,
        "refused": refused,
        "second_unchanged": digest(second) == before,
        "checked": os.stat(first).st_rdev,
        "swapped_to": os.stat(second).st_rdev,
    }


def gained(device: str) -> dict:
    wiped(device)
    ctx, params, workload = fio_write(device, "guard-gained")
    workload.check(ctx, params)
    sh("mkfs.ext4", "-q", "-F", device)  # a file system made between the check and the write
    before = digest(device)
    refused = refusal(workload, ctx, params)
    return {"refused": refused, "unchanged": digest(device) == before}


def cli(*argv: str) -> tuple[int, str]:
    """``storbench ARGV`` in this process: its exit code and everything it wrote to stderr (file descriptor 2)."""
    with tempfile.TemporaryFile() as err:
        saved = os.dup(2)
        sys.stderr.flush()
        os.dup2(err.fileno(), 2)
        try:
            code = storbench_main(list(argv))
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        err.seek(0)
        return code, err.read().decode(errors="replace")


def holding_ext4(device: str) -> dict:
    wiped(device)
    sh("mkfs.ext4", "-q", "-F", device)
    home = Path(scratch())
    before = digest(device)
    code, stderr = cli(
        "--results",
        str(home),
        "run",
        "fio-write",
        "--target",
        device,
        "--allow-device-overwrite",
        "--set",
        "size=4m",
        "--quiet",
    )
    runs = sorted(p.name for p in (home / "runs").iterdir()) if (home / "runs").is_dir() else []
    return {"code": code, "stderr": stderr, "runs": runs, "unchanged": digest(device) == before}


if __name__ == "__main__":
    first, second = sys.argv[1:3]
    found = {"swapped": swapped(first, second), "gained": gained(second), "ext4": holding_ext4(first)}
    print(json.dumps(found))
