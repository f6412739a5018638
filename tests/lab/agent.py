"""The guest's command loop (runs inside the lab's QEMU guest, from the host's Python over 9p).

One JSON request per line on the virtio-serial port named ``cmd``: ``{"id": N, "cmd": "shell text",
"timeout": S}``, or ``{"id": N, "storbench": [ARGS], "cwd": DIR, "timeout": S}`` for ``python -m storbench ARGS``;
the answer is one JSON line ``{"id": N, "rc": ..., "stdout": ..., "stderr": ...}``. A request with neither is a
ping, answered at once: the host pings until the guest answers.

A ``storbench`` request runs in a child forked from this agent, which imported storbench once (at its first such
request): under TCG a fresh interpreter spent about 6 of a 1-second fio run's 16 CPU-s importing storbench, and
the lab's tests start about ten runs. The child is what ``python -m storbench`` would be but for the imports: its
own session, directory, argv, standard streams and exit code. Standard library only otherwise: this file is read
by the guest, not imported by the tests.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path


def port_path(name: str) -> str:
    for entry in Path("/sys/class/virtio-ports").iterdir():
        if (entry / "name").read_text().strip() == name:
            return f"/dev/{entry.name}"
    raise SystemExit(f"agent: no virtio port named {name}")


def preload() -> None:
    """storbench's modules and its registries' discoveries, once, in the agent: every forked run starts with them."""
    if "storbench.cli" in sys.modules:
        return
    import storbench.cli  # noqa: F401
    from storbench.engines.base import all_engines
    from storbench.report.registry import all_formats
    from storbench.workloads.base import all_workloads

    all_engines(), all_formats(), all_workloads()


def storbench_run(request: dict, port: int) -> dict:
    """``python -m storbench ARGS`` in ``cwd``, as a forked child of the preloaded agent; killed (its session) at
    the request's timeout."""
    try:
        preload()
    except Exception:  # noqa: BLE001 - the child then imports storbench itself and says what failed
        pass
    timeout = request.get("timeout") or 300
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 1
            try:
                os.setsid()
                os.close(port)
                signal.signal(signal.SIGINT, signal.default_int_handler)
                os.chdir(request.get("cwd") or "/tmp")
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                sys.argv = ["storbench", *request["storbench"]]
                from storbench.cli import run_main

                run_main()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        deadline = time.monotonic() + timeout
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                rc = os.waitstatus_to_exitcode(status)
                break
            if time.monotonic() > deadline:
                os.killpg(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                rc = -1
                break
            time.sleep(0.1)
        out.seek(0)
        err.seek(0)
        stdout, stderr = (f.read().decode(errors="replace") for f in (out, err))
    if rc == -1:
        stderr += f"agent: timed out after {timeout} s"
    return {"id": request["id"], "rc": rc, "stdout": stdout, "stderr": stderr}


def answer(request: dict, port: int) -> dict:
    if request.get("storbench") is not None:
        return storbench_run(request, port)
    if request.get("cmd") is None:
        return {"id": request.get("id"), "rc": 0, "stdout": "pong", "stderr": ""}
    try:
        done = subprocess.run(
            ["/bin/sh", "-c", request["cmd"]],
            capture_output=True,
            text=True,
            errors="replace",
            timeout=request.get("timeout") or 300,
        )
        return {"id": request["id"], "rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
        return {"id": request["id"], "rc": -1, "stdout": out, "stderr": f"agent: timed out after {exc.timeout} s"}


def main() -> None:
    fd = os.open(port_path(sys.argv[1] if len(sys.argv) > 1 else "cmd"), os.O_RDWR)
    print("agent: ready", flush=True)
    pending = b""
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:  # the host is not connected (yet): the port reads empty
            time.sleep(0.1)
            continue
        pending += chunk
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            if not line.strip():
                continue
            try:
                reply = answer(json.loads(line), fd)
            except (ValueError, KeyError) as exc:
                reply = {"id": None, "rc": -1, "stdout": "", "stderr": f"agent: bad request: {exc}"}
            data = (json.dumps(reply) + "\n").encode()
            while data:
                data = data[os.write(fd, data) :]


if __name__ == "__main__":
    main()
