"""The embedded index: ``results.db`` in the results home, rebuilt from the run directories when missing."""

from __future__ import annotations

import os
import sqlite3
import tempfile
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any, Iterator

from storbench.errors import ResultsError
from storbench.results.index import SqlIndex
from storbench.results.runfiles import fsync_dir

DB_SCHEMA_VERSION = 1

_DDL = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, label TEXT NOT NULL, suite TEXT NOT NULL, status TEXT NOT NULL,
    started TEXT NOT NULL, finished TEXT, path TEXT NOT NULL, schema_version INTEGER NOT NULL, summary TEXT);
CREATE INDEX IF NOT EXISTS runs_by_label ON runs(label, started);
CREATE TABLE IF NOT EXISTS samples (
    run_id TEXT NOT NULL REFERENCES runs(run_id), workload TEXT NOT NULL, metric TEXT NOT NULL,
    value REAL, unit TEXT NOT NULL, repetition INTEGER NOT NULL, labels TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS samples_by_run ON samples(run_id);
"""


class SqliteIndex(SqlIndex):
    def __init__(self, home: Path, db_path: Path | None = None):
        self.home = home
        self.db_path = db_path or home / "results.db"
        self.where = str(home)

    def ready(self) -> None:
        pass  # created on the first write; the home's own checks come first

    def missing(self) -> bool:
        return not self.db_path.exists()

    @contextmanager
    def rebuilding(self) -> Iterator["SqliteIndex"]:
        """A new index file beside ``results.db``, renamed over it once filled (atomic: an interrupt or an error
        leaves the old index, and the half-built file is removed)."""
        self.home.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f"{self.db_path.name}.", suffix=".new", dir=self.home)
        os.close(fd)
        fresh = SqliteIndex(self.home, Path(name))
        try:
            yield fresh
            with open(name, "rb+") as handle:  # sqlite syncs its own commits; this covers the file as a whole
                os.fsync(handle.fileno())
            os.replace(name, self.db_path)
            fsync_dir(self.home)
        finally:
            if os.path.exists(name):
                os.unlink(name)

    @contextmanager
    def _cursor(self, write: bool = False) -> Iterator[Any]:
        with closing(self._connect()) as db, db:  # the inner `with db` commits, or rolls back on an error
            yield db.cursor()

    def _connect(self) -> sqlite3.Connection:
        try:  # a home that is a file or read-only: one line, not a traceback
            self.home.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.db_path, timeout=30)
            version = db.execute("PRAGMA user_version").fetchone()[0]
        except (OSError, sqlite3.Error) as exc:
            why = "it is a file" if self.home.is_file() else getattr(exc, "strerror", None) or exc
            raise ResultsError(f"--results {self.home}: cannot open {self.db_path.name} ({why})") from None
        if version > DB_SCHEMA_VERSION:
            db.close()
            raise ResultsError(
                f"{self.db_path}: index schema {version} is newer than this storbench "
                f"reads ({DB_SCHEMA_VERSION}); upgrade storbench"
            )
        if version == 0:
            db.executescript(_DDL)
            db.execute(f"PRAGMA user_version = {DB_SCHEMA_VERSION}")
            db.commit()
        elif "summary" not in {row[1] for row in db.execute("PRAGMA table_info(runs)")}:
            db.execute("ALTER TABLE runs ADD COLUMN summary TEXT")  # an index written before issue 28: rows keep NULL
            db.commit()
        return db
