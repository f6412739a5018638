"""The guest's command loop (runs inside the lab's QEMU guest, from the host's Python over 9p).

One JSON request per line on the virtio-serial port named ``cmd``: ``{"id": N, "cmd": "shell text",
"timeout": S}``; the answer is one JSON line ``{"id": N, "rc": ..., "stdout": ..., "stderr": ...}``.
A request without ``cmd`` is a ping, answered at once: the host pings until the guest answers.
Standard library only: this file is read by the guest, not imported by the tests.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path


def port_path(name: str) -> str:
    for entry in Path("/sys/class/virtio-ports").iterdir():
        if (entry / "name").read_text().strip() == name:
            return f"/dev/{entry.name}"
    raise SystemExit(f"agent: no virtio port named {name}")


def answer(request: dict) -> dict:
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
                reply = answer(json.loads(line))
            except (ValueError, KeyError) as exc:
                reply = {"id": None, "rc": -1, "stdout": "", "stderr": f"agent: bad request: {exc}"}
            data = (json.dumps(reply) + "\n").encode()
            while data:
                data = data[os.write(fd, data) :]


if __name__ == "__main__":
    main()
