"""``services up hdfs --datanodes N --lab-cluster``: HDFS spread over a lab cluster's hosts.

A MiniDFSCluster runs every DataNode in one JVM, which one host cannot hold apart from the others, so here each
node is a JVM of its own started with Hadoop's own main classes: the NameNode
(``org.apache.hadoop.hdfs.server.namenode.NameNode``) on this machine's end of the lab's bridge (the placement's
coordinator), DataNode K (``...datanode.DataNode``) in lab host node-K through the placement (``ip netns exec``
into its namespace, its cgroup joined before exec, its blocks under the host's own mount, the host's exporter for
its telemetry). Every daemon reads a conf dir of its own, written here (hdfs_conf.py).

``up`` formats the NameNode's directory, starts the NameNode and the DataNodes (each recorded in state.json as
soon as it is spawned), waits until the NameNode counts all of them live and has left safe mode, then gives
``/`` to storbench's HDFS user as the loopback service does (services/hdfs.py: why), through WebHDFS as the
superuser (the OS user running the NameNode). ``down`` stops every daemon by PID (its command line checked
against its marker) and removes the block directories it made in the hosts' mounts.

A host's disk must hold a whole block (the client's block size, 128 MB by default) for every replica it receives
at once: a DataNode reserves that much per replica in flight, and a node without the room is left out of the
block's pipeline, so the block has fewer replicas than asked. A lab cluster's default 512 MB disk takes three
writers at once; give ``lab cluster up --disk-mb`` more for more.
"""

from __future__ import annotations

import getpass
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.error import URLError
from urllib.request import Request, urlopen

from storbench.errors import EngineError, InputError
from storbench.services import node_exporter, process
from storbench.services.hdfs_conf import datanode_files, namenode_files
from storbench.services.jvm import java_command, launcher_classpath
from storbench.services.ports import free_port
from storbench.services.yarn_conf import OPENS, write_dir

SERVICE = "hdfs"
NAMENODE_CLASS = "org.apache.hadoop.hdfs.server.namenode.NameNode"
DATANODE_CLASS = "org.apache.hadoop.hdfs.server.datanode.DataNode"
OWNED = ".storbench-hdfs-datanode"  # in each block directory's parent we made in a host's mount; names the service
START_TIMEOUT_S = 180.0
FORMAT_TIMEOUT_S = 120.0
# the NameNode's first WebHDFS call sets up its REST layer (Jersey): 10 s was too short on a loaded 2-core machine
WEBHDFS_TIMEOUT_S = 60.0
NAMENODE_HEAP, DATANODE_HEAP = "-Xmx512m", "-Xmx384m"


def _daemon(workdir: Path, conf: Path, name: str, main: str, heap: str, *args: str) -> tuple[list[str], str]:
    """(argv, marker): ``-Dstorbench.hdfs.daemon=NAME@WORKDIR`` names the daemon and its service dir, so a PID
    check never takes another service's (or another home's) Hadoop daemon for ours."""
    marker = f"-Dstorbench.hdfs.daemon={name}@{workdir}"
    return [
        *java_command(),
        heap,
        *OPENS.split(),
        "-Djava.net.preferIPv4Stack=true",
        marker,
        f"-Djava.io.tmpdir={workdir / 'tmp'}",  # Jetty's web-app dirs go with the service (not the shared /tmp)
        f"-Dhadoop.log.dir={workdir / 'log'}",
        "-cp",
        f"{conf}:{launcher_classpath()}",
        main,
        *args,
    ], marker


def _owns_root(workdir: Path, root: Path) -> bool:
    try:
        return not root.is_symlink() and (root / OWNED).read_text().strip() == str(workdir)
    except OSError:
        return False


