"""A run's use of YARN (``--spark-master yarn``): which cluster, its client settings, and the checks made before
any work.

The cluster is the one ``HADOOP_CONF_DIR`` (or ``YARN_CONF_DIR``) names when set (an existing
Hadoop cluster: its administrators' settings are used as they are), else the one ``services up
yarn`` runs under the results home (its conf dir is then set for the run, with storbench's
Hadoop user and the container sizes of yarn_conf), else none: one line, before any work.
"""

from __future__ import annotations

import os
import socket
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any
from urllib.parse import quote
from urllib.request import urlopen

from storbench.errors import InputError
from storbench.services import process, yarn, yarn_conf

ENV_NAMES = ("HADOOP_CONF_DIR", "YARN_CONF_DIR")
NO_RM = (
    "--spark-master yarn: no ResourceManager: set HADOOP_CONF_DIR to a Hadoop cluster's conf dir, or start "
    "one (storbench services up yarn)"
)


def service_state(home: Path | None) -> dict[str, Any] | None:
    """The state of ``services up yarn`` under ``home`` when the run uses it (no HADOOP_CONF_DIR of the user's)."""
    if home is None or _users_conf_dir(home) is not None:
        return None
    return yarn.status(process.service_dir(home, "yarn"))


def _users_conf_dir(home: Path | None) -> Path | None:
    """The conf dir HADOOP_CONF_DIR or YARN_CONF_DIR names, unless it is the one of the service under ``home``."""
    ours = home / "services" / "yarn" / "conf" if home is not None else None
    for name in ENV_NAMES:
        if os.environ.get(name) and Path(os.environ[name]) != ours:
            return Path(os.environ[name])
    return None


def conf_dir(home: Path | None) -> Path:
    """The Hadoop conf dir of the YARN the run uses; InputError when there is none."""
    found = _users_conf_dir(home) or (
        Path(os.environ["HADOOP_CONF_DIR"]) if os.environ.get("HADOOP_CONF_DIR") else None
    )
    if found is not None:
        return found
    state = service_state(home)
    if state is None:
        raise InputError(NO_RM)
    return Path(state["conf_dir"])


def use(home: Path | None) -> dict[str, str]:
    """Sets the run's environment for Spark's YARN client (HADOOP_CONF_DIR, YARN_CONF_DIR; on storbench's own
    YARN, its Hadoop user unless one is set) and returns the Spark settings storbench's YARN needs (none for
    another cluster's)."""
    state = service_state(home)
    folder = str(conf_dir(home))
    for name in ENV_NAMES:
        os.environ.setdefault(name, folder)
    if state is None:
        return {}
    os.environ.setdefault("HADOOP_USER_NAME", state.get("client_user", yarn_conf.USER))
    import pyspark

    conf = yarn_conf.spark_conf(
        state["nodemanagers"],
        state["cores"],
        state["memory_mb"],
        Path(pyspark.__file__).resolve().parent / "jars",
        Path(state["workdir"]) / "staging",
    )
    if state.get("driver_host"):  # a lab cluster's containers reach the driver on this machine's end of its bridge
        conf |= {"spark.driver.host": state["driver_host"], "spark.driver.bindAddress": state["driver_host"]}
    return conf


def site(folder: Path) -> dict[str, str]:
    """yarn-site.xml's properties (an empty dict when it is missing or unreadable)."""
    try:
        root = ElementTree.parse(folder / "yarn-site.xml").getroot()
    except (OSError, ElementTree.ParseError):
        return {}
    return {p.findtext("name", ""): p.findtext("value", "") for p in root.iter("property")}


