"""A real Spark standalone cluster on loopback: one master and N workers, each worker watched by a node_exporter.

The master binds 127.0.0.1 and worker *i* binds 127.0.0.(i+1) (every 127.0.0.X answers
without set-up), all on free ports, started from the installed PySpark with
``spark-class`` (SPARK_HOME = the ``pyspark`` package folder; the wheel has no
``start-*.sh``). Each worker has its own work dir (executors' stdout, the app's files)
and local dir (SPARK_LOCAL_DIRS: shuffle and spill), under the service directory or
under the ``--worker-dir`` given for it (one per worker, e.g. each on its own
filesystem). Beside each worker runs Debian's ``prometheus-node-exporter`` bound to the
worker's address, with loop devices visible.

``up`` waits until the master's ``/json`` lists all N workers ALIVE and every exporter
answers, then writes ``nodes.yaml`` (storbench.telemetry.nodes: one ``worker`` node per
worker with its exporter, address and the disk(s) behind its local dir) and returns the
state: ``uri`` (``spark://127.0.0.1:PORT``), ``nodes``, ``web_ui``. Every process is
recorded in state.json as soon as it is spawned, so an interrupted ``up`` and ``down``
stop it by PID (its command line checked), executors and other children of a worker
included.

Every RPC between master, workers, executors and drivers is authenticated with a shared
secret (``spark.authenticate``): ``up`` generates it and writes it, with the other server
settings, only into ``private/spark-auth.properties`` (0600, in a 0700 directory), which
master and workers read through ``--properties-file``; no command line, environment
variable we set, log or state.json holds it. The workers hand it to the executors they
launch themselves (an environment variable of the executor, readable by its owner only).
A client needs that file (``spark-submit --properties-file``; ``client_env`` names it, and
storbench's own Spark engine reads it through ``client_conf``): a submit without the secret
is refused by the master.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.request import urlopen

from storbench.errors import EngineError, InputError
from storbench.services import node_exporter, process
from storbench.services.ports import free_port
from storbench.services.jvm import extra_options
from storbench.services.placement import Loopback
from storbench.services.registry import Flag, register
from storbench.services.spark_auth import AUTH_FILE, SERVICE, client_env, write_auth  # noqa: F401 (client_env: the registry's)

register(
    SERVICE,
    __name__,
    Flag("workers", "number of standalone workers (default 2)", int),
    Flag("cores", "cores per worker (default 1)", int),
    Flag("memory", "memory per worker, e.g. 1g (default 1g)"),
    Flag(
        "worker_dir",
        "put a worker's work and local dirs under DIR (repeatable, one per worker; default: the service dir)",
        repeatable=True,
        metavar="DIR",
    ),
    Flag(
        "lab_cluster",
        "place worker K in host node-K of the lab cluster under the same results home (storbench lab cluster up): "
        "its address, its disk, its link",
        switch=True,
    ),
)
LAB_WORKER_PORTS = (7078, 8081)  # a lab host has a network stack of its own: the same ports on every host
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
MAX_WORKERS = 16
START_TIMEOUT_S = 120.0
OWNED = ".storbench-spark-worker"  # in a --worker-dir subdirectory we made; names the service dir
MEMORY = re.compile(r"^[1-9][0-9]*[mMgG]$")


def spark_home() -> Path:
    try:
        import pyspark
    except ImportError:
        raise EngineError("pyspark is not installed; run scripts/setup.sh") from None
    home = Path(pyspark.__file__).resolve().parent
    if not (home / "bin" / "spark-class").is_file():
        raise EngineError(f"{home}/bin/spark-class is missing: this PySpark cannot start a standalone cluster")
    return home


def _check(workers: int, cores: int, memory: str, worker_dir: list[str]) -> None:
    if not 1 <= workers <= MAX_WORKERS:
        raise InputError(f"--workers {workers}: allowed 1 to {MAX_WORKERS}")
    if cores < 1:
        raise InputError(f"--cores {cores}: allowed 1 or more (cores per worker)")
    if not MEMORY.match(memory):
        raise InputError(f"--memory {memory!r}: expected a size like 512m or 1g (memory per worker)")
    if len(worker_dir) > workers:
        raise InputError(f"--worker-dir given {len(worker_dir)} times for {workers} worker(s): at most one per worker")
    for text in worker_dir:
        if not Path(text).expanduser().is_dir():
            raise InputError(f"--worker-dir {text}: not a directory")
        _check_writable(text)


def _check_writable(text: str) -> None:
    """Before the service directory is made: a directory the workers cannot write is one line, not a traceback
    after it (a probe, not os.access: root passes that check on a read-only mount's 0555 directory too)."""
    try:
        os.rmdir(tempfile.mkdtemp(prefix=".storbench-probe-", dir=Path(text).expanduser()))
    except OSError as exc:
        raise InputError(
            f"--worker-dir {text}: cannot write there ({exc.strerror or exc}); give a directory this user can write"
        ) from None


def _worker_root(workdir: Path, index: int, worker_dir: list[str]) -> tuple[Path, bool]:
    """Worker ``index``'s own folder (work/ and local/ inside) and whether it lies outside the service dir."""
    if index <= len(worker_dir):
        return Path(worker_dir[index - 1]).expanduser().absolute() / f"storbench-spark-worker-{index}", True
    return workdir / f"worker-{index}", False


def _owns_root(workdir: Path, root: Path) -> bool:
    try:
        return not root.is_symlink() and (root / OWNED).read_text().strip() == str(workdir)
    except OSError:
        return False


def up(
    workdir: Path,
    workers: int = 2,
    cores: int = 1,
    memory: str = "1g",
    worker_dir: list[str] | None = None,
    placement: Any = None,
) -> dict[str, Any]:
    worker_dir = list(worker_dir or [])
    placement = placement or Loopback()
    _check(workers, cores, memory, worker_dir)
    if workers > placement.capacity:
        raise InputError(f"--workers {workers}: the lab cluster has {placement.capacity} hosts")
    if placement.in_lab and worker_dir:
        raise InputError("--worker-dir and --lab-cluster: a lab host's worker lives on the host's own disk")
    lab_roots = [placement.data_root(i) for i in range(1, workers + 1)]
    roots = [
        (lab_root / "storbench-spark", True) if lab_root else _worker_root(workdir, i, worker_dir)
        for i, lab_root in enumerate(lab_roots, start=1)
    ]
    state = status(workdir)
    if state:
        asked = {"workers": workers, "cores": cores, "memory": memory, "worker_roots": [str(r) for r, _ in roots]}
        have = {key: state.get(key) for key in asked}
        if have != asked:
            raise InputError(f"spark is already running with {have}; stop it first (`storbench services down spark`)")
        return state
    home, exporter = spark_home(), node_exporter.binary()
    for root, outside in roots:
        if outside and os.path.lexists(root) and not _owns_root(workdir, root):
            raise InputError(
                f"--worker-dir {root.parent}: {root} exists and was not made by storbench for "
                f"{workdir}; refusing to use it"
            )
    if process.owned(workdir, SERVICE):
        down(workdir)  # a stopped cluster's leftovers; fresh_dir refuses a directory that is not ours
    process.fresh_dir(workdir, SERVICE)
    (workdir / "conf").mkdir()  # an empty SPARK_CONF_DIR: no user spark-defaults or log4j file leaks in
    (workdir / "log").mkdir()
    write_auth(workdir)
    for root, outside in roots:
        if outside:
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True)
            (root / OWNED).write_text(str(workdir) + "\n")
        for sub in ("work", "local"):
            (root / sub).mkdir(parents=True, exist_ok=True)
    master_port, ui_port = free_port(placement.coordinator), free_port(placement.coordinator)
    state = {
        "service": SERVICE,
        "workdir": str(workdir),
        "workers": workers,
        "cores": cores,
        "memory": memory,
        "worker_roots": [str(r) for r, _ in roots],
        "owned_roots": [str(r) for r, o in roots if o],
        "uri": f"spark://{placement.coordinator}:{master_port}",
        "web_ui": f"http://{placement.coordinator}:{ui_port}",
        "worker_hosts": [placement.address(i) for i in range(1, workers + 1)],
        "driver_host": placement.coordinator if placement.in_lab else None,  # where executors reach the driver
        "auth_file": str(workdir / AUTH_FILE),
        "processes": [],
        "summary": "starting",
    }

    def stop(state: dict[str, Any]) -> None:
        _stop_all(state)
        _remove_roots(workdir, state)

    with process.all_or_nothing(workdir, state, stop):
        _start_all(workdir, state, home, exporter, master_port, ui_port, roots, placement)
        _wait_ready(workdir, state, time.monotonic() + START_TIMEOUT_S)
        state["nodes"] = str(node_exporter.write_nodes(workdir, state, "worker", "worker", "local_dir"))
    state["summary"] = (
        f"master {state['uri']} (pid {state['pid']}, web UI {state['web_ui']}), {workers} worker(s) "
        f"ALIVE ({cores} core(s), {memory} each) with node_exporters, up in "
        f"{state['startup_s']:.1f} s, authenticated (`storbench services env spark`); "
        f"nodes file {state['nodes']}"
    )
    process.write_state(workdir, state)
    return state


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
    home: Path,
    exporter: str,
    master_port: int,
    ui_port: int,
    roots: list[tuple[Path, bool]],
    placement: Any,
) -> None:
    spark_class = str(home / "bin" / "spark-class")
    base_env = {
        "SPARK_HOME": str(home),
        "SPARK_CONF_DIR": str(workdir / "conf"),
        "SPARK_LOG_DIR": str(workdir / "log"),
        "SPARK_NO_DAEMONIZE": "1",
        "SPARK_DAEMON_JAVA_OPTS": shlex.join(extra_options()),  # the master's and workers' JVMs
    }
    auth = ["--properties-file", str(workdir / AUTH_FILE)]  # the secret by path: never in an argv
    master = placement.coordinator
    master_args = [MASTER_CLASS, "--host", master, "--port", str(master_port), "--webui-port", str(ui_port), *auth]
    # the marker is what both bash (spark-class) and the java it execs show in their command lines
    _spawn(
        workdir,
        state,
        "master",
        "master",
        ["bash", spark_class, *master_args],
        " ".join(master_args),
        {**base_env, "SPARK_LOCAL_IP": master, "SPARK_MASTER_HOST": master},
    )
    for index, (root, _) in enumerate(roots, start=1):
        host = placement.address(index)
        port, ui = LAB_WORKER_PORTS if placement.in_lab else (free_port(host), free_port(host))
        args = [
            WORKER_CLASS,
            "--host",
            host,
            "--port",
            str(port),
            "--webui-port",
            str(ui),
            "--cores",
            str(state["cores"]),
            "--memory",
            state["memory"],
            "--work-dir",
            str(root / "work"),
            *auth,
            state["uri"],
        ]
        env = {
            **base_env,
            "SPARK_LOCAL_IP": host,
            "SPARK_LOCAL_DIRS": str(root / "local"),
            "SPARK_WORKER_DIR": str(root / "work"),
        }
        _spawn(
            workdir,
            state,
            "worker",
            f"worker-{index}",
            placement.wrap(index, ["bash", spark_class, *args]),
            " ".join(args[:5]),
            env,
            placement.preexec(index),
            host=host,
            local_dir=str(root / "local"),
            work_dir=str(root / "work"),
            limits=placement.limits(index),
        )
        if placement.exporter(index):  # the lab host's own
            state["lab_exporters"] = {**state.get("lab_exporters", {}), host: placement.exporter(index)}
            continue
        argv, marker, url = node_exporter.command(exporter, host)
        _spawn(workdir, state, "exporter", f"exporter-{index}", argv, marker, host=host, url=url)