def up(workdir: Path, datanodes: int, placement: Any, owner: str) -> dict[str, Any]:
    """Starts the NameNode and ``datanodes`` DataNodes placed by ``placement``; the service's state."""
    if datanodes > placement.capacity:
        raise InputError(f"--datanodes {datanodes}: the lab cluster has {placement.capacity} hosts")
    roots = [placement.data_root(i) / "storbench-hdfs" for i in range(1, datanodes + 1)]
    for root in roots:
        if os.path.lexists(root) and not _owns_root(workdir, root):
            raise InputError(f"{root} exists and was not made by storbench for {workdir}; refusing to use it")
    if process.owned(workdir, SERVICE):
        down(workdir)  # a stopped cluster's leftovers; fresh_dir refuses a directory that is not ours
    process.fresh_dir(workdir, SERVICE)
    for sub in ("tmp", "log"):
        (workdir / sub).mkdir(mode=0o700)
    for root in roots:
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        (root / OWNED).write_text(str(workdir) + "\n")
    coordinator = placement.coordinator
    rpc, http = free_port(coordinator), free_port(coordinator)
    state: dict[str, Any] = {
        "service": SERVICE,
        "workdir": str(workdir),
        "datanodes": datanodes,
        "placement": "lab",
        "uri": f"hdfs://{coordinator}:{rpc}",
        "web_ui": f"http://{coordinator}:{http}",
        "datanode_hosts": [placement.address(i) for i in range(1, datanodes + 1)],
        "datanode_dirs": [str(root / "data") for root in roots],
        "owned_roots": [str(root) for root in roots],
        "client_user": owner,
        "log": str(workdir / "log"),
        "processes": [],
        "summary": "starting",
    }
    with process.all_or_nothing(workdir, state, _stop_and_clean):
        _start_namenode(workdir, state, coordinator, rpc, http)
        for index in range(1, datanodes + 1):
            _start_datanode(workdir, state, placement, index)
        _wait_ready(workdir, state, time.monotonic() + START_TIMEOUT_S)
        _give_root(state, owner)
        state["nodes"] = str(node_exporter.write_nodes(workdir, state, "datanode", "datanode", "data_dir"))
    state["summary"] = (
        f"NameNode {state['uri']} (pid {state['pid']}, web UI {state['web_ui']}) on the lab's bridge, "
        f"{datanodes} DataNode(s) in lab hosts {', '.join(state['datanode_hosts'])}, up in "
        f"{state['startup_s']:.1f} s, permissions on, / owned by HDFS user {owner} "
        f"(`storbench services env hdfs`); nodes file {state['nodes']}"
    )
    process.write_state(workdir, state)
    return state


def _spawn(workdir: Path, state: dict[str, Any], kind: str, name: str, argv: list[str], marker: str, **extra: Any):
    preexec = extra.pop("preexec", None)
    proc = process.spawn(argv, workdir / "log", f"{name}.log", preexec=preexec)
    state["processes"].append({"kind": kind, "name": name, "pid": proc.pid, "marker": marker, **extra})
    process.write_state(workdir, state)


def _start_namenode(workdir: Path, state: dict[str, Any], host: str, rpc: int, http: int) -> None:
    conf = workdir / "namenode" / "conf"
    write_dir(conf, namenode_files(host, rpc, http, workdir / "namenode" / "name", workdir / "tmp", state["datanodes"]))
    argv, _ = _daemon(workdir, conf, "format", NAMENODE_CLASS, NAMENODE_HEAP, "-format", "-force", "-nonInteractive")
    with open(workdir / "log" / "format.log", "ab") as log:
        try:
            done = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, timeout=FORMAT_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            raise EngineError(f"hdfs: formatting the NameNode took over {FORMAT_TIMEOUT_S:.0f} s") from None
    if done.returncode != 0:
        log = workdir / "log" / "format.log"
        raise EngineError(f"hdfs: formatting the NameNode failed: {process.last_line(log)} (log: {log})")
    argv, marker = _daemon(workdir, conf, "namenode", NAMENODE_CLASS, NAMENODE_HEAP)
    _spawn(workdir, state, "namenode", "namenode", argv, marker, host=host)