def check(home: Path | None, spark_conf: dict[str, str], timeout: float = 3.0) -> None:
    """Before any work: a ResourceManager answers, the queue asked for exists, an executor fits on a node."""
    folder = conf_dir(home)
    props = site(folder)
    host = props.get("yarn.resourcemanager.hostname", "0.0.0.0")
    address = props.get("yarn.resourcemanager.address") or f"{host}:8032"
    rm_host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((rm_host, int(port)), timeout=timeout):
            pass
    except (OSError, ValueError) as exc:
        raise InputError(
            f"--spark-master yarn: no ResourceManager answers at {address} (from {folder}/yarn-site.xml:"
            f" {getattr(exc, 'strerror', None) or exc}); start it (storbench services up yarn)"
        ) from None
    web = props.get("yarn.resourcemanager.webapp.address") or f"{rm_host}:8088"
    state = service_state(home)
    wanted = {**(use_conf(state) if state else {}), **spark_conf}
    queues = _rest(web, "scheduler", timeout)
    if queues is not None:
        names = _queue_names((queues.get("scheduler") or {}).get("schedulerInfo") or {})
        queue = wanted.get("spark.yarn.queue", "default")
        if names and queue not in names and f"root.{queue}" not in names:
            raise InputError(
                f"spark.yarn.queue {queue!r}: no such queue on the ResourceManager at {address}; "
                f"it has: {', '.join(sorted(names))}"
            )
    nodes = _rest(web, "nodes", timeout)
    if nodes is not None:
        largest = max(
            (
                n.get("totalResource", {}).get("memory", 0)
                for n in (nodes.get("nodes") or {}).get("node", [])
                if n.get("state") == "RUNNING"
            ),
            default=0,
        )
        ceiling = _mb(props.get("yarn.scheduler.maximum-allocation-mb", "")) or largest  # YARN's cap per container
        largest = min(largest, ceiling) if largest else 0
        asked = _executor_mb(wanted)
        if largest and asked is not None and asked > largest:
            raise InputError(
                f"spark.executor.memory {wanted.get('spark.executor.memory')}: an executor container "
                f"of {asked} MB (heap + overhead) is more than a container may have on this YARN "
                f"({largest} MB)"
            )


def use_conf(state: dict[str, Any]) -> dict[str, str]:
    return {
        "spark.executor.memory": f"{yarn_conf.executor_heap_mb(state['memory_mb'])}m",
        "spark.executor.memoryOverhead": f"{yarn_conf.SPARK_OVERHEAD_MB}m",
        "spark.yarn.queue": yarn_conf.QUEUE,
    }


def _rest(web: str, path: str, timeout: float) -> dict[str, Any] | None:
    """The ResourceManager's REST answer as storbench's Hadoop user, or None when it does not give one (another
    cluster's web UI may be elsewhere or need Kerberos: the checks are then left to YARN)."""
    import json

    user = quote(os.environ.get("HADOOP_USER_NAME", yarn_conf.USER))
    try:
        with urlopen(f"http://{web}/ws/v1/cluster/{path}?user.name={user}", timeout=timeout) as answer:
            return json.loads(answer.read())
    except (OSError, ValueError):
        return None


def _queue_names(info: dict[str, Any]) -> set[str]:
    found = {info["queueName"]} if info.get("queueName") else set()
    for child in (info.get("queues") or {}).get("queue") or []:
        found |= _queue_names(child)
    return found


def _mb(text: str) -> int | None:
    text = text.strip().lower()
    scale = {"k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}
    try:
        if text[-1:] in scale:
            return int(float(text[:-1]) * scale[text[-1]])
        return int(text)  # Spark reads a bare number as MiB
    except ValueError:
        return None


def _executor_mb(conf: dict[str, str]) -> int | None:
    heap = _mb(conf.get("spark.executor.memory", "1g"))
    if heap is None:
        return None
    overhead = _mb(conf["spark.executor.memoryOverhead"]) if "spark.executor.memoryOverhead" in conf else None
    return heap + (overhead if overhead is not None else max(384, heap // 10))


def service_nodes(home: Path) -> tuple[Path, str] | None:
    """The nodes file of ``services up yarn`` when the run uses it."""
    state = service_state(home)
    return (Path(state["nodes"]), "services up yarn") if state and state.get("nodes") else None
