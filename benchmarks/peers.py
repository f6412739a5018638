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


def fio_write_mbps(
    work: Path, size: int, jobs: int = 1, direct: bool = True, fsync: bool | None = None, preallocate: bool = True
) -> float:
    """fio sequential write, 1 MiB blocks, libaio, iodepth 16: MB/s.

    direct=True: O_DIRECT and an fsync at the end (the device's rate); direct=False:
    buffered without fsync, like TestDFSIO and Hadoop writers, which never sync. ``fsync``
    overrides the end-of-job fsync (inside fio's time): buffered with fsync is a writer whose
    window ends when its data is durable, as storbench's ``flush``.
    fio writes exactly ``size`` bytes (split over ``jobs``): the storbench side's bytes.
    ``preallocate=False``: no fallocate of the files before fio's clock starts (fio's default allocates
    their blocks outside its time; a writer that creates its files allocates them as it writes).
    """
    fsync = direct if fsync is None else fsync
    result = subprocess.run(
        [
            "fio",
            "--name=seqwrite",
            f"--directory={work}",
            "--rw=write",
            "--bs=1M",
            f"--size={size // jobs}",
            f"--numjobs={jobs}",
            "--group_reporting",
            f"--direct={int(direct)}",
            "--ioengine=libaio",
            "--iodepth=16",
            f"--end_fsync={int(fsync)}",
            *([] if preallocate else ["--fallocate=none"]),
            "--output-format=json",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    job = json.loads(result.stdout)["jobs"][0]
    for name in os.listdir(work):
        if name.startswith("seqwrite"):
            os.unlink(work / name)
    return job["write"]["bw_bytes"] / 1e6


def run_suite(
    work: Path,
    suite: str,
    scale: str,
    overrides: dict[str, Any] | None = None,
    master: str | None = None,
    warmup: int = 0,
) -> list[Sample]:
    """One repetition of a built-in suite (or one workload) on ``work``, after ``warmup`` unrecorded ones;
    returns its samples (exits on failure)."""
    store = ResultStore(work / "home")
    target = work / f"target-{suite}"
    target.mkdir()
    options = RunOptions(
        suite=suite, label="bench", target=str(target), scale=scale, repeat=1, overrides=overrides or {}, warmup=warmup
    )
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
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src"), "SPARK_LOCAL_IP": "127.0.0.1"}
    return subprocess.run(
        [sys.executable, "-m", "storbench", "--results", str(home), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=3600,
    )


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


class SparkWorkloads:
    """storbench's Spark workloads run as the run loop runs them (the engine's tag around prepare + run, the
    window the workload's own ``ctx.measure``), all in ONE Spark session: its start-up is outside every round,
    as a peer's process start is outside the peer's own timer. ``modes`` gives one context per mode
    (``default``/``compat``), each under its own directory of the run root, sharing the session."""

    def __init__(
        self,
        target_uri: str,
        home: Path,
        master: str,
        modes: tuple[str, ...] = ("default",),
        app: str = "storbench benchmark",
        conf: dict[str, str] | None = None,
    ):
        from storbench.engines.spark import SparkEngine, target_conf
        from storbench.targets.base import TargetOptions, parse_target

        self.target = parse_target(target_uri, TargetOptions(home))
        root = self.target.claim(f"bench-{os.getpid()}") or ""
        self.engine = SparkEngine(
            master, {**target_conf(self.target.facts()), **(conf or {})}, self.target.scratch_dir(), app
        )
        self.modes = modes
        self._contexts(root)
        self.target.attach({"spark": self.engine}, 0)

    def _contexts(self, root: str) -> None:
        from storbench.context import RunContext
        from storbench.engines.spark import SparkEngine

        root = SparkEngine.data_uri(self.target, root)
        self.contexts = {
            mode: RunContext(f"bench-{mode}", self.target, f"{root}/{mode}", {"spark": self.engine}, mode=mode)
            for mode in self.modes
        }

    def __enter__(self) -> "SparkWorkloads":
        self.engine.start()
        if self.target.root_uri is None:  # hdfs://: claimed through the started session's Hadoop client
            self.target.attach({"spark": self.engine}, 0)
            self._contexts(self.target.root_uri or "")
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.engine.stop()
        finally:
            self.target.release()

    def run(
        self, name: str, overrides: dict[str, Any] | None = None, mode: str = "default", warmup: bool = False
    ) -> tuple[float, list[Sample]]:
        """One repetition of workload ``name`` (its defaults, then ``overrides``): its window's seconds and its
        samples (the workload's and the engine's: S3A requests on s3://); ``warmup``: an unsampled job group."""
        from storbench.context import WindowRecord
        from storbench.engines.base import Tag
        from storbench.workloads import get_workload

        workload, ctx = get_workload(name), self.contexts[mode]
        given = overrides or {}
        params = {p.name: p.coerce(given.get(p.name, p.default), name) for p in workload.params}
        workload.check(ctx, params)
        ctx.window = WindowRecord.for_params(params)
        tag = Tag(name, -1 if warmup else 1)
        self.engine.begin(tag)
        workload.prepare(ctx, params)
        samples = list(workload.run(ctx, params)) + self.engine.end(tag)
        window = ctx.window.span
        if window is None:
            raise SystemExit(f"workload {name} did not time its action")
        return window.end - window.start, samples
