"""storbench's native load engine (``native/storbench-load``, Rust), driven through files only.

The contract: ``storbench-load run --job JOB.json --result RESULT.json [--records OPS.zst]``
reads a JSON job and writes a JSON result; ``storbench-load merge --result OUT.json IN...``
adds several processes' results together (HDR histograms merged exactly). Nothing here
reads the engine's stdout or stderr: a failure the engine understood is ``"status": "fatal"``
with a one-line ``"fatal"`` message in the result file.

Fan-out: the same job runs in N engine processes, each told its ``process_index`` and a
common wall-clock ``start_at_unix_ms`` so they start together, then their results merge —
as local processes (:func:`run_local`) or as Spark tasks in barrier mode, one per slot or
host (:func:`run_spark_barrier`).

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
import secrets as _secrets
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from storbench import scratch
from storbench.engines.base import tool_engine
from storbench.binaries import checkout, native_binary
from storbench.buildparts import build
from storbench.errors import EngineError, WorkloadError
from storbench.telemetry.proc_cpu import CpuWatch
from storbench.engines.native_secrets import SECRETS_FILE_ENV, _engine_env, split_credentials

REPO = Path(__file__).resolve().parents[3]  # the clone (tests build native/ from it)
BINARY_NAME = "storbench-load"
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


NativeEngine = tool_engine(
    "native",
    lambda: f"storbench-load {version().get('version', 'unknown')}",
    "storbench's own load engine (objects workloads; also inside Spark tasks for fan-out).",
)


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
) -> dict[str, Any]:
    """The job in ``processes`` local engine processes started together; their results merged. ``cpu``: samples
    the processes' CPU from /proc while they run (telemetry.proc_cpu), as any other client's."""
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
                            ),
                            result_path,
                        )
                    )
                finally:
                    for fd in fds:
                        os.close(fd)
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
                    proc.kill()
                    proc.wait()
        if processes == 1:
            return results[0]
        return merge([path for _, path in procs], work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(
    job: dict[str, Any], processes: int, *, spark: Any = None, timeout: float | None = None, cpu: CpuWatch | None = None
) -> dict[str, Any]:
    """The job in ``processes`` engine processes started together, their results merged: Spark barrier tasks
    of the session ``spark``, or local processes when it is None (``cpu`` watches those; Spark's run elsewhere)."""
    if spark is not None:
        return run_spark_barrier(spark, job, processes, timeout=timeout)
    return run_local(job, processes, timeout=timeout, cpu=cpu)


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


# argv[0] of the engines of this process's Spark fan-outs: each names its fan-out, so that a cancelled
# fan-out's engines (a killed task's engine outlives its job by a moment) can be waited for on this host
_fanout_names: set[str] = set()


def _running(names: set[str], proc: Path = Path("/proc")) -> list[int]:
    """The processes of this host whose argv[0] is one of ``names``."""
    found = []
    for entry in proc.iterdir():
        try:
            if entry.name.isdigit() and (entry / "cmdline").read_bytes().split(b"\0")[0].decode() in names:
                found.append(int(entry.name))
        except (OSError, UnicodeDecodeError):
            continue
    return found


def wait_for_fanout_engines(timeout: float = 30.0) -> list[int]:
    """After Spark's jobs were cancelled: waits until no engine of this process's fan-outs runs on this host
    (local executors; remote ones stop on their own when their task's worker is gone); the pids left."""
    deadline = time.monotonic() + timeout
    while (left := _running(_fanout_names)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def require_fanouts_gone() -> None:
    """A workload's cleanup after a Spark fan-out: raises when engines of a cancelled fan-out still run here
    (they could still write where the run's data is about to be removed)."""
    left = wait_for_fanout_engines()
    if left:
        raise WorkloadError(
            f"{len(left)} storbench-load processes of a cancelled Spark fan-out still run "
            f"(pids {', '.join(map(str, left))})"
        )


def _barrier_task(
    job: dict[str, Any], secrets: dict[str, str], local_binary: str | None, name: str, timeout: float | None
):
    """The function each barrier task runs: agree on a start time, run the engine, return its result and where
    it ran. ``local_binary`` None: only the binary shipped with the job (``addFile``) will do.

    ``job`` holds no keys; ``secrets`` (the credentials by variable name) travel inside this closure,
    which Spark ships with the task and never writes to its conf or event log; the task hands them to
    the engine in a pipe it inherits (never a file). The engine runs with argv[0] ``name``, its
    fan-out's."""

    secrets_file_env = SECRETS_FILE_ENV  # a local: the closure must not import storbench on the executor

    def task(_rows):  # pragma: no cover - runs inside Spark's Python worker
        import json as _json
        import os as _os
        import socket as _socket
        import subprocess as _sp
        import tempfile as _tf
        import time as _time

        from pyspark import BarrierTaskContext, SparkFiles

        ctx = BarrierTaskContext.get()
        index, count = ctx.partitionId(), len(ctx.getTaskInfos())
        engine = local_binary
        try:
            shipped = SparkFiles.get("storbench-load")
            if _os.path.exists(shipped):
                engine = shipped
                _os.chmod(engine, 0o755)
        except Exception:
            pass
        # every task proposes "now + delay"; all take the latest, so they start together
        proposals = ctx.allGather(str(int(_time.time() * 1000) + 1000))
        start_at = max(int(p) for p in proposals)
        # a standalone executor's working directory is <worker work dir>/<app id>/<executor id>
        where = {
            "partition": index,
            "address": ctx.getTaskInfos()[index].address,
            "cwd": _os.getcwd(),
            "executor": _os.path.basename(_os.getcwd()),
            "hostname": _socket.gethostname(),
            "engine": engine,
            "files_root": _os.path.abspath(SparkFiles.getRootDirectory()),
        }
        if engine is None:
            yield _json.dumps(
                {
                    "task": where,
                    "result": {
                        "status": "fatal",
                        "fatal": "the storbench-load binary shipped with the job is missing from SparkFiles",
                    },
                }
            )
            return
        work = _tf.mkdtemp(prefix="storbench-load-task-")
        job_path, result_path = _os.path.join(work, "job.json"), _os.path.join(work, "result.json")
        fd = _os.open(job_path, _os.O_WRONLY | _os.O_CREAT, 0o600)
        with _os.fdopen(fd, "w") as handle:
            _json.dump({**job, "process_index": index, "process_count": count, "start_at_unix_ms": start_at}, handle)
        env = {k: v for k, v in _os.environ.items() if k not in secrets}
        fds = ()
        if secrets:  # in a pipe the engine inherits, never a file (as secrets_pipe does on the driver)
            read_end, write_end = _os.pipe()
            try:
                _os.write(write_end, _json.dumps(secrets).encode())
            finally:
                _os.close(write_end)
            fds, env[secrets_file_env] = (read_end,), f"/proc/self/fd/{read_end}"
        try:
            try:
                proc = _sp.Popen(
                    [name, "run", "--job", job_path, "--result", result_path],
                    executable=engine,
                    stdin=_sp.DEVNULL,
                    stdout=_sp.DEVNULL,
                    stderr=_sp.DEVNULL,
                    env=env,
                    pass_fds=fds,
                )
            finally:
                for fd in fds:
                    _os.close(fd)
            where["engine_pid"] = proc.pid
            try:
                code = proc.wait(timeout=timeout)
            except _sp.TimeoutExpired:
                proc.kill()
                code = proc.wait()
            result = (
                _json.loads(open(result_path).read())
                if _os.path.exists(result_path)
                else {"status": "fatal", "fatal": f"storbench-load exited with code {code} without a result"}
            )
        finally:
            for path in (job_path, result_path):
                if _os.path.exists(path):
                    _os.remove(path)
            _os.rmdir(work)
        yield _json.dumps({"task": where, "result": result})

    return task


def run_spark_barrier(spark: Any, job: dict[str, Any], tasks: int, timeout: float | None = None) -> dict[str, Any]:
    """The job in ``tasks`` engine processes started as Spark barrier tasks (all at once or none)."""
    sc = spark.sparkContext
    local_binary = binary()
    local = sc.master.startswith("local")
    if not local and not getattr(sc, "_storbench_load_shipped", False):
        sc.addFile(local_binary)  # executors on other hosts get the binary with the task and run only that one
        sc._storbench_load_shipped = True
    job, secrets = split_credentials(job)
    name = f"{BINARY_NAME}-fanout-{_secrets.token_hex(6)}"
    _fanout_names.add(name)
    task = _barrier_task(job, secrets, local_binary if local else None, name, timeout)
    rdd = sc.parallelize(range(tasks), tasks).barrier().mapPartitions(task)
    try:
        texts = rdd.collect()
    except Exception as exc:  # py4j wraps everything; keep the first line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise WorkloadError(f"Spark barrier stage of {tasks} storbench-load tasks failed: {first}") from exc
    answers = [json.loads(t) for t in texts]
    results = [a["result"] for a in answers]
    for result in results:
        if result.get("status") != "ok":
            raise WorkloadError(result.get("fatal") or "storbench-load failed in a Spark task")
    merged = merge_results(results)
    merged["spark_tasks"] = [a["task"] for a in answers]  # where each engine process ran, from which binary
    return merged