def _check_alive(workdir: Path, state: dict[str, Any]) -> None:
    for entry in state["processes"]:
        if not process.still_running(entry["pid"], entry["marker"]):
            log = workdir / "log" / f"{entry['name']}.log"
            raise EngineError(
                f"spark {entry['name']} (pid {entry['pid']}) exited while starting; "
                f"last log line: {process.last_line(log)} (log: {log})"
            )


def master_json(state: dict[str, Any], timeout: float = 5.0) -> dict[str, Any]:
    """The master web UI's ``/json`` view: workers with their host and state, alive count, apps."""
    with urlopen(f"{state['web_ui']}/json", timeout=timeout) as answer:
        return json.loads(answer.read())


def alive_workers(state: dict[str, Any]) -> list[str]:
    """Hosts of the workers the master reports ALIVE."""
    return sorted(w["host"] for w in master_json(state).get("workers", []) if w.get("state") == "ALIVE")


def _wait_ready(workdir: Path, state: dict[str, Any], deadline: float) -> None:
    wanted = sorted(state["worker_hosts"])

    def probe() -> str | None:
        try:
            alive = alive_workers(state)
        except (OSError, ValueError) as exc:
            return f"master web UI {state['web_ui']}: {exc}"
        return None if alive == wanted else f"{len(alive)}/{len(wanted)} workers ALIVE ({', '.join(alive) or 'none'})"

    last = node_exporter.wait_ready(state, deadline, lambda: _check_alive(workdir, state), probe)
    if last is not None:
        raise EngineError(
            f"the Spark cluster was not ready within {START_TIMEOUT_S:.0f} s ({last}); logs in {workdir / 'log'}"
        )


def status(workdir: Path) -> dict[str, Any] | None:
    return process.running_state(workdir)


def running_cluster(home: Path) -> tuple[str, Path] | None:
    """(master URL, nodes file) of the cluster ``services up spark`` runs under results home ``home``, or None."""
    state = status(process.service_dir(home, SERVICE))
    if not state or not state.get("nodes"):
        return None
    return state["uri"], Path(state["nodes"])


def _stop_all(state: dict[str, Any]) -> bool:
    """Exporters, then workers (with their executors), then the master; True when any was running."""
    return process.stop_in_order(state.get("processes", []), ("exporter", "worker", "master"), process.stop_tree)


def down(workdir: Path) -> bool:
    def stop(state: dict[str, Any]) -> bool:
        stopped = _stop_all(state)
        _remove_roots(workdir, state)
        return stopped

    return process.take_down(workdir, SERVICE, stop)


def _remove_roots(workdir: Path, state: dict[str, Any]) -> None:
    """The folders made inside ``--worker-dir``s, each only while its marker names this service dir."""
    for root in map(Path, state.get("owned_roots", [])):
        if _owns_root(workdir, root):
            shutil.rmtree(root, ignore_errors=True)
