"""A real single-node Ceph on loopback: one mon, one mgr, N OSDs and an optional RGW.

Debian's Ceph 16.2 packages (``scripts/setup.sh --test`` installs them). Everything
lives under the service directory (``<results home>/services/ceph``): ``ceph.conf``,
the mon/mgr stores, logs, admin sockets, the cephx keyrings (``keys/``, see ``ceph_auth``) and,
unless ``--osd-dir`` puts them elsewhere, the OSDs' data; the directory is the owner's only. Every
daemon and client authenticates with cephx, pools cannot be deleted (``mon_allow_pool_delete =
false``: storbench removes only the objects it wrote, never a pool), and every daemon binds
127.0.0.1 on free ports. The facts this follows (shared/SERVICES.md, Ceph section):

- BlueStore on a plain sparse file (``bluestore_block_create``; ``bluestore_block_path``
  left unset: setting it to ``$osd_data/block`` makes mkfs symlink the file to itself);
  ``--objectstore memstore`` keeps the OSDs in memory instead (no disk I/O).
- The monitor gets both a v2 and a v1 address (a v2-only monitor makes clients hang).
- ``ms_mon_client_mode``/``ms_client_mode = crc``: cephx still authenticates every
  connection; crc rather than secure (encrypted) mode keeps the bench's messages cheap on loopback.
- Size-1 pools need ``mon_allow_pool_size_one``; PG autoscaling is off so PGs stay
  still during a bench; the pool gets its ``rados`` application for a clean health.
- Daemons run in the foreground (``-f``) as storbench's own detached children, so
  their PIDs are known without pid files; they are stopped by PID, RGW → OSDs → mgr
  → mon, each only while its command line still names this cluster's conf.

``up`` returns the state: ``uri`` (``rados://storbench``, the pool to pass as
``--target``), ``conf``, ``pool``, ``osd_dirs`` and, with RGW, ``s3_endpoint``,
``access_key`` and ``secret_key`` (the S3 service can reuse this RGW).
"""

from __future__ import annotations

import json
import shutil
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.request import urlopen

from storbench.errors import EngineError, InputError
from storbench.services import ceph_auth, process
from storbench.services.ceph_cluster import START_TIMEOUT_S, BootingCluster, conf_text
from storbench.services.ports import free_port
from storbench.services.registry import Flag, register

register(
    "ceph",
    __name__,
    Flag("osds", "number of OSDs (default 1)", int),
    Flag("objectstore", "bluestore (default; on a sparse file) or memstore"),
    Flag("osd_gb", "GiB per OSD (BlueStore file or memstore; default 10)", int),
    Flag("osd_dir", "put the OSDs' data in this directory (default: the service dir)"),
    Flag("rgw", "also start an RGW with an S3 user", switch=True),
)
OBJECTSTORES = ("bluestore", "memstore")
POOL = "storbench"
PG_NUM = 32
STOP_ORDER = ("rgw", "osd", "mgr", "mon")
BINARIES = ("ceph-mon", "ceph-mgr", "ceph-osd", "ceph", "rados", "monmaptool", "ceph-authtool")
RGW_BINARIES = ("radosgw", "radosgw-admin")
OWNED = ".storbench-ceph"  # marker file in an --osd-dir root we created


def installed_binaries(rgw: bool) -> dict[str, str]:
    """The Ceph daemons' and tools' paths (RGW's too with ``rgw``); EngineError naming what is missing."""
    found = {name: shutil.which(name) for name in BINARIES + (RGW_BINARIES if rgw else ())}
    missing = [name for name, path in found.items() if not path]
    if missing:
        raise EngineError(
            f"Ceph is not installed ({', '.join(missing)} missing); run scripts/setup.sh --test "
            f"(apt-get install ceph-mon ceph-osd ceph-mgr radosgw ceph-common)"
        )
    return {name: path for name, path in found.items() if path}


