"""A real PostgreSQL for the tests (Debian's `postgresql` package): initdb into a mkdtemp dir, started on
127.0.0.1 on a free port with password authentication, stopped and removed after.

postgres refuses to run as root: as root, the data directory belongs to the package's `postgres` user (or
`nobody`) and the server tools run through `runuser`."""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path
from storbench.services.ports import free_port

USER = "bench"


def _bindir() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(versions[-1]).parent if versions else None


class PgServer:
    def __init__(self, listen: str = "127.0.0.1") -> None:
        """``listen``: the addresses it listens on (comma-separated), each allowed to log in with a password."""
        bindir = _bindir()
        if bindir is None:
            raise RuntimeError("PostgreSQL is not installed: run scripts/setup.sh --test (Debian's postgresql)")
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="storbench-pg-"))
        self.data = self.root / "data"
        self.password = secrets.token_hex(12)
        self.port = free_port()
        self.owner = None
        if os.geteuid() == 0:
            self.owner = next((name for name in ("postgres", "nobody") if _user_exists(name)), None)
        self.root.chmod(0o755)
        self.data.mkdir(mode=0o700)
        pwfile = self.root / "pw"
        pwfile.write_text(self.password + "\n")
        if self.owner:
            shutil.chown(self.data, self.owner)
            shutil.chown(pwfile, self.owner)
        try:
            self._tool(
                "initdb",
                "-D",
                str(self.data),
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
            pwfile.unlink()
        with (self.data / "pg_hba.conf").open("a") as hba:  # initdb allows loopback only
            for address in listen.split(","):
                if address != "127.0.0.1":
                    hba.write(f"host all all {address}/32 scram-sha-256\n")
        self.listen = listen
        self._tool(
            "pg_ctl",
            "-D",
            str(self.data),
            "-l",
            str(self.data / "server.log"),
            "-w",
            "-t",
            "60",
            "-o",
            f"-c listen_addresses='{listen}' -p {self.port} -c unix_socket_directories='' -c fsync=off "
            f"-c full_page_writes=off -c synchronous_commit=off",
            "start",
        )

    def url(self, database: str = "postgres", password: bool = True, host: str = "127.0.0.1") -> str:
        auth = f"{USER}:{self.password}" if password else USER
        return f"postgresql://{auth}@{host}:{self.port}/{database}"

    def sql(self, query: str, database: str = "postgres") -> list[tuple]:
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as conn:
            cur = conn.execute(query)
            return cur.fetchall() if cur.description else []

    def new_database(self) -> str:
        name = f"t_{secrets.token_hex(4)}"
        self.sql(f"CREATE DATABASE {name}")
        return name

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():  # a test may have stopped it already
                self._tool("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def _tool(self, name: str, *args: str) -> None:
        argv = [str(self.bindir / name), *args]
        if self.owner:
            argv = ["runuser", "-u", self.owner, "--", *argv]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            log = self.data / "server.log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"{name} failed ({done.returncode}): {done.stderr.strip()} {tail}")


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False
