"""A shared index in PostgreSQL (``--results postgresql://user@host:port/db``).

Runs from many machines land in one index; each row records the host and path of its run directory
(the files stay on the machine that ran it) and a copy of the manifest, so ``runs``, ``show`` and
``compare`` work on any machine. The URL's password (or ``PGPASSWORD``) goes to libpq only: every
message names the URL through :func:`redact_pg`.
"""

from __future__ import annotations

import re
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
    host TEXT NOT NULL, manifest TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS runs_by_label ON runs(label, started);
CREATE TABLE IF NOT EXISTS samples (
    run_id TEXT NOT NULL REFERENCES runs(run_id), workload TEXT NOT NULL, metric TEXT NOT NULL,
    value DOUBLE PRECISION, unit TEXT NOT NULL, repetition INTEGER NOT NULL, labels TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS samples_by_run ON samples(run_id);
"""


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


class PostgresIndex(SqlIndex):
    COLUMNS = (*BASE_COLUMNS, "host", "manifest")
    shared = True

    def __init__(self, url: str):
        self.url = url
        self.where = redact_pg(url, url)
        self._conn: Any = None

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
        try:
            # keepalives and a TCP timeout: a network that drops packets ends in an error, not a hung run
            conn = psycopg.connect(self.url, autocommit=True, connect_timeout=10, application_name="storbench",
                                   keepalives=1, keepalives_idle=30, keepalives_interval=10, keepalives_count=3,
                                   tcp_user_timeout=60000)
        except psycopg.ProgrammingError as exc:  # libpq could not parse the URL
            raise InputError(f"--results {self.where}: not a PostgreSQL URL libpq accepts "
                             f"({self._reason(exc)}); expected postgresql://USER@HOST:PORT/DB") from None
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
            conn.execute(_DDL)
            row = conn.execute("SELECT max(version) FROM storbench_schema").fetchone()
            if row[0] is None:
                conn.execute("INSERT INTO storbench_schema VALUES (%s)", (DB_SCHEMA_VERSION,))
            elif row[0] > DB_SCHEMA_VERSION:
                conn.close()
                raise ResultsError(f"results index {self.where}: schema {row[0]} is newer than this storbench "
                                   f"reads ({DB_SCHEMA_VERSION}); upgrade storbench")
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
