"""storbench's native load engine (``native/storbench-load``, Rust), driven through files only.

The contract: ``storbench-load run --job JOB.json --result RESULT.json [--records OPS.zst]``
reads a JSON job and writes a JSON result; ``storbench-load merge --result OUT.json IN...``
adds several processes' results together (HDR histograms merged exactly). Nothing here
reads the engine's stdout or stderr: a failure the engine understood is ``"status": "fatal"``
with a one-line ``"fatal"`` message in the result file.

Fan-out: the same job runs in N engine processes, each told its ``process_index`` and a
common wall-clock ``start_at_unix_ms`` so they start together, then their results merge —
as local processes (:func:`run_local`) or as Spark tasks in barrier mode, one per slot or
host (:func:`run_spark_barrier`, storbench.engines.native_fanout). A run's workloads reach both through the
tool engine, ``ctx.engine(NativeEngine).run(NativeSpec(...))``, which holds the local processes it runs (each
in a process group of its own) so that a cancelled run kills them.

Credentials never reach a file, a command line or an environment: a job may hold the S3 keys
(``s3.access_key`` / ``s3.secret_key``) and a CQL login (``cql.username`` / ``cql.password``) in memory, but
the job file written for the engine (mode 0600, in a private temporary directory, removed when the engine
exits) holds the job without them; they reach the engine through a pipe it inherits, named by
``$STORBENCH_SECRETS_FILE`` (:data:`SECRETS_FILE_ENV`: ``/proc/self/fd/N``, under the names of
:data:`CREDENTIAL_ENV` and :data:`CQL_LOGIN_ENV`), in Spark tasks too; the engine reads them once at its
start and nothing of them is left behind, even when storbench is killed. Results never contain them (the
engine echoes no keys).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from storbench import scratch
from storbench.binaries import checkout, native_binary
from storbench.buildparts import build
from storbench.engines.base import register
from storbench.engines.native_fanout import BINARY_NAME, barrier_results
from storbench.engines.native_secrets import _engine_env, split_credentials
from storbench.engines.tool import ToolEngine, kill_group
from storbench.errors import EngineError, WorkloadError
from storbench.telemetry.proc_cpu import CpuWatch

REPO = Path(__file__).resolve().parents[3]  # the clone (tests build native/ from it)
START_DELAY_MS = 400  # processes of one fan-out start together this long after they are spawned


def binary() -> str:
    """The engine binary (binaries.native_binary: $STORBENCH_LOAD_BIN, the wheel's, the clone's release build, PATH),
    built on first use in a clone."""
    found = native_binary()
    if found is None and checkout():
        build("native")
        found = native_binary()
    if found is None:
        raise EngineError(
            "the native load engine (storbench-load) is not built; run scripts/setup.sh --part native "
            "(it builds native/ with cargo)"
            if checkout()
            else "the native load engine (storbench-load) is missing from this installation: install the "
            "storbench wheel built for this platform, or set STORBENCH_LOAD_BIN"
        )
    return found


def version() -> dict[str, Any]:
    done = subprocess.run([binary(), "version"], capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise EngineError(f"{binary()} version failed (exit {done.returncode})")
    return json.loads(done.stdout)


def _private_dir() -> Path:
    return scratch.make("storbench-load-")


def _write_job(path: Path, job: dict[str, Any]) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        json.dump(job, handle)


def _read_result(path: Path, code: int) -> dict[str, Any]:
    if not path.exists():
        raise EngineError(f"storbench-load exited with code {code} without writing a result")
    result = json.loads(path.read_text())
    if result.get("status") != "ok":
        raise WorkloadError(result.get("fatal") or f"storbench-load failed (exit {code})")
    return result


def run_job(job: dict[str, Any], records: Path | None = None, timeout: float | None = None) -> dict[str, Any]:
    """Run one engine process on ``job``; returns its result (raises WorkloadError on a fatal one)."""
    return run_local(job, 1, records=records, timeout=timeout)


def run_local(
    job: dict[str, Any],
    processes: int,
    records: Path | None = None,
    timeout: float | None = None,
    cpu: CpuWatch | None = None,
    running: set[int] | None = None,
) -> dict[str, Any]:
    """The job in ``processes`` local engine processes started together, each in a process group of its own; their
    results merged. ``cpu``: samples the processes' CPU from /proc while they run (telemetry.proc_cpu), as any other
    client's. ``running``: the caller's set of groups in flight (a ToolEngine's), holding these while they run."""
    running = set() if running is None else running
    job, secrets = split_credentials(job)
    work = _private_dir()
    try:
        start_at = int(time.time() * 1000) + (START_DELAY_MS if processes > 1 else 0)
        procs = []
        results = []
        try:  # from the first start: interrupted while starting the others, none keeps running
            for index in range(processes):
                one = {**job, "process_index": index, "process_count": processes}
                if processes > 1:
                    one["start_at_unix_ms"] = start_at
                job_path, result_path = work / f"job-{index}.json", work / f"result-{index}.json"
                _write_job(job_path, one)
                argv = [binary(), "run", "--job", str(job_path), "--result", str(result_path)]
                if records is not None:
                    argv += [
                        "--records",
                        str(records.with_name(f"{records.stem}-{index}{records.suffix}"))
                        if processes > 1
                        else str(records),
                    ]
                env, fds = _engine_env(secrets)
                try:
                    procs.append(
                        (
                            subprocess.Popen(
                                argv,
                                stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL,
                                env=env,
                                pass_fds=fds,
                                start_new_session=True,
                            ),
                            result_path,
                        )
                    )
                finally:
                    for fd in fds:
                        os.close(fd)
                running.add(procs[-1][0].pid)
            if cpu is not None and not cpu.watch([proc.pid for proc, _ in procs], timeout):
                raise subprocess.TimeoutExpired(BINARY_NAME, timeout or 0)
            for proc, result_path in procs:
                code = proc.wait(timeout=timeout)
                results.append(_read_result(result_path, code))
        except subprocess.TimeoutExpired:
            raise WorkloadError(f"storbench-load did not finish within {timeout:.0f} s") from None
        finally:
            for proc, _ in procs:
                if proc.poll() is None:
                    kill_group(proc)
                running.discard(proc.pid)
        if processes == 1:
            return results[0]
        return merge([path for _, path in procs], work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def merge(result_paths: list[Path], work: Path | None = None) -> dict[str, Any]:
    """Several engine results as one (exact histogram merge, series aligned on wall-clock seconds)."""
    own = work is None
    work = work or _private_dir()
    try:
        out = work / "merged.json"
        done = subprocess.run(
            [binary(), "merge", "--result", str(out), *map(str, result_paths)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=120,
        )
        return _read_result(out, done.returncode)
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)


def merge_results(results: list[dict[str, Any]]) -> dict[str, Any]:
    """``merge`` for results held in memory (e.g. returned by Spark tasks)."""
    work = _private_dir()
    try:
        paths = []
        for index, result in enumerate(results):
            path = work / f"part-{index}.json"
            path.write_text(json.dumps(result))
            paths.append(path)
        return merge(paths, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_spark_barrier(spark: Any, job: dict[str, Any], tasks: int, timeout: float | None = None) -> dict[str, Any]:
    """The job in ``tasks`` engine processes started as Spark barrier tasks of the session ``spark``, their results
    merged; ``spark_tasks`` says where each ran, from which binary."""
    answers = barrier_results(spark, job, tasks, binary(), timeout)
    merged = merge_results([a["result"] for a in answers])
    merged["spark_tasks"] = [a["task"] for a in answers]
    return merged


@dataclass
class NativeSpec:
    """One load of the native engine: the job (its credentials held in memory only), how many engine processes
    share it (started together, results merged), where they run (Spark barrier tasks of the session ``spark``, or
    local processes when None), how long they may take, and a CPU watch of the local ones."""

    job: dict[str, Any]
    processes: int = 1
    spark: Any = None
    timeout_s: float | None = None
    cpu: CpuWatch | None = None  # local processes only: Spark's run elsewhere


@register
class NativeEngine(ToolEngine):
    """storbench's own load engine (objects and ycsb workloads; also inside Spark tasks for fan-out)."""

    name = "native"

    def read_version(self) -> str:
        return f"storbench-load {version().get('version', 'unknown')}"

    def run(self, spec: NativeSpec) -> dict[str, Any]:
        """The engine's merged result (WorkloadError on a fatal one, or at the time limit)."""
        if spec.spark is not None:
            return run_spark_barrier(spec.spark, spec.job, spec.processes, timeout=spec.timeout_s)
        return run_local(spec.job, spec.processes, timeout=spec.timeout_s, cpu=spec.cpu, running=self.running)
