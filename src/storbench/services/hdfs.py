"""A real HDFS on loopback: one NameNode and N DataNodes in Hadoop's MiniDFSCluster.

The JVM launcher (jvm/.../MiniHdfs.java) picks free ports and writes ``ready.json``
with the ``hdfs://127.0.0.1:PORT`` URI and the DataNodes' storage directories, whose
devices telemetry then measures.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from storbench.errors import InputError
from storbench.services import process
from storbench.services.jvm import java_binary, launcher_classpath

MAIN_CLASS = "storbench.jvm.MiniHdfs"
START_TIMEOUT_S = 120.0
UP_OPTIONS = ("datanodes",)


def up(workdir: Path, datanodes: int = 2, heap: str = "1g") -> dict[str, Any]:
    if not 1 <= datanodes <= 16:
        raise InputError(f"--datanodes {datanodes}: allowed 1 to 16")
    state = status(workdir)
    if state:
        return state
    process.fresh_dir(workdir, "hdfs")  # a stopped cluster's leftovers go only when the directory is ours
    argv = [java_binary(), f"-Xmx{heap}", "-Djava.net.preferIPv4Stack=true", "-cp", launcher_classpath(),
            MAIN_CLASS, str(workdir), str(datanodes)]
    started = time.monotonic()
    proc = process.spawn(argv, workdir, "hdfs.log")
    state = {"service": "hdfs", "pid": proc.pid, "marker": MAIN_CLASS, "datanodes": datanodes,
             "workdir": str(workdir), "log": str(workdir / "hdfs.log"), "summary": f"pid {proc.pid}, starting"}
    with process.starting(workdir, state, proc):
        ready = process.wait_for_file(workdir / "ready.json", proc, START_TIMEOUT_S, "HDFS (MiniDFSCluster)",
                                      workdir / "hdfs.log")
    state |= {"uri": ready["uri"], "datanode_dirs": ready["datanode_dirs"],
              "startup_s": round(time.monotonic() - started, 2),
              "summary": f"pid {proc.pid}, {datanodes} DataNode(s), up in {time.monotonic() - started:.1f} s"}
    process.write_state(workdir, state)
    return state


def status(workdir: Path) -> dict[str, Any] | None:
    state = process.read_state(workdir)
    if state and process.alive(state["pid"], MAIN_CLASS):
        return state
    return None


def down(workdir: Path) -> bool:
    state = process.read_state(workdir)
    if not state:
        return False
    stopped = process.stop_pid(state["pid"], MAIN_CLASS)
    process.remove_dir(workdir, "hdfs")
    return stopped

