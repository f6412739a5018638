"""A shared index in PostgreSQL (``--results postgresql://user@host:port/db``).

Runs from many machines land in one index; each row records the host and path of its run directory
(the files stay on the machine that ran it) and a copy of the manifest, so ``runs``, ``show`` and
``compare`` work on any machine. The URL's password (or ``PGPASSWORD``) goes to libpq only: every
message names the URL through :func:`redact_pg`. A password in the URL is on storbench's own command line
(any local user reads it there): :func:`password_warning` says to use ``PGPASSFILE`` or ``~/.pgpass``
(0600) instead. ``PGPASSWORD`` is taken out of storbench's environment once read, so that no child
inherits it. To a host other than loopback the connection needs TLS (``sslmode=require``) unless the
URL (or ``PGSSLMODE``) sets ``sslmode`` itself.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from contextlib import contextmanager
from typing import Any, Iterator
from urllib.parse import unquote, urlsplit

from storbench.errors import InputError, ResultsError
from storbench.redaction import MASK, redact_url
from storbench.results.index import BASE_COLUMNS, IndexLost, SqlIndex

DB_SCHEMA_VERSION = 1
_LOCK = 0x5354_4F52  # one advisory lock id: two machines creating the tables at once wait for each other

_DDL = """
CREATE TABLE IF NOT EXISTS storbench_schema (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, label TEXT NOT NULL, suite TEXT NOT NULL, status TEXT NOT NULL,
    started TEXT NOT NULL, finished TEXT, path TEXT NOT NULL, schema_version INTEGER NOT NULL,
    host TEXT NOT NULL, manifest TEXT NOT NULL, summary TEXT);
CREATE INDEX IF NOT EXISTS runs_by_label ON runs(label, started);
CREATE TABLE IF NOT EXISTS samples (
    run_id TEXT NOT NULL REFERENCES runs(run_id), workload TEXT NOT NULL, metric TEXT NOT NULL,
    value DOUBLE PRECISION, unit TEXT NOT NULL, repetition INTEGER NOT NULL, labels TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS samples_by_run ON samples(run_id);
"""
_HAS_SUMMARY = (
    "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
    "AND table_name = 'runs' AND column_name = 'summary'"
)


def is_postgres_url(text: str) -> bool:
    return text.startswith(("postgresql://", "postgres://"))


def redact_pg(text: str, url: str) -> str:
    """``text`` without the URL's password: its user:password@, a ``password=`` parameter, the value itself."""
    text = redact_url(text)
    try:
        parts = urlsplit(url)
        secrets = [parts.password] + re.findall(r"password=([^&]*)", parts.query)
    except ValueError:  # an unparsable URL: the patterns above are all there is
        secrets = []
    for secret in filter(None, secrets):
        for form in {secret, unquote(secret)}:
            text = text.replace(form, MASK)
    return text


def _settings(url: str) -> dict[str, str]:
    from psycopg.conninfo import conninfo_to_dict

    try:
        return {k: str(v) for k, v in conninfo_to_dict(url).items()}
    except Exception:  # unparsable: libpq says so, in one line, when it connects
        return {}


def password_warning(url: str, where: str) -> str | None:
    """The warning for a URL holding a password (``where``: how it was given), or None."""
    if not _settings(url).get("password"):
        return None
    return (
        f"{where} {redact_pg(url, url)}: the URL holds a password (a command line is readable by every "
        f"local user); put it in a 0600 file named by PGPASSFILE (or ~/.pgpass) instead"
    )


def _is_loopback(host: str) -> bool:
    if not host or host.startswith("/") or host == "localhost":
        return True  # a Unix socket (libpq's default without a host), or loopback by name
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        found = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except OSError:  # libpq will say it cannot resolve it
        return False
    return bool(found) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in found)