def _start_datanode(workdir: Path, state: dict[str, Any], placement: Any, index: int) -> None:
    host, name = placement.address(index), f"datanode-{index}"
    data_dir = Path(state["datanode_dirs"][index - 1])
    conf = workdir / name / "conf"
    write_dir(conf, datanode_files(state["uri"], host, data_dir, workdir / name / "tmp"))
    argv, marker = _daemon(workdir, conf, name, DATANODE_CLASS, DATANODE_HEAP)
    _spawn(
        workdir,
        state,
        "datanode",
        name,
        placement.wrap(index, argv),
        marker,
        preexec=placement.preexec(index),
        host=host,
        data_dir=str(data_dir),
        limits=placement.limits(index),
    )
    state["lab_exporters"] = {**state.get("lab_exporters", {}), host: placement.exporter(index)}


def _jmx(state: dict[str, Any], query: str) -> dict[str, Any]:
    with urlopen(f"{state['web_ui']}/jmx?qry={query}", timeout=5) as answer:
        beans = json.loads(answer.read()).get("beans") or [{}]
    return beans[0]


def live_datanodes(state: dict[str, Any]) -> list[str]:
    """The addresses of the DataNodes the NameNode counts live (its JMX view)."""
    info = _jmx(state, "Hadoop:service=NameNode,name=NameNodeInfo")
    nodes = json.loads(info.get("LiveNodes") or "{}")
    return sorted(entry["xferaddr"].rsplit(":", 1)[0] for entry in nodes.values())


def _wait_ready(workdir: Path, state: dict[str, Any], deadline: float) -> None:
    wanted = sorted(state["datanode_hosts"])

    def alive() -> None:
        process.raise_if_exited("hdfs", workdir, state)

    def probe() -> str | None:
        try:
            live = live_datanodes(state)
            safe = _jmx(state, "Hadoop:service=NameNode,name=NameNodeInfo").get("Safemode")
        except (OSError, ValueError, KeyError) as exc:
            return f"NameNode web UI {state['web_ui']}: {exc}"
        if live != wanted:
            return f"{len(live)}/{len(wanted)} DataNodes live ({', '.join(live) or 'none'})"
        return f"NameNode in safe mode ({safe})" if safe else None

    last = node_exporter.wait_ready(state, deadline, alive, probe)
    if last is not None:
        raise EngineError(f"HDFS was not ready within {START_TIMEOUT_S:.0f} s ({last}); logs in {workdir / 'log'}")


def _give_root(state: dict[str, Any], owner: str) -> None:
    """``/`` to ``owner``, mode 755, as the superuser (this process's user started the NameNode), over WebHDFS:
    simple authentication takes the stated ``user.name``, and no extra JVM is started for two calls."""
    me = getpass.getuser()
    for op in (f"SETOWNER&owner={owner}&group={owner}", "SETPERMISSION&permission=755"):
        request = Request(f"{state['web_ui']}/webhdfs/v1/?op={op}&user.name={me}", method="PUT")
        try:
            with urlopen(request, timeout=WEBHDFS_TIMEOUT_S) as answer:
                answer.read()
        except (URLError, OSError) as exc:
            raise EngineError(f"hdfs: WebHDFS {op.split('&')[0]} on / failed: {exc}") from None


def _stop_all(state: dict[str, Any]) -> bool:
    """DataNodes first (they would otherwise retry the NameNode until stopped), then the NameNode."""
    return process.stop_in_order(state.get("processes", []), ("datanode", "namenode"), process.stop_tree)


def _remove_roots(workdir: Path, state: dict[str, Any]) -> None:
    """The block directories made in the hosts' mounts, each only while its marker names this service dir."""
    for root in map(Path, state.get("owned_roots", [])):
        if _owns_root(workdir, root):
            shutil.rmtree(root, ignore_errors=True)


def _stop_and_clean(state: dict[str, Any]) -> bool:
    stopped = _stop_all(state)
    _remove_roots(Path(state["workdir"]), state)
    return stopped


def down(workdir: Path) -> bool:
    return process.take_down(workdir, SERVICE, _stop_and_clean)