def up(
    workdir: Path,
    osds: int = 1,
    rgw: bool = False,
    objectstore: str = "bluestore",
    osd_gb: int = 10,
    osd_dir: str | None = None,
    find_binaries: Callable[[bool], dict[str, str]] = installed_binaries,
) -> dict[str, Any]:
    if not 1 <= osds <= 8:
        raise InputError(f"--osds {osds}: allowed 1 to 8")
    if objectstore not in OBJECTSTORES:
        raise InputError(f"--objectstore {objectstore!r}: allowed: {', '.join(OBJECTSTORES)}")
    if not 1 <= osd_gb <= 4096:
        raise InputError(f"--osd-gb {osd_gb}: allowed 1 to 4096 (GiB per OSD)")
    osd_root = _osd_root(workdir, osd_dir)
    state = status(workdir)
    if state:
        asked = {"osds": osds, "objectstore": objectstore, "rgw": bool(rgw), "osd_root": str(osd_root)}
        have = {k: state.get(k) for k in asked}
        if have != asked:
            raise InputError(f"ceph is already running with {have}; stop it first (`storbench services down ceph`)")
        return state
    binaries = find_binaries(rgw)
    if osd_dir and osd_root.exists() and not _owns_osd_root(workdir, osd_root):
        raise InputError(
            f"--osd-dir {osd_dir}: {osd_root} exists and was not created by storbench for {workdir}; refusing to use it"
        )
    if process.owned(workdir, "ceph"):
        down(workdir)  # a stopped cluster's leftovers (daemons, an --osd-dir of ours); fresh_dir refuses others
    process.fresh_dir(workdir, "ceph")
    workdir.chmod(0o700)  # keyrings and state.json: the owner's only
    if osd_dir:
        shutil.rmtree(osd_root, ignore_errors=True)
        osd_root.mkdir(parents=True, mode=0o700)
        (osd_root / OWNED).write_text(str(workdir) + "\n")
    run_dir = process.socket_dir(workdir, "ceph-client.rgw.x.asok")  # admin sockets
    for sub in ("log", "mon/a", "mgr/x", "rgw", "crash"):
        (workdir / sub).mkdir(parents=True, exist_ok=True)
    osd_root.mkdir(parents=True, exist_ok=True)
    run_dir.mkdir(parents=True, exist_ok=True)
    ports = {"mon_v2": free_port(), "mon_v1": free_port(), "rgw": free_port()}
    fsid = str(uuid.uuid4())
    osd_bytes = osd_gb << 30
    cluster = BootingCluster(workdir, binaries)
    cluster.conf.write_text(conf_text(workdir, fsid, ports, osd_root, objectstore, osd_bytes, osds, run_dir))
    state = {
        "service": "ceph",
        "workdir": str(workdir),
        "conf": str(cluster.conf),
        "fsid": fsid,
        "ports": ports,
        "osds": osds,
        "objectstore": objectstore,
        "osd_gb": osd_gb,
        "rgw": bool(rgw),
        "osd_root": str(osd_root),
        "osd_dir_owned": bool(osd_dir),
        "run_dir": str(run_dir),
        "daemons": cluster.daemons,
        "pool": POOL,
        "uri": f"rados://{POOL}",
    }
    _save(workdir, state)  # from here on `down` can stop whatever has started
    started = time.monotonic()
    deadline = started + START_TIMEOUT_S
    try:
        _start(cluster, state, osds, deadline)
        if rgw:
            _start_rgw(cluster, state, deadline)
    except BaseException:
        _save(workdir, state)
        _stop_all(state)
        raise
    elapsed = time.monotonic() - started
    state["pid"] = cluster.daemons[0]["pid"]
    state["marker"] = cluster.daemons[0]["marker"]
    state["osd_dirs"] = [str(osd_root / f"osd{i}") for i in range(osds)]
    state["startup_s"] = round(elapsed, 2)
    store = f"{objectstore}" + (f" on a {osd_gb} GiB file" if objectstore == "bluestore" else f", {osd_gb} GiB")
    summary = (
        f"1 mon (pid {state['pid']}), 1 mgr, {osds} OSD(s) ({store}), pool {POOL}, HEALTH_OK in "
        f"{elapsed:.1f} s; conf {cluster.conf}"
    )
    if rgw:
        summary += f"; S3 endpoint {state['s3_endpoint']} (user storbench)"  # the CLI prints the keys apart
    state["summary"] = summary
    _save(workdir, state)
    return state