def tls_default(url: str) -> str | None:
    """``require`` when the URL reaches a host other than loopback and neither it nor PGSSLMODE sets sslmode."""
    settings = _settings(url)
    if "sslmode" in settings or os.environ.get("PGSSLMODE"):
        return None
    hosts = (settings.get("hostaddr") or settings.get("host") or os.environ.get("PGHOST", "")).split(",")
    return None if all(_is_loopback(h.strip()) for h in hosts) else "require"


class PostgresIndex(SqlIndex):
    COLUMNS = (*BASE_COLUMNS, "host", "manifest")
    shared = True

    def __init__(self, url: str):
        self.url = url
        self.where = redact_pg(url, url)
        self._conn: Any = None
        self._sslmode = tls_default(url)
        # libpq reads PGPASSWORD at each connect: keep it here instead, out of every child's environment
        self._password = os.environ.pop("PGPASSWORD", None) if "password" not in _settings(url) else None

    def _sql(self, query: str) -> str:
        return query.replace("?", "%s")

    @contextmanager
    def _cursor(self, write: bool = False) -> Iterator[Any]:
        import psycopg

        try:
            conn = self._connection()
            if write:
                with conn.transaction(), conn.cursor() as cur:
                    yield cur
            else:
                with conn.cursor() as cur:
                    yield cur
        except (psycopg.OperationalError, psycopg.InterfaceError) as exc:
            self.close()  # no retry: a run that lost its index finishes in files, `storbench import` indexes it
            raise IndexLost(f"results index {self.where}: {self._reason(exc)}") from None
        except psycopg.Error as exc:
            raise ResultsError(f"results index {self.where}: {self._reason(exc)}") from None

    def _connection(self) -> Any:
        import psycopg

        if self._conn is not None and not self._conn.closed:
            return self._conn
        extra = {k: v for k, v in (("sslmode", self._sslmode), ("password", self._password)) if v}
        try:
            # keepalives and a TCP timeout: a network that drops packets ends in an error, not a hung run
            conn = psycopg.connect(
                self.url,
                autocommit=True,
                connect_timeout=10,
                application_name="storbench",
                keepalives=1,
                keepalives_idle=30,
                keepalives_interval=10,
                keepalives_count=3,
                tcp_user_timeout=60000,
                **extra,
            )
        except psycopg.ProgrammingError as exc:  # libpq could not parse the URL
            raise InputError(
                f"--results {self.where}: not a PostgreSQL URL libpq accepts "
                f"({self._reason(exc)}); expected postgresql://USER@HOST:PORT/DB"
            ) from None
        except psycopg.OperationalError as exc:
            if self._sslmode and "SSL" in str(exc):
                raise InputError(
                    f"--results {self.where}: the server does not offer TLS, which storbench requires "
                    f"for a host other than loopback; set sslmode in the URL (?sslmode=verify-full "
                    f"with the server's CA, or ?sslmode=disable for clear text)"
                ) from None
            raise
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
            conn.execute(_DDL)
            if not conn.execute(_HAS_SUMMARY).fetchone():  # a table created before issue 28: rows keep NULL
                conn.execute("ALTER TABLE runs ADD COLUMN summary TEXT")
            row = conn.execute("SELECT max(version) FROM storbench_schema").fetchone()
            if row[0] is None:
                conn.execute("INSERT INTO storbench_schema VALUES (%s)", (DB_SCHEMA_VERSION,))
            elif row[0] > DB_SCHEMA_VERSION:
                conn.close()
                raise ResultsError(
                    f"results index {self.where}: schema {row[0]} is newer than this storbench "
                    f"reads ({DB_SCHEMA_VERSION}); upgrade storbench"
                )
        self._conn = conn
        return conn

    def _reason(self, exc: Exception) -> str:
        # libpq's text names host and port but never the password; redacted anyway, on one line
        return redact_pg(" ".join(str(exc).split()), self.url)

    def close(self) -> None:
        if self._conn is not None:
            try:
                self._conn.close()
            except Exception:  # closing a dead connection: nothing left to release
                pass
            self._conn = None
