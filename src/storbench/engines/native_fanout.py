"""The native load engine fanned out as Spark barrier tasks: one engine process per task, all started together,
each run from the binary shipped with the job (``addFile``) or this host's own, their results returned to the
driver (storbench.engines.native merges them).

Credentials travel inside the task's closure, never in Spark's conf or event log, and reach each engine in a pipe
it inherits (as storbench.engines.native_secrets does on the driver). Each fan-out's engines run under an argv[0]
of their own, so that a cancelled fan-out's engines on this host can be waited for.
"""

from __future__ import annotations

import json
import secrets as _secrets
import time
from pathlib import Path
from typing import Any

from storbench.engines.native_secrets import SECRETS_FILE_ENV, split_credentials
from storbench.errors import WorkloadError

BINARY_NAME = "storbench-load"

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
        # Under the job's SparkFiles directory, which Spark deletes as its JVM ends: a task killed mid-run (the run
        # interrupted) leaves nothing in the shared /tmp, where a killed Python worker's `finally` never comes
        work = _tf.mkdtemp(prefix="storbench-load-task-", dir=where["files_root"])
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


def barrier_results(
    spark: Any, job: dict[str, Any], tasks: int, local_binary: str, timeout: float | None = None
) -> list[dict[str, Any]]:
    """The job in ``tasks`` engine processes started as Spark barrier tasks (all at once or none): each task's
    answer ({"task": where it ran, from which binary; "result": its engine's result}). ``local_binary``: this
    host's engine, which executors of a local master run (others get it shipped with the job)."""
    sc = spark.sparkContext
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
    for answer in answers:
        if answer["result"].get("status") != "ok":
            raise WorkloadError(answer["result"].get("fatal") or "storbench-load failed in a Spark task")
    return answers
