"""The index over run directories: one interface, two backends (SQLite per machine, PostgreSQL shared).

The queries live here, written once with ``?`` placeholders; a backend supplies the connection,
its DDL and the columns its ``runs`` table has (PostgreSQL also keeps each run's host and manifest,
so a machine without the run directory can still list and compare the run). Both keep each run's ``summary``
(the few manifest fields ``runs`` and the ETA read: scale, repetitions, sweep, target, process), so listing
10,000 runs reads no manifest; the column is nullable and added in place to an older index, whose rows without
it are listed from their manifests as before.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from storbench.errors import ResultsError
from storbench.results.model import Sample

BASE_COLUMNS = ("run_id", "label", "suite", "status", "started", "finished", "path", "schema_version", "summary")


class IndexLost(ResultsError):
    """The index stopped answering (a dropped connection, a stopped server): run directories stay files."""


class RunRecord(dict):
    """One ``runs`` row by column name (``host`` and ``manifest`` only from a shared index)."""


class SqlIndex:
    COLUMNS: tuple[str, ...] = BASE_COLUMNS
    where = ""  # what the messages name: a results.db path or a URL without its password
    shared = False  # True: runs from other machines are indexed here too

    # -- the backend's part ----------------------------------------------------------
    @contextmanager
    def _cursor(self, write: bool = False) -> Iterator[Any]:  # pragma: no cover - abstract
        raise NotImplementedError
        yield

    def _sql(self, query: str) -> str:
        return query

    def ready(self) -> None:
        """Open (and create) the index now: a store that cannot be reached is refused before a run starts."""
        with self._cursor():
            pass

    def missing(self) -> bool:
        """True when the index does not exist yet and should be rebuilt from the local run directories."""
        return False

    @contextmanager
    def rebuilding(self) -> Iterator["SqlIndex"]:
        """An empty index to fill, which replaces this one when the block ends without an error."""
        raise ResultsError(
            f"{self.where}: a shared index is not rebuilt from one machine's run directories; "
            f"index a run with `storbench import RUN_DIR`"
        )
        yield self

    def close(self) -> None:
        pass

    # -- writing ---------------------------------------------------------------------
    def put_run(self, values: dict[str, Any], samples: Sequence[Sample] | None = None) -> None:
        """Insert or update a run's row; with ``samples``, they replace the run's indexed samples."""
        names = [c for c in self.COLUMNS if c in values]
        updates = ", ".join(f"{c} = excluded.{c}" for c in names if c != "run_id")
        query = (
            f"INSERT INTO runs ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)}) "
            f"ON CONFLICT (run_id) DO UPDATE SET {updates}"
        )
        with self._cursor(write=True) as cur:
            cur.execute(self._sql(query), [values[c] for c in names])
            if samples is not None:
                cur.execute(self._sql("DELETE FROM samples WHERE run_id = ?"), (values["run_id"],))
                self._insert_samples(cur, values["run_id"], samples)

    def add_samples(self, run_id: str, samples: Sequence[Sample]) -> None:
        if samples:
            with self._cursor(write=True) as cur:
                self._insert_samples(cur, run_id, samples)

    def _insert_samples(self, cur: Any, run_id: str, samples: Sequence[Sample]) -> None:
        cur.executemany(
            self._sql("INSERT INTO samples VALUES (?,?,?,?,?,?,?)"),
            [
                (run_id, s.workload, s.metric, s.value, s.unit, s.repetition, json.dumps(s.labels, sort_keys=True))
                for s in samples
            ],
        )

    # -- reading ---------------------------------------------------------------------
    def runs(self, label: str | None = None, brief: bool = False) -> list[RunRecord]:
        """Runs, oldest first; ``brief``: without the shared index's manifest copy."""
        columns = [c for c in self.COLUMNS if not brief or c != "manifest"]
        query = f"SELECT {', '.join(columns)} FROM runs" + (" WHERE label = ?" if label else "")
        return self._records(query + " ORDER BY started, run_id", (label,) if label else (), columns)

    def run(self, run_id: str) -> RunRecord | None:
        found = self._records(f"SELECT {', '.join(self.COLUMNS)} FROM runs WHERE run_id = ?", (run_id,))
        return found[0] if found else None

    def latest(self, label: str) -> RunRecord | None:
        found = self._records(
            f"SELECT {', '.join(self.COLUMNS)} FROM runs WHERE label = ? ORDER BY started DESC, run_id DESC LIMIT 1",
            (label,),
        )
        return found[0] if found else None

    def labels(self) -> list[str]:
        with self._cursor() as cur:
            cur.execute(self._sql("SELECT DISTINCT label FROM runs ORDER BY label"))
            return [row[0] for row in cur.fetchall()]

    def samples(self, run_id: str) -> list[Sample]:
        with self._cursor() as cur:
            cur.execute(
                self._sql("SELECT workload, metric, value, unit, repetition, labels FROM samples WHERE run_id = ?"),
                (run_id,),
            )
            return [Sample(w, m, v, u, r, json.loads(labels)) for w, m, v, u, r, labels in cur.fetchall()]

    def _records(self, query: str, params: Sequence[Any], columns: Sequence[str] | None = None) -> list[RunRecord]:
        with self._cursor() as cur:
            cur.execute(self._sql(query), params)
            return [RunRecord(zip(columns or self.COLUMNS, row)) for row in cur.fetchall()]
