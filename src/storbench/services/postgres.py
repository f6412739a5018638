"""A private PostgreSQL cluster (Debian's ``postgresql`` package) for a service's own state: initdb into the
service directory, password authentication (scram-sha-256) on 127.0.0.1 only, no unix socket, stopped by the
postmaster's PID (its command line names the data directory).

postgres refuses to run as root: as root, the data directory belongs to the package's ``postgres`` user (or
``nobody``) and the server tools run through ``runuser``; the service directory then stays traversable
(0711), never listable, and the files that hold secrets stay 0600.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from storbench.errors import EngineError
from storbench.services import process
from storbench.services.ports import free_port

USER = "storbench"
SETTINGS = "-c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c fsync=off -c synchronous_commit=off"


def bindir() -> Path:
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not versions:
        raise EngineError(
            "PostgreSQL is not installed (no initdb): apt-get install postgresql, or run "
            "scripts/setup.sh --part metastore"
        )
    return Path(versions[-1]).parent


def _owner() -> str | None:
    """The account the server runs as when we are root."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    raise EngineError("PostgreSQL cannot run as root and there is no postgres (or nobody) account to run it as")


def _tool(owner: str | None, name: str, *args: str, log: Path | None = None) -> None:
    argv = [str(bindir() / name), *args]
    if owner:
        argv = ["runuser", "-u", owner, "--", *argv]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise EngineError(f"PostgreSQL {name} failed: {why[:300]}" + (f" (log: {log})" if log else ""))


def cluster_dir(wanted: Path) -> Path:
    """``wanted`` when the server's account can reach it; else (a results home under /root, say, which the
    postgres account cannot traverse) a private directory of its own (mkdtemp), recorded in the state."""
    owner = _owner()
    parent = wanted.parent
    if owner is None or subprocess.run(["runuser", "-u", owner, "--", "test", "-x", str(parent)]).returncode == 0:
        wanted.mkdir(mode=0o700)
        return wanted
    return Path(tempfile.mkdtemp(prefix="storbench-metastore-pg-", dir="/var/tmp"))


def start(root: Path, password: str, database: str) -> dict[str, Any]:
    """A new cluster in ``root`` (an empty directory of ours), owned by ``USER`` with ``password``, holding
    ``database``; its process entry (kind postgres, pid, marker) plus ``port``."""
    owner = _owner()
    data, log = root / "data", root / "server.log"
    data.mkdir(mode=0o700)
    pwfile = root / "pw"
    process.write_private(pwfile, password + "\n")  # initdb reads it; removed at once
    if owner:
        for path in (root, data, pwfile):
            shutil.chown(path, owner)
    try:
        _tool(
            owner,
            "initdb",
            "-D",
            str(data),
            "-U",
            USER,
            f"--pwfile={pwfile}",
            "-A",
            "scram-sha-256",
            "-E",
            "UTF8",
            "--no-sync",
        )
    finally:
        pwfile.unlink(missing_ok=True)
    port = free_port()
    _tool(
        owner,
        "pg_ctl",
        "-D",
        str(data),
        "-l",
        str(log),
        "-w",
        "-t",
        "120",
        "-o",
        f"{SETTINGS} -p {port}",
        "start",
        log=log,
    )
    pid = int((data / "postmaster.pid").read_text().split()[0])
    entry = {"kind": "postgres", "pid": pid, "marker": str(data), "port": port, "log": str(log)}
    done = create_database(port, password, database)
    if done.returncode != 0:
        stop(entry)
        raise EngineError(f"PostgreSQL: creating database {database} failed: {done.stderr.strip()[:300]}")
    return entry


def create_database(
    port: int, password: str, database: str, run: Callable[..., subprocess.CompletedProcess] = subprocess.run
) -> subprocess.CompletedProcess:
    """``database``, made as its owner through the server's own client (psql, started by ``run``). The password
    reaches psql in a passfile (``PGPASSFILE``, 0600, in a private mkdtemp directory removed as soon as psql
    exits): never its command line nor its environment (``PGPASSWORD`` is in /proc/PID/environ, and every child
    of psql's)."""
    psql = [
        str(bindir() / "psql"),
        "-h",
        "127.0.0.1",
        "-p",
        str(port),
        "-U",
        USER,
        "-d",
        "postgres",
        "-q",
        "-v",
        "ON_ERROR_STOP=1",
        "-c",
        f'CREATE DATABASE "{database}"',
    ]
    folder = Path(tempfile.mkdtemp(prefix="storbench-pgpass-"))
    try:
        passfile = folder / "pgpass"
        escaped = password.replace("\\", "\\\\").replace(":", "\\:")  # the passfile's escapes
        process.write_private(passfile, f"127.0.0.1:{port}:postgres:{USER}:{escaped}\n")
        env = {k: v for k, v in os.environ.items() if k not in ("PGPASSWORD", "PGPASSFILE", "PGSERVICE")}
        return run(
            psql,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            env={**env, "PGPASSFILE": str(passfile)},
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def stop(entry: dict[str, Any]) -> bool:
    """SIGTERM (a smart shutdown: its clients are gone by then), then SIGKILL; only our postmaster."""
    return process.stop_pid(entry["pid"], entry["marker"], timeout=30.0)


def remove_cluster(root: Path) -> None:
    """A cluster directory :func:`cluster_dir` made outside the service directory (and nothing else)."""
    if root.parent == Path("/var/tmp") and root.name.startswith("storbench-metastore-pg-") and not root.is_symlink():
        shutil.rmtree(root, ignore_errors=True)
