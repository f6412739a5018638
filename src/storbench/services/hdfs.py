"""A real HDFS on loopback: one NameNode and N DataNodes in Hadoop's MiniDFSCluster.

The JVM launcher (jvm/.../MiniHdfs.java) picks free ports and writes ``ready.json``
with the ``hdfs://127.0.0.1:PORT`` URI and the DataNodes' storage directories, whose
devices telemetry then measures.

Permissions are on. The service runs as the user who started it (root, on the machines
storbench is made for), which makes that user HDFS's superuser; the namespace (``/``,
mode 755) belongs to the HDFS user ``storbench``, which storbench's own clients act as
(``HADOOP_USER_NAME``: set by the hdfs:// target for runs on this service, given by
``client_env`` to a shell). So storbench's runs write where they like, any other HDFS user
reads but cannot write or delete storbench's data, and the superuser is kept for the
service itself (a run acting as root would bypass every check it is meant to be held to).
Why a name and not an OS account: HDFS without Kerberos ("simple" authentication) takes
the user name the client states, so an account of its own would add nothing against a
local user who lies about the name, and storbench does not create OS users on the
machines it borrows. What this gives: clients that say who they are (every Hadoop
client does, by its OS user name) are held to the permissions; it does not stop a local
user who sets HADOOP_USER_NAME=storbench, which only Kerberos (a KDC, keytabs) would. HDFS runs
no client code: such a claim reaches this HDFS's data only (all of it, for a claim of the
superuser's name).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from storbench.errors import InputError
from storbench.services import hdfs_lab, process
from storbench.services.jvm import java_command, launcher_classpath
from storbench.services.registry import Flag, register

MAIN_CLASS = "storbench.jvm.MiniHdfs"
START_TIMEOUT_S = 120.0
register(
    "hdfs",
    __name__,
    Flag("datanodes", "number of DataNodes (default 2)", int),
    Flag(
        "lab_cluster",
        "place DataNode K in host node-K of the lab cluster under the same results home (storbench lab cluster "
        "up), the NameNode on this machine's end of its bridge; one JVM per node (hdfs_lab.py)",
        switch=True,
    ),
)
CLIENT_USER = "storbench"  # the HDFS user that owns the namespace and that storbench's clients act as


def up(workdir: Path, datanodes: int = 2, heap: str = "1g", placement: Any = None) -> dict[str, Any]:
    """``placement`` in a lab (``--lab-cluster``): a NameNode and a DataNode JVM per host (hdfs_lab.py); otherwise
    one MiniDFSCluster JVM on loopback."""
    if not 1 <= datanodes <= 16:
        raise InputError(f"--datanodes {datanodes}: allowed 1 to 16")
    state = status(workdir)
    if state:
        where = "lab" if placement is not None and placement.in_lab else None
        if state.get("placement") != where:  # a cluster of one kind is never handed out as the other
            raise InputError("hdfs is already running elsewhere; stop it first (`storbench services down hdfs`)")
        return state
    if placement is not None and placement.in_lab:
        return hdfs_lab.up(workdir, datanodes, placement, CLIENT_USER)
    process.fresh_dir(workdir, "hdfs")  # a stopped cluster's leftovers go only when the directory is ours
    scratch = workdir / "tmp"  # Jetty's web-app directories (one per NameNode/DataNode UI) go with the service,
    scratch.mkdir(mode=0o700)  # not into the shared /tmp, where a killed JVM would leave them for good
    argv = [
        *java_command(),
        f"-Xmx{heap}",
        "-Djava.net.preferIPv4Stack=true",
        f"-Dstorbench.hdfs.owner={CLIENT_USER}",
        f"-Djava.io.tmpdir={scratch}",
        "-cp",
        launcher_classpath(),
        MAIN_CLASS,
        str(workdir),
        str(datanodes),
    ]
    started = time.monotonic()
    proc = process.spawn(argv, workdir, "hdfs.log")
    state = {
        "service": "hdfs",
        "pid": proc.pid,
        "marker": MAIN_CLASS,
        "datanodes": datanodes,
        "workdir": str(workdir),
        "log": str(workdir / "hdfs.log"),
        "summary": f"pid {proc.pid}, starting",
    }
    with process.starting(workdir, state, proc):
        ready = process.wait_for_file(
            workdir / "ready.json", proc, START_TIMEOUT_S, "HDFS (MiniDFSCluster)", workdir / "hdfs.log"
        )
    state |= {
        "uri": ready["uri"],
        "datanode_dirs": ready["datanode_dirs"],
        "client_user": CLIENT_USER,
        "startup_s": round(time.monotonic() - started, 2),
        "summary": f"pid {proc.pid}, {datanodes} DataNode(s), up in {time.monotonic() - started:.1f} s, "
        f"permissions on, / owned by HDFS user {CLIENT_USER} (`storbench services env hdfs`)",
    }
    process.write_state(workdir, state)
    return state


def client_env(state: dict[str, Any]) -> dict[str, str]:
    """What a client of this HDFS sets to act as storbench's user (the owner of the namespace)."""
    return {"HADOOP_USER_NAME": state.get("client_user", CLIENT_USER), "STORBENCH_HDFS_URI": state["uri"]}


def status(workdir: Path) -> dict[str, Any] | None:
    return process.running_state(workdir)  # the MiniDFSCluster's JVM, or the lab's NameNode (hdfs_lab.py)


def down(workdir: Path) -> bool:
    state = process.read_state(workdir)
    if not state:
        return False
    if state.get("placement") == "lab":
        return hdfs_lab.down(workdir)
    stopped = process.stop_pid(state["pid"], MAIN_CLASS)
    process.remove_dir(workdir, "hdfs")
    return stopped
