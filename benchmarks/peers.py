"""Shared pieces of the ratio benchmarks: fio as the device's ceiling, and one storbench run via the API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from storbench import api  # noqa: E402
from storbench.results.model import Sample  # noqa: E402
from storbench.results.store import ResultStore  # noqa: E402
from storbench.run import RunOptions  # noqa: E402


def fio_write_mbps(work: Path, size: int, jobs: int = 1, direct: bool = True, fsync: bool | None = None) -> float:
    """fio sequential write, 1 MiB blocks, libaio, iodepth 16: MB/s.

    direct=True: O_DIRECT and an fsync at the end (the device's rate); direct=False:
    buffered without fsync, like TestDFSIO and Hadoop writers, which never sync. ``fsync``
    overrides the end-of-job fsync (inside fio's time): buffered with fsync is a writer whose
    window ends when its data is durable, as storbench's ``flush``.
    fio writes exactly ``size`` bytes (split over ``jobs``): the storbench side's bytes.
    """
    fsync = direct if fsync is None else fsync
    result = subprocess.run(["fio", "--name=seqwrite", f"--directory={work}", "--rw=write", "--bs=1M",
                             f"--size={size // jobs}", f"--numjobs={jobs}", "--group_reporting",
                             f"--direct={int(direct)}", "--ioengine=libaio", "--iodepth=16",
                             f"--end_fsync={int(fsync)}",
                             "--output-format=json"], check=True, capture_output=True, text=True)
    job = json.loads(result.stdout)["jobs"][0]
    for name in os.listdir(work):
        if name.startswith("seqwrite"):
            os.unlink(work / name)
    return job["write"]["bw_bytes"] / 1e6


def run_suite(work: Path, suite: str, scale: str, overrides: dict[str, Any] | None = None,
              master: str | None = None, warmup: int = 0) -> list[Sample]:
    """One repetition of a built-in suite (or one workload) on ``work``, after ``warmup`` unrecorded ones;
    returns its samples (exits on failure)."""
    store = ResultStore(work / "home")
    target = work / f"target-{suite}"
    target.mkdir()
    options = RunOptions(suite=suite, label="bench", target=str(target), scale=scale, repeat=1,
                         overrides=overrides or {}, warmup=warmup)
    if master:
        options.engine_options["spark_master"] = master
    outcome = api.run(options, store)
    if outcome.status != "succeeded":
        raise SystemExit(f"storbench run {outcome.status}: {outcome.errors}")
    return store.resolve(outcome.run_id).samples


def run_cli(home: Path, *args: str) -> tuple[dict[str, Any], float]:
    """`storbench --results HOME ARGS --json` in a child process: its outcome and its wall time (s)."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    command = [sys.executable, "-m", "storbench", "--results", str(home), *args, "--json"]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    wall = time.monotonic() - started
    if done.returncode != 0:
        last = done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}"
        sys.exit(f"storbench failed: {last}")
    return json.loads(done.stdout), wall


def storbench_cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    """`storbench --results HOME ARGS` in a child process, output captured (the caller judges the exit)."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src"),
           "SPARK_LOCAL_IP": "127.0.0.1"}
    return subprocess.run([sys.executable, "-m", "storbench", "--results", str(home), *args],
                          capture_output=True, text=True, env=env, timeout=3600)


@contextmanager
def s3_service(home: Path) -> Iterator[None]:
    """storbench's own SeaweedFS (`services up s3`) in ``home`` for the block, stopped after."""
    up = storbench_cli(home, "services", "up", "s3")
    if up.returncode != 0:
        sys.exit(up.stderr)
    try:
        yield
    finally:
        storbench_cli(home, "services", "down", "s3")


def drop_written(work: Path) -> None:
    """Between the two sides of a write benchmark: everything dirty reaches the disk (sync), and this
    benchmark's own files leave the page cache (fadvise DONTNEED), so neither side pays for the other's
    write-back or starts with the other's pages cached. Other users' cached pages are left alone."""
    from storbench.targets.base import evict_from_page_cache

    os.sync()
    evict_from_page_cache(work)