def _save(workdir: Path, state: dict[str, Any]) -> None:
    """state.json holds the RGW user's secret key: write_state makes it owner-only from the start."""
    process.write_state(workdir, state)


def _osd_root(workdir: Path, osd_dir: str | None) -> Path:
    if not osd_dir:
        return workdir / "osd"
    base = Path(osd_dir).expanduser().absolute()
    if not base.is_dir():
        raise InputError(f"--osd-dir {osd_dir}: not a directory")
    return base / "storbench-ceph-osd"


def _owns_osd_root(workdir: Path, osd_root: Path) -> bool:
    """An --osd-dir root storbench made for this home's ceph service (its marker names the service dir)."""
    try:
        return (osd_root / OWNED).read_text().strip() == str(workdir)
    except OSError:
        return False


def _start(cluster: BootingCluster, state: dict[str, Any], osds: int, deadline: float) -> None:
    workdir, conf, bins = cluster.workdir, str(cluster.conf), cluster.bin
    ports = state["ports"]
    monmap = workdir / "monmap"
    mon_keyring = ceph_auth.bootstrap(workdir, lambda *args: cluster.run(*args, tool="ceph-authtool"))
    cluster.run(
        "--create",
        "--fsid",
        state["fsid"],
        "--addv",
        "a",
        f"[v2:127.0.0.1:{ports['mon_v2']},v1:127.0.0.1:{ports['mon_v1']}]",
        str(monmap),
        tool="monmaptool",
    )
    cluster.run("--mkfs", "-i", "a", "--monmap", str(monmap), "--keyring", str(mon_keyring), tool="ceph-mon")
    cluster.spawn("mon", "mon.a", [bins["ceph-mon"], "-f", "-c", conf, "-i", "a"])
    _save(workdir, state)
    cluster.run("mon", "stat", timeout=30)
    ceph_auth.grant(workdir, "mgr.x", cluster.run)
    cluster.spawn("mgr", "mgr.x", [bins["ceph-mgr"], "-f", "-c", conf, "-i", "x"])
    _save(workdir, state)
    for index in range(osds):
        osd_uuid = str(uuid.uuid4())
        osd_id = cluster.run("osd", "new", osd_uuid).strip()
        if osd_id != str(index):
            raise EngineError(f"ceph gave OSD id {osd_id!r}, expected {index}")
        (Path(state["osd_root"]) / f"osd{index}").mkdir(parents=True, exist_ok=True)
        ceph_auth.grant(workdir, f"osd.{osd_id}", cluster.run)
        cluster.run("-i", osd_id, "--mkfs", "--osd-uuid", osd_uuid, tool="ceph-osd", timeout=120)
        cluster.spawn("osd", f"osd.{index}", [bins["ceph-osd"], "-f", "-c", conf, "-i", osd_id])
        _save(workdir, state)
    cluster.run("osd", "pool", "create", POOL, str(PG_NUM), str(PG_NUM))
    cluster.run("osd", "pool", "set", POOL, "size", "1", "--yes-i-really-mean-it")
    cluster.run("osd", "pool", "application", "enable", POOL, "rados")
    cluster.wait_clean(osds, deadline)


