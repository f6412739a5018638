"""Run directories on disk plus a SQLite index over them.

Files are the source of truth: each run directory holds ``manifest.json`` and an
append-only ``samples.jsonl`` written after every workload, so a crash keeps what
was measured. ``results.db`` indexes runs and samples for ``runs`` and ``compare``
and can be rebuilt from the directories with :meth:`ResultStore.reindex`.
"""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from storbench.errors import InputError, ResultsError
from storbench.results.model import SCHEMA_VERSION, Run, Sample

DB_SCHEMA_VERSION = 1
MANIFEST = "manifest.json"
SAMPLES = "samples.jsonl"
SERIES = "telemetry.csv"
WINDOWS = "windows.json"

_DDL = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, label TEXT NOT NULL, suite TEXT NOT NULL, status TEXT NOT NULL,
    started TEXT NOT NULL, finished TEXT, path TEXT NOT NULL, schema_version INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS runs_by_label ON runs(label, started);
CREATE TABLE IF NOT EXISTS samples (
    run_id TEXT NOT NULL REFERENCES runs(run_id), workload TEXT NOT NULL, metric TEXT NOT NULL,
    value REAL, unit TEXT NOT NULL, repetition INTEGER NOT NULL, labels TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS samples_by_run ON samples(run_id);
"""


def default_home() -> Path:
    return Path(os.environ.get("STORBENCH_HOME") or Path.home() / ".storbench")


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _check_schema(version: Any, where: str) -> None:
    if not isinstance(version, int) or version < 1:
        raise ResultsError(f"{where}: missing or invalid schema_version {version!r}")
    if version > SCHEMA_VERSION:
        raise ResultsError(
            f"{where}: written with results schema {version}, this storbench reads up to "
            f"{SCHEMA_VERSION}; upgrade storbench to read it")


class RunWriter:
    """Writes one run as it goes: samples are on disk the moment a workload ends."""

    def __init__(self, store: "ResultStore", run_id: str, path: Path, manifest: dict[str, Any]):
        self.store = store
        self.run_id = run_id
        self.path = path
        self.manifest = manifest

    def add_samples(self, samples: Iterable[Sample]) -> None:
        samples = list(samples)
        with open(self.path / SAMPLES, "a") as handle:
            for sample in samples:
                handle.write(json.dumps(sample.to_dict(), sort_keys=True) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        self.store._index_samples(self.run_id, samples)

    def update_manifest(self, **fields: Any) -> None:
        self.manifest.update(fields)
        _write_atomic(self.path / MANIFEST, json.dumps(self.manifest, indent=2, sort_keys=True))

    def write_series(self, csv_text: str, windows: list[dict[str, Any]]) -> None:
        _write_atomic(self.path / SERIES, csv_text)
        _write_atomic(self.path / WINDOWS, json.dumps(windows, indent=1))

    def write_text(self, name: str, text: str) -> None:
        _write_atomic(self.path / name, text)

    def write_json(self, name: str, data: Any) -> None:
        _write_atomic(self.path / name, json.dumps(data, indent=1))

    def finish(self, status: str) -> None:
        self.update_manifest(status=status, finished=utc_now())
        self.store._index_run(self.manifest, self.path)


class ResultStore:
    def __init__(self, home: Path | str | None = None):
        self.home = Path(home) if home else default_home()
        self.runs_dir = self.home / "runs"
        self.db_path = self.home / "results.db"

    # -- writing ---------------------------------------------------------------
    def check_writable(self) -> None:
        """Refuse, before anything starts, a results home that cannot hold runs."""
        from storbench.targets.file import nearest_existing

        existing = nearest_existing(self.home)
        if not existing.is_dir():
            raise InputError(f"--results {self.home}: {existing} is a file, not a directory")
        if not os.access(existing, os.W_OK | os.X_OK):
            raise InputError(f"--results {self.home}: {existing} is not writable by this user")

    def create_run(self, run_id: str, manifest: dict[str, Any]) -> RunWriter:
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        path = self.runs_dir / run_id
        path.mkdir()
        manifest = {"schema_version": SCHEMA_VERSION, "run_id": run_id, "status": "running",
                    "started": utc_now(), "finished": None, **manifest}
        writer = RunWriter(self, run_id, path, manifest)
        writer.update_manifest()
        (path / SAMPLES).touch()
        self._index_run(manifest, path)
        return writer

    # -- reading ---------------------------------------------------------------
    def list_runs(self, label: str | None = None) -> list[Run]:
        """Runs, oldest first, without their samples."""
        self._ensure_index()
        query = "SELECT run_id FROM runs" + (" WHERE label = ?" if label else "") + " ORDER BY started, run_id"
        with closing(self._connect()) as db:
            ids = [row[0] for row in db.execute(query, (label,) if label else ())]
        return [self._load(self.runs_dir / run_id, with_samples=False) for run_id in ids]

    def resolve(self, ref: str) -> Run:
        """A run id, or a label meaning that label's latest run."""
        if (self.runs_dir / ref / MANIFEST).exists():
            return self._load(self.runs_dir / ref, with_samples=True)
        self._ensure_index()
        with closing(self._connect()) as db:
            row = db.execute("SELECT run_id FROM runs WHERE label = ? ORDER BY started DESC, run_id DESC LIMIT 1",
                             (ref,)).fetchone()
        if row is None:
            raise ResultsError(f"no run or label named {ref!r} in {self.home}; labels: {self.known_labels()}")
        return self._load(self.runs_dir / row[0], with_samples=True)

    def known_labels(self) -> str:
        """The stored labels, for messages that name what exists."""
        self._ensure_index()
        with closing(self._connect()) as db:
            labels = sorted({r[0] for r in db.execute("SELECT label FROM runs")})
        return ", ".join(labels) if labels else "none stored yet"

    def load_series(self, run: Run) -> list[dict[str, Any]]:
        from storbench.telemetry.window import from_csv

        path = Path(run.path or self.runs_dir / run.run_id) / SERIES
        return from_csv(path.read_text()) if path.exists() else []

    def load_windows(self, run: Run) -> list[dict[str, Any]]:
        path = Path(run.path or self.runs_dir / run.run_id) / WINDOWS
        return json.loads(path.read_text()) if path.exists() else []

    def reindex(self) -> int:
        """Rebuild the SQLite index from the run directories; returns the number of runs."""
        if self.db_path.exists():
            self.db_path.unlink()
        count = 0
        for path in sorted(self.runs_dir.glob("*/" + MANIFEST)):
            run = self._load(path.parent, with_samples=True)
            self._index_run(run.manifest, path.parent)
            self._index_samples(run.run_id, run.samples)
            count += 1
        return count

    # -- internals -------------------------------------------------------------
    def _load(self, path: Path, with_samples: bool) -> Run:
        try:
            manifest = json.loads((path / MANIFEST).read_text())
        except FileNotFoundError:
            raise ResultsError(f"{path}: no {MANIFEST}; the run directory is incomplete") from None
        except json.JSONDecodeError as exc:
            raise ResultsError(f"{path / MANIFEST}: not valid JSON ({exc})") from None
        _check_schema(manifest.get("schema_version"), str(path / MANIFEST))
        samples: list[Sample] = []
        if with_samples and (path / SAMPLES).exists():
            for number, line in enumerate((path / SAMPLES).read_text().splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    samples.append(Sample.from_dict(json.loads(line)))
                except (json.JSONDecodeError, KeyError, ValueError):
                    # A crash can cut the last line short; everything before it stands.
                    if number < len((path / SAMPLES).read_text().splitlines()):
                        raise ResultsError(f"{path / SAMPLES}:{number}: corrupt sample line") from None
        return Run(run_id=manifest["run_id"], label=manifest["label"], suite=manifest["suite"],
                   status=manifest["status"], started=manifest["started"], finished=manifest.get("finished"),
                   manifest=manifest, samples=samples, path=str(path))

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
            raise ResultsError(f"{self.db_path}: index schema {version} is newer than this storbench "
                               f"reads ({DB_SCHEMA_VERSION}); upgrade storbench")
        if version == 0:
            db.executescript(_DDL)
            db.execute(f"PRAGMA user_version = {DB_SCHEMA_VERSION}")
            db.commit()
        return db

    def _ensure_index(self) -> None:
        # Run directories copied in from elsewhere (or a deleted results.db) get indexed on first read.
        if not self.db_path.exists() and self.runs_dir.exists() and any(self.runs_dir.iterdir()):
            self.reindex()

    def _index_run(self, manifest: dict[str, Any], path: Path) -> None:
        with closing(self._connect()) as db, db:
            db.execute("INSERT OR REPLACE INTO runs VALUES (?,?,?,?,?,?,?,?)",
                       (manifest["run_id"], manifest["label"], manifest["suite"], manifest["status"],
                        manifest["started"], manifest.get("finished"), str(path), manifest["schema_version"]))

    def _index_samples(self, run_id: str, samples: list[Sample]) -> None:
        with closing(self._connect()) as db, db:
            db.executemany("INSERT INTO samples VALUES (?,?,?,?,?,?,?)",
                           [(run_id, s.workload, s.metric, s.value, s.unit, s.repetition,
                             json.dumps(s.labels, sort_keys=True)) for s in samples])
