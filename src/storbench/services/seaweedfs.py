"""SeaweedFS for ``services up s3``: a master, a volume server, a filer and the S3 gateway, locked down.

Four ``weed`` processes rather than one ``weed server``: ``weed server`` binds its gRPC unix sockets at fixed
names in the shared /tmp (``/tmp/seaweedfs-<name>-grpc-<port>.sock``, no flag moves them), which another user
could create first; the separate commands bind none there (their HTTP sockets go to a private dir). (The
S3 gateway runs apart because ``weed filer -s3`` 4.48 never opened its S3 port here.)

The internal ports do not bypass the S3 identities: ``security.toml`` (cwd of every process, the 0700 service
dir, mode 0600) holds generated JWT signing keys, so the volume server takes writes only with a write token the
master signed and the filer HTTP API only requests the S3 gateway signed; every gRPC port requires mutual TLS
with a certificate of a CA made for this start (``tls/``); the master serves no HTTP at all (``-disableHttp``:
its ``/dir/assign`` would hand out write tokens to anyone).
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
from pathlib import Path
from typing import Any

from storbench.errors import EngineError
from storbench.services import process

STOP_ORDER = ("s3", "filer", "volume", "master")
PORTS = ("master", "master_grpc", "volume", "volume_grpc", "filer", "filer_grpc", "s3", "s3_grpc")
UMASK = 0o077
TLS = "tls"


def security_toml(workdir: Path) -> Path:
    """security.toml with fresh JWT keys and the gRPC mTLS files; owner-only from the start."""
    tls = workdir / TLS
    keys = {name: secrets.token_urlsafe(32) for name in ("write", "read", "filer_write", "filer_read")}
    grpc = "".join(
        f'[grpc.{part}]\ncert = "{tls}/node.crt"\nkey = "{tls}/node.key"\n\n'
        for part in ("master", "volume", "filer", "s3", "client")
    )
    text = (
        f"# written by storbench (services up s3); the keys are this start's only\n"
        f'[jwt.signing]\nkey = "{keys["write"]}"\nexpires_after_seconds = 10\n\n'
        f'[jwt.signing.read]\nkey = "{keys["read"]}"\nexpires_after_seconds = 10\n\n'
        f'[jwt.filer_signing]\nkey = "{keys["filer_write"]}"\nexpires_after_seconds = 10\n\n'
        f'[jwt.filer_signing.read]\nkey = "{keys["filer_read"]}"\nexpires_after_seconds = 10\n\n'
        f"[access]\nui = false\n\n[filer.expose_directory_metadata]\nenabled = false\n\n"
        f'[grpc]\nca = "{tls}/ca.crt"\n\n{grpc}'
    )
    path = workdir / "security.toml"
    process.write_private(path, text)
    return path


def make_tls(workdir: Path) -> None:
    """A CA and one certificate (server and client) signed by it, by openssl, keys written 0600 by openssl
    itself (umask 077): nothing secret passes through an argv."""
    openssl = shutil.which("openssl")
    if not openssl:
        raise EngineError("openssl is not installed (SeaweedFS's gRPC mutual TLS needs a CA); apt-get install openssl")
    tls = workdir / TLS
    tls.mkdir(mode=0o700)
    ext = tls / "node.ext"
    ext.write_text(
        "basicConstraints = critical,CA:FALSE\nkeyUsage = critical,digitalSignature,keyEncipherment\n"
        "extendedKeyUsage = serverAuth,clientAuth\nsubjectAltName = IP:127.0.0.1,DNS:localhost\n"
    )
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    for argv in (
        [
            "req",
            "-x509",
            *ec,
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
            "-subj",
            "/CN=storbench-seaweedfs-ca",
            "-days",
            "3650",
        ],
        ["req", *ec, "-keyout", "node.key", "-out", "node.csr", "-subj", "/CN=storbench-seaweedfs"],
        [
            "x509",
            "-req",
            "-in",
            "node.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "node.crt",
            "-days",
            "3650",
            "-extfile",
            ext.name,
        ],
    ):
        done = subprocess.run([openssl, *argv], cwd=tls, capture_output=True, text=True, timeout=60, umask=UMASK)
        if done.returncode != 0:
            raise EngineError(
                f"openssl {argv[0]} failed making SeaweedFS's gRPC certificates: "
                f"{(done.stderr.strip().splitlines() or ['no message'])[-1]}"
            )


def argvs(
    weed: str, logdir: Path, data: Path, sockets: Path, creds: Path, ports: dict[str, int]
) -> dict[str, list[str]]:
    """The four commands, every port chosen free on 127.0.0.1."""
    common = ["-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-metricsPort=0"]
    master = f"127.0.0.1:{ports['master']}.{ports['master_grpc']}"
    return {
        "master": [
            weed,
            f"-logdir={logdir}",
            "master",
            *common,
            f"-port={ports['master']}",
            f"-port.grpc={ports['master_grpc']}",
            f"-mdir={data / 'master'}",
            "-peers=none",
            "-volumeSizeLimitMB=512",
            "-disableHttp",
            "-telemetry=false",
        ],
        "volume": [
            weed,
            f"-logdir={logdir}",
            "volume",
            *common,
            f"-port={ports['volume']}",
            f"-port.grpc={ports['volume_grpc']}",
            f"-dir={data / 'volume'}",
            "-max=64",
            f"-master={master}",
            "-preStopSeconds=0",
        ],
        "filer": [
            weed,
            f"-logdir={logdir}",
            "filer",
            *common,
            f"-port={ports['filer']}",
            f"-port.grpc={ports['filer_grpc']}",
            f"-master={master}",
            f"-defaultStoreDir={data / 'filer'}",
            f"-localSocket={sockets}/filer.sock",
        ],
        "s3": [
            weed,
            f"-logdir={logdir}",
            "s3",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            "-metricsPort=0",
            f"-port={ports['s3']}",
            f"-port.grpc={ports['s3_grpc']}",
            "-port.iceberg=0",
            "-port.lance=0",
            f"-filer=127.0.0.1:{ports['filer']}.{ports['filer_grpc']}",
            f"-config={creds}",
            f"-localSocket={sockets}/s3.sock",
        ],
    }


def spawn_all(
    workdir: Path, commands: dict[str, list[str]], env: dict[str, str], marker: str
) -> tuple[list[dict[str, Any]], list[subprocess.Popen]]:
    """Master, volume, filer, S3 (each retries until the one before answers); their records and processes."""
    daemons, procs = [], []
    for name, argv in commands.items():
        for sub in (Path(a.split("=", 1)[1]) for a in argv if a.startswith(("-mdir=", "-dir=", "-defaultStoreDir="))):
            sub.mkdir(parents=True, exist_ok=True)
        proc = process.spawn(argv, workdir, f"seaweedfs-{name}.log", env=env, umask=UMASK)
        daemons.append({"kind": name, "name": name, "pid": proc.pid, "marker": marker})
        procs.append(proc)
    return daemons, procs


def stop_all(state: dict[str, Any]) -> bool:
    """S3 → filer → volume → master, by PID; SeaweedFS once ignored SIGTERM: stop_pid escalates. The filer's
    graceful stop waits 10 s for its own metadata subscription and 15 s more for HTTP: it gets 3 s, then SIGKILL
    (``down`` removes its store with the service dir anyway)."""
    daemons = state.get("daemons") or [{"kind": "s3", "pid": state["pid"], "marker": state["marker"]}]
    return process.stop_in_order(
        daemons,
        STOP_ORDER,
        lambda daemon: process.stop_pid(
            daemon["pid"], daemon["marker"], timeout=3.0 if daemon["kind"] == "filer" else 10.0
        ),
    )