def _start_rgw(cluster: BootingCluster, state: dict[str, Any], deadline: float) -> None:
    # Its port is taken now, not with the others when the conf was written: in the ~30 s the mon, mgr and OSD
    # take to start on a busy machine, another program's connection took it once ("failed initializing frontend")
    port = state["ports"]["rgw"] = free_port()
    ceph_auth.grant(cluster.workdir, "client.rgw.x", cluster.run)
    cluster.spawn(
        "rgw",
        "client.rgw.x",
        [
            cluster.bin["radosgw"],
            "-f",
            "-c",
            str(cluster.conf),
            "-n",
            "client.rgw.x",
            "--ms_mon_client_mode=crc",
            "--ms_client_mode=crc",
            f"--rgw_frontends=beast endpoint=127.0.0.1:{port}",
        ],
    )
    _save(cluster.workdir, state)
    endpoint = f"http://127.0.0.1:{port}"
    while True:
        cluster.check_alive()
        try:
            with urlopen(endpoint + "/", timeout=2):
                break
        except OSError:
            if time.monotonic() > deadline:
                raise EngineError(
                    f"RGW did not answer on {endpoint} within {START_TIMEOUT_S:.0f} s; "
                    f"log: {cluster.workdir / 'log' / 'ceph-client.rgw.x.log'}"
                ) from None
            time.sleep(0.5)
    # radosgw-admin makes the keys and prints them: the secret never appears in an argv (visible in ps).
    made = cluster.run(
        "user",
        "create",
        "--uid=storbench",
        "--display-name=storbench",
        "--gen-access-key",
        "--gen-secret",
        tool="radosgw-admin",
    )
    key = json.loads(made)["keys"][0]
    state.update(s3_endpoint=endpoint, access_key=key["access_key"], secret_key=key["secret_key"])
    cluster.wait_clean(state["osds"], deadline)  # RGW's own pools are "unknown" for a few seconds


def client_env(state: dict[str, Any]) -> dict[str, str]:
    """What a shell needs to reach this cluster: its conf (which names the client.admin keyring) and, with
    RGW, the S3 endpoint and the storbench user's keys."""
    env = {"CEPH_CONF": state["conf"]}
    if state.get("s3_endpoint"):
        env |= {
            "AWS_ENDPOINT_URL": state["s3_endpoint"],
            "AWS_ACCESS_KEY_ID": state["access_key"],
            "AWS_SECRET_ACCESS_KEY": state["secret_key"],
        }
    return env


def status(workdir: Path) -> dict[str, Any] | None:
    state = process.read_state(workdir)
    if state and state.get("pid") and process.alive(state["pid"], state["marker"]):
        return state
    return None


def daemon_alive(daemon: dict[str, Any]) -> bool:
    return process.alive(daemon["pid"], daemon["marker"])


def stop_daemon(workdir: Path, name: str, timeout: float = 30.0) -> bool:
    """Stop one daemon (``osd.0``, ``client.rgw.x``, ...) by PID; the cluster stays up without it."""
    state = process.read_state(workdir) or {}
    for daemon in state.get("daemons", []):
        if daemon["name"] == name:
            return process.stop_pid(daemon["pid"], daemon["marker"], timeout)
    raise InputError(f"ceph has no daemon {name!r}")


def start_daemon(workdir: Path, name: str) -> int:
    """Start a stopped daemon again with its recorded command line; returns its new PID."""
    state = process.read_state(workdir) or {}
    for daemon in state.get("daemons", []):
        if daemon["name"] == name:
            if daemon_alive(daemon):
                return daemon["pid"]
            proc = process.spawn(daemon["argv"], workdir / "log", f"{name}.stdout", umask=ceph_auth.UMASK)
            daemon["pid"] = proc.pid
            _save(workdir, state)
            return proc.pid
    raise InputError(f"ceph has no daemon {name!r}")


def _stop_all(state: dict[str, Any]) -> bool:
    """RGW → OSDs → mgr → mon, each by PID with SIGTERM then SIGKILL; True when any was running."""
    return process.stop_in_order(
        state.get("daemons", []),
        STOP_ORDER,
        lambda daemon: process.stop_pid(daemon["pid"], daemon["marker"], timeout=30.0),
    )


def down(workdir: Path) -> bool:
    def stop(state: dict[str, Any]) -> bool:
        stopped = _stop_all(state)
        if state.get("osd_dir_owned") and _owns_osd_root(workdir, Path(state["osd_root"])):
            shutil.rmtree(state["osd_root"], ignore_errors=True)
        run_dir = Path(state.get("run_dir", workdir / "run"))
        if not run_dir.is_relative_to(workdir):
            shutil.rmtree(run_dir, ignore_errors=True)
        return stopped

    return process.take_down(workdir, "ceph", stop)
