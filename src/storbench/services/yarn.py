"""A real YARN on loopback: Hadoop's own ResourceManager and N NodeManagers, each NodeManager watched by a
node_exporter.

The daemons are Hadoop's (``org.apache.hadoop.yarn.server.*``, from the jars the JVM launchers'
set-up resolves for HDFS, the same Hadoop version), one JVM each with a small heap. The
ResourceManager binds 127.0.0.1, NodeManager *k* binds 127.0.0.(k+1), all on free ports;
each NodeManager has its own local dir (containers' working dirs, Spark's shuffle, MapReduce's
spills) and log dir under ``nm-K/``, and its own conf dir. Containers run as the user who
started the service (Hadoop's DefaultContainerExecutor).

``up`` waits until the ResourceManager reports all N NodeManagers RUNNING and every exporter
answers, then writes ``nodes.yaml`` (one ``worker`` node per NodeManager, as ``services up
spark`` does) and returns the state: ``uri`` (``yarn://127.0.0.1:PORT``, the ResourceManager's
client port), ``conf_dir`` (HADOOP_CONF_DIR / YARN_CONF_DIR for clients), ``nodes``, ``web_ui``.
Every process is in state.json from its spawn on; ``down`` stops them by PID, containers included.

``--lab-cluster``: NodeManager K, and so every container it launches, in lab host node-K (its namespace, address,
cgroup, local dirs on its disk, its own exporter in the nodes file with its limits), the ResourceManager on this
machine's end of the lab's bridge, where the run's driver binds too (yarn_lab.py).

Who is calling: YARN without Kerberos ("simple" authentication) takes the user name the client
states (its OS user, or HADOOP_USER_NAME), on RPC and, through ``?user.name=``, on the web UI
and REST API, which refuse a request that states none. ``yarn.acl.enable`` holds that name to
the ACLs: submitting to or administering any queue, and the ResourceManager's admin ACL, are
for the Hadoop user ``storbench`` only (yarn_conf). So another local user submitting as
themselves (a ``yarn jar``, a ``spark-submit --master yarn``, a REST POST) is refused; one who
states ``storbench`` is not (only Kerberos would stop that, as for the HDFS service), and the
RM's ports, like every service's here, are on 127.0.0.1 only. What such a claim gets is code
execution: the containers run as the OS user who started the service (root, when root did), so
a local user who states ``storbench`` runs commands as that user (issue 38 item 1, open; the
README says so; tests/services/test_yarn.py reproduces it).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any
from urllib.request import urlopen

from storbench.errors import EngineError, InputError
from storbench.services import node_exporter, process
from storbench.services import yarn_conf, yarn_lab
from storbench.services.jvm import extra_options, java_binary, launcher_classpath
from storbench.services.ports import free_port
from storbench.services.placement import Loopback
from storbench.services.registry import Flag, register

SERVICE = "yarn"
register(
    SERVICE,
    __name__,
    Flag("nodes", "NodeManagers (default 2)", int),
    Flag("cores", "cores per NodeManager (default 1)", int),
    Flag("memory", "MB per NodeManager (default 1536)"),
    Flag(
        "allow_root_containers",
        "start it as root although its containers then run as root for any local user who submits one",
        switch=True,
    ),
    Flag(
        "lab_cluster",
        "place NodeManager K (and so its containers) in host node-K of the lab cluster under the same results home "
        "(storbench lab cluster up), the ResourceManager on this machine's end of its bridge (yarn_lab.py)",
        switch=True,
    ),
)
RM_CLASS = "org.apache.hadoop.yarn.server.resourcemanager.ResourceManager"
NM_CLASS = "org.apache.hadoop.yarn.server.nodemanager.NodeManager"
MAX_NODES = 16
START_TIMEOUT_S = 150.0
HEAP = "-Xmx320m"  # each daemon: they hold little state here, and memory is shared with the rest of a run
SIZE = re.compile(r"^([1-9][0-9]*)([mMgG]?)$")


def memory_mb(text: str | int) -> int:
    """``--memory``: MB per NodeManager, as a number (1536) or a size (1536m, 2g)."""
    found = SIZE.match(str(text).strip())
    if not found:
        raise InputError(f"--memory {text!r}: expected MB per NodeManager, e.g. 1536, 1536m or 2g")
    return int(found.group(1)) * (1024 if found.group(2).lower() == "g" else 1)


def _machine_mb() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def refuse_root_containers(allowed: bool) -> None:
    """YARN runs every container as the account that started it, and any local user can submit one by claiming
    a name (Hadoop's simple auth): as root that is root for anyone, so root starts it only when told to."""
    if os.geteuid() == 0 and not allowed:
        raise InputError(
            "services up yarn as root: YARN would run every job's containers as root, and any local user can "
            "submit one by claiming a Hadoop name; pass --allow-root-containers where every local account may be "
            "root, or start it as an unprivileged user"
        )


def _check(nodes: int, cores: int, memory: int) -> None:
    if not 1 <= nodes <= MAX_NODES:
        raise InputError(f"--nodes {nodes}: allowed 1 to {MAX_NODES} NodeManagers")
    if cores < 1:
        raise InputError(f"--cores {cores}: allowed 1 or more (vcores per NodeManager)")
    if memory < yarn_conf.MIN_NODE_MB:
        raise InputError(
            f"--memory {memory}: at least {yarn_conf.MIN_NODE_MB} MB per NodeManager (Spark's "
            f"ApplicationMaster beside an executor, one executor per node)"
        )
    machine = _machine_mb()
    if machine is not None and memory > machine:
        raise InputError(
            f"--memory {memory}: more than this machine has ({machine} MB); every NodeManager "
            f"runs here, give each at most that"
        )


def up(
    workdir: Path,
    nodes: int = 2,
    cores: int = 1,
    memory: str | int = 1536,
    allow_root_containers: bool = False,
    placement: Any = None,
) -> dict[str, Any]:
    """``placement``: where the NodeManagers run (storbench.services.placement; loopback by default)."""
    placement = placement or Loopback()
    mb = memory_mb(memory)
    _check(nodes, cores, mb)
    if nodes > placement.capacity:
        raise InputError(f"--nodes {nodes}: the lab cluster has {placement.capacity} hosts")
    state = status(workdir)
    if state:
        asked = {"nodemanagers": nodes, "cores": cores, "memory_mb": mb, "lab": placement.in_lab}
        have = {key: state.get(key) for key in asked}
        if have != asked:
            raise InputError(f"yarn is already running with {have}; stop it first (`storbench services down yarn`)")
        return state
    refuse_root_containers(allow_root_containers)
    yarn_lab.check_roots(workdir, placement, nodes)
    java, exporter, classpath = java_binary(), node_exporter.binary(), launcher_classpath()
    if process.owned(workdir, SERVICE):
        down(workdir)  # a stopped cluster's leftovers; fresh_dir refuses a directory that is not ours
    process.fresh_dir(workdir, SERVICE)
    rm = placement.coordinator
    ports = {name: free_port(rm) for name in ("rm", "scheduler", "tracker", "admin", "web", "history")}
    conf = workdir / "conf"
    client = yarn_conf.client_files(ports, mb, f"{conf}:{classpath}", workdir / "staging", rm)
    yarn_conf.write_dir(conf, client)
    (workdir / "staging").mkdir(mode=0o700)
    state = {
        "service": SERVICE,
        "workdir": str(workdir),
        "nodemanagers": nodes,
        "cores": cores,
        "memory_mb": mb,
        "lab": placement.in_lab,
        "uri": f"yarn://{rm}:{ports['rm']}",
        "web_ui": f"http://{rm}:{ports['web']}",
        "driver_host": rm if placement.in_lab else None,  # where a lab host's executors reach the driver
        "conf_dir": str(conf),
        "client_user": yarn_conf.USER,
        "queue": yarn_conf.QUEUE,
        "owned_roots": [],
        "processes": [],
        "summary": "starting",
    }
    with process.all_or_nothing(workdir, state, _stop_and_clean):
        _start_all(workdir, state, java, exporter, classpath, client, placement)
        _wait_ready(workdir, state, time.monotonic() + START_TIMEOUT_S)
        state["nodes"] = str(node_exporter.write_nodes(workdir, state, "nodemanager", "worker", "local_dir"))
    state["summary"] = (
        f"ResourceManager {state['uri']} (pid {state['pid']}, web UI {state['web_ui']}), {nodes} "
        f"NodeManager(s) RUNNING{' in lab hosts' if placement.in_lab else ''} ({cores} vcore(s), {mb} MB each, "
        f"+ {yarn_conf.MR_ROOM_MB} MB for a MapReduce job) with node_exporters, up in "
        f"{state['startup_s']:.1f} s; ACLs: Hadoop user {yarn_conf.USER} only "
        f"(`storbench services env yarn`); conf dir {conf}; nodes file {state['nodes']}"
    )
    process.write_state(workdir, state)
    return state


def _daemon(java: str, conf: Path, classpath: str, main: str, workdir: Path) -> tuple[list[str], str]:
    """(argv, marker): the conf dir first on the classpath names the daemon (unique per NodeManager)."""
    marker = f"-cp {conf}:"
    return [
        java,
        *extra_options(),
        HEAP,
        *yarn_conf.OPENS.split(),
        "-Djava.net.preferIPv4Stack=true",
        f"-Djava.io.tmpdir={workdir / 'tmp'}",
        f"-Dhadoop.log.dir={workdir / 'log'}",
        "-cp",
        f"{conf}:{classpath}",
        main,
    ], marker


def _spawn(
    workdir: Path,
    state: dict[str, Any],
    kind: str,
    name: str,
    argv: list[str],
    marker: str,
    env: dict[str, str] | None = None,
    preexec: Any = None,
    **extra: Any,
) -> None:
    proc = process.spawn(argv, workdir / "log", f"{name}.log", env, preexec=preexec)
    state["processes"].append({"kind": kind, "name": name, "pid": proc.pid, "marker": marker, **extra})
    process.write_state(workdir, state)


def _start_all(
    workdir: Path,
    state: dict[str, Any],
    java: str,
    exporter: str,
    classpath: str,
    client: dict[str, dict[str, str]],
    placement: Any,
) -> None:
    (workdir / "tmp").mkdir(mode=0o700)
    env = {
        "JAVA_HOME": str(Path(os.path.realpath(java)).parents[1]),
        "HADOOP_CONF_DIR": state["conf_dir"],
        "HADOOP_USER_NAME": yarn_conf.USER,
    }
    argv, marker = _daemon(java, Path(state["conf_dir"]), classpath, RM_CLASS, workdir)
    _spawn(workdir, state, "resourcemanager", "resourcemanager", argv, marker, env)
    for index in range(1, state["nodemanagers"] + 1):
        node, root = yarn_lab.place(workdir, placement, index), workdir / f"nm-{index}"
        if node.owned_root is not None:
            state["owned_roots"].append(str(node.owned_root))
        (root / "logs").mkdir(parents=True)  # containers' logs: on this machine's disk, wherever the node runs
        yarn_conf.write_dir(
            root / "conf",
            yarn_conf.node_files(
                client, node.host, node.ports, state["cores"], state["memory_mb"], node.local_dir, root / "logs"
            ),
        )
        argv, marker = _daemon(java, root / "conf", classpath, NM_CLASS, workdir)
        _spawn(
            workdir,
            state,
            "nodemanager",
            f"nodemanager-{index}",
            placement.wrap(index, argv),
            marker,
            env,
            preexec=placement.preexec(index),
            host=node.host,
            local_dir=str(node.local_dir),
            log_dir=str(root / "logs"),
            limits=placement.limits(index),
        )
        if placement.exporter(index):  # the lab host's own
            state["lab_exporters"] = {**state.get("lab_exporters", {}), node.host: placement.exporter(index)}
            continue
        argv, marker, url = node_exporter.command(exporter, node.host)
        _spawn(workdir, state, "exporter", f"exporter-{index}", argv, marker, host=node.host, url=url)


def rest(state: dict[str, Any], path: str, timeout: float = 5.0) -> dict[str, Any]:
    """The ResourceManager's REST API (``/ws/v1/cluster/...``) as the service's Hadoop user."""
    with urlopen(f"{state['web_ui']}/ws/v1/cluster/{path}?user.name={yarn_conf.USER}", timeout=timeout) as answer:
        return json.loads(answer.read())


def running_nodes(state: dict[str, Any]) -> list[str]:
    """Hosts of the NodeManagers the ResourceManager reports RUNNING."""
    found = (rest(state, "nodes").get("nodes") or {}).get("node", [])
    return sorted(n["nodeHostName"] for n in found if n.get("state") == "RUNNING")


def _wait_ready(workdir: Path, state: dict[str, Any], deadline: float) -> None:
    wanted = sorted(p["host"] for p in state["processes"] if p["kind"] == "nodemanager")

    def alive() -> None:
        process.raise_if_exited("yarn", workdir, state)

    def probe() -> str | None:
        try:
            running = running_nodes(state)
        except (OSError, ValueError) as exc:
            return f"ResourceManager web UI {state['web_ui']}: {exc}"
        return None if running == wanted else f"{len(running)}/{len(wanted)} NodeManagers RUNNING"

    last = node_exporter.wait_ready(state, deadline, alive, probe)
    if last is not None:
        raise EngineError(f"YARN was not ready within {START_TIMEOUT_S:.0f} s ({last}); logs in {workdir / 'log'}")


def client_env(state: dict[str, Any]) -> dict[str, str]:
    """What a shell's Hadoop and Spark clients set to use this YARN as storbench's user: ``spark-submit --master
    yarn``, ``yarn jar``, ``mapred job`` then find the ResourceManager through the conf dir."""
    return {
        "HADOOP_CONF_DIR": state["conf_dir"],
        "YARN_CONF_DIR": state["conf_dir"],
        "HADOOP_USER_NAME": state.get("client_user", yarn_conf.USER),
    }


def status(workdir: Path) -> dict[str, Any] | None:
    return process.running_state(workdir)


def _stop_all(state: dict[str, Any]) -> bool:
    """Exporters, then NodeManagers (with their containers), then the ResourceManager."""
    return process.stop_in_order(
        state.get("processes", []), ("exporter", "nodemanager", "resourcemanager"), process.stop_tree
    )


def _stop_and_clean(state: dict[str, Any]) -> bool:
    stopped = _stop_all(state)
    yarn_lab.remove_roots(state)
    return stopped


def down(workdir: Path) -> bool:
    return process.take_down(workdir, SERVICE, _stop_and_clean)
