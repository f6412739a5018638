"""Run directories on disk plus an index over them (SQLite per home, or a shared PostgreSQL).

Files are the source of truth: each run directory holds ``manifest.json`` and an
append-only ``samples.jsonl`` written after every workload, so a crash keeps what
was measured. The index (``results.db``, or the tables of ``--results postgresql://…``)
serves ``runs``, ``show`` and ``compare``; ``results.db`` can be rebuilt from the
directories with :meth:`ResultStore.reindex`, and ``storbench import RUN_DIR`` indexes
one directory (a run whose index was lost mid-run, or one copied from elsewhere).

A run records the process running it; a reader shows a run whose process is gone as ``crashed``
(``results.liveness``), and ``storbench cleanup`` finishes it (:meth:`ResultStore.finish_crashed`).
"""

from __future__ import annotations

import json
import os
import socket
import sys
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable

from storbench.errors import InputError, ResultsError
from storbench.results import liveness
from storbench.results.index import IndexLost, RunRecord, SqlIndex
from storbench.results.model import SCHEMA_VERSION, Run, Sample
from storbench.results.names import check_label, check_ref, check_run_id, default_home
from storbench.results.runfiles import (
    check_schema,
    summary,
    create_durably,
    fsync_dir,
    parse_json,
    read_samples,
    read_text,
    unsafe_entries,
    write_durably,
)
from storbench.results.series import from_csv
from storbench.results.sqlite import SqliteIndex

MANIFEST = "manifest.json"
SAMPLES = "samples.jsonl"
SERIES = "telemetry.csv"
WINDOWS = "windows.json"
STATUSES = ("running", "succeeded", "failed", "interrupted", "crashed")  # as a manifest records them


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _stderr_line(message: str) -> None:
    print(f"storbench: warning: {message}", file=sys.stderr, flush=True)


class RunWriter:
    """Writes one run as it goes: samples are on disk the moment a workload ends."""

    def __init__(self, store: "ResultStore", run_id: str, path: Path, manifest: dict[str, Any]):
        self.store = store
        self.run_id = run_id
        self.path = path
        self.manifest = manifest
        self.index_lost = False  # the index stopped answering: the run goes on in files only

    def add_samples(self, samples: Iterable[Sample]) -> None:
        samples = list(samples)
        with open(self.path / SAMPLES, "a") as handle:
            for sample in samples:
                handle.write(json.dumps(sample.to_dict(), sort_keys=True) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        self._index(lambda: self.store.index.add_samples(self.run_id, samples))

    def update_manifest(self, **fields: Any) -> None:
        self.manifest.update(fields)
        write_durably(self.path / MANIFEST, json.dumps(self.manifest, indent=2, sort_keys=True))

    def record(self, section: str, **fields: Any) -> None:
        """Adds ``fields`` to the manifest's ``section`` (a dict: ``config``, ``machine``...), keeping the rest."""
        self.update_manifest(**{section: {**(self.manifest.get(section) or {}), **fields}})

    def write_series(self, csv_text: str, windows: list[dict[str, Any]]) -> None:
        write_durably(self.path / SERIES, csv_text)
        write_durably(self.path / WINDOWS, json.dumps(windows, indent=1))

    def write_text(self, name: str, text: str) -> None:
        write_durably(self.path / name, text)

    def write_json(self, name: str, data: Any) -> None:
        write_durably(self.path / name, json.dumps(data, indent=1))

    def finish(self, status: str) -> None:
        self.update_manifest(status=status, finished=utc_now())
        self._index(lambda: self.store.index.put_run(self.store._row(self.manifest, self.path)))

    def _index(self, action: Callable[[], None]) -> None:
        if self.index_lost:
            return
        try:
            action()
        except IndexLost as exc:
            # The measurements matter more than the index: keep running in files, say once how to index them.
            self.index_lost = True
            self.store.warn(
                f"{exc}; run {self.run_id} goes on in {self.path}; index it later with: storbench import {self.path}"
            )


class ResultStore:
    def __init__(
        self, home: Path | str | None = None, index: SqlIndex | None = None, warn: Callable[[str], None] = _stderr_line
    ):
        self.home = Path(home) if home else default_home()
        self.runs_dir = self.home / "runs"
        self.index = index or SqliteIndex(self.home)
        self.warn = warn
        self.host = socket.gethostname()

    @property
    def where(self) -> str:
        """Where runs are listed from, for messages (never a password)."""
        return self.index.where

    @property
    def db_path(self) -> Path:
        return self.home / "results.db"

    # -- writing ---------------------------------------------------------------
    def check_writable(self) -> None:
        """Refuse, before anything starts, a results home that cannot hold runs or an index that does not answer."""
        existing = next(p for p in (self.home, *self.home.parents) if p.exists())  # what mkdir would start from
        if not existing.is_dir():
            raise InputError(f"--results {self.home}: {existing} is a file, not a directory")
        if not os.access(existing, os.W_OK | os.X_OK):
            raise InputError(f"--results {self.home}: {existing} is not writable by this user")
        self.index.ready()

    def create_run(self, run_id: str, manifest: dict[str, Any]) -> RunWriter:
        self.runs_dir.mkdir(parents=True, exist_ok=True)
        path = self.runs_dir / run_id
        path.mkdir()
        # the process running it: a reader tells a run still going from one whose process died (liveness)
        manifest = {
            "schema_version": SCHEMA_VERSION,
            "run_id": run_id,
            "status": liveness.RUNNING,
            "started": utc_now(),
            "finished": None,
            "process": liveness.this_process(),
            **manifest,
        }
        writer = RunWriter(self, run_id, path, manifest)
        writer.update_manifest()
        create_durably(path / SAMPLES)
        fsync_dir(self.runs_dir)  # the run directory itself, before the index names it
        writer._index(lambda: self.index.put_run(self._row(manifest, path)))
        return writer

    def import_run(self, directory: Path | str) -> Run:
        """Index one run directory (its manifest and samples) in this store; again: the same result.

        Its run id, label and status must be ones a run would have been given (a run id names a directory, a
        label is a run reference). A last samples line cut short by a crash is skipped with a warning naming
        it (the lines before it were fsynced before it was written, they stand); a bad line before the last is
        refused (``runfiles``): that file was damaged or edited, and importing the rest would hide it."""
        path = Path(directory).resolve()
        if not (path / MANIFEST).is_file() and not (path / MANIFEST).is_symlink():
            raise InputError(
                f"import {directory}: not a storbench run directory (no {MANIFEST}; "
                f"expected a directory under a results home's runs/)"
            )
        unsafe = unsafe_entries(path)
        if unsafe:  # a report would show what it names: /etc/shadow as a telemetry.csv
            entry, what = unsafe[0]
            more = f" (and {len(unsafe) - 1} more)" if len(unsafe) > 1 else ""
            raise InputError(
                f"import {directory}: {entry.relative_to(path)} is {what}{more}; a run directory to "
                f"import holds regular files only: copy the files themselves in; nothing imported"
            )
        try:
            manifest = parse_json(read_text(path / MANIFEST) or "")
        except (ResultsError, ValueError) as exc:
            raise InputError(f"import {directory}: {MANIFEST} is not readable JSON ({exc})") from None
        if not isinstance(manifest, dict) or not {"run_id", "label", "suite", "status", "started"} <= set(manifest):
            raise InputError(
                f"import {directory}: {MANIFEST} is not a storbench run manifest "
                f"(needs run_id, label, suite, status, started)"
            )
        where = f"import {directory}: {MANIFEST}"
        check_label(manifest["label"], f"{where} label")
        check_run_id(manifest["run_id"], manifest["label"], where)
        if manifest["status"] not in STATUSES:
            raise InputError(f"{where} status {manifest['status']!r}: allowed: {', '.join(STATUSES)}")
        try:
            run = self.read_run(path, with_samples=True)
        except ResultsError as exc:
            raise ResultsError(f"import {directory}: {exc}; nothing imported") from None
        known = self.index.run(run.run_id)
        if known is not None and (
            known.get("host", self.host) != self.host or os.path.realpath(known["path"]) != str(path)
        ):
            where = known["path"] if known.get("host", self.host) == self.host else f"{known['host']}:{known['path']}"
            raise InputError(
                f"import {directory}: run id {run.run_id} exists already in {self.where} (its "
                f"directory: {where}); a run id names one run: nothing imported"
            )
        self.index.put_run(self._row(run.manifest, path), run.samples)
        return run

    # -- reading ---------------------------------------------------------------
    def list_runs(self, label: str | None = None, brief: bool = False) -> list[Run]:
        """Runs, oldest first, without their samples. ``brief``: each run's manifest holds only what the index
        keeps of it (:func:`summary`: what ``runs`` and the ETA read), so no manifest is read; a run still
        ``running`` in the index, or indexed without a summary, is read in full."""
        self._ensure_index()
        return [
            self._brief(record)
            if brief and record.get("summary") and record["status"] != liveness.RUNNING
            else self._from_record(record, with_samples=False)
            for record in self.index.runs(label, brief)
        ]

    def resolve(self, ref: str) -> Run:
        """A run id, or a label meaning that label's latest run; never a path (``names.check_ref``)."""
        check_ref(ref)
        if (self.runs_dir / ref / MANIFEST).exists():
            return self.read_run(self.runs_dir / ref, with_samples=True)
        self._ensure_index()
        record = self.index.run(ref) or self.index.latest(ref)
        if record is None:
            raise ResultsError(f"no run or label named {ref!r} in {self.where}; labels: {self.known_labels()}")
        return self._from_record(record, with_samples=True)

    def known_labels(self) -> str:
        """The stored labels, for messages that name what exists."""
        self._ensure_index()
        labels = self.index.labels()
        return ", ".join(labels) if labels else "none stored yet"

    def load_series(self, run: Run) -> list[dict[str, Any]]:
        text = read_text(Path(run.path or self.runs_dir / run.run_id) / SERIES)
        return from_csv(text) if text is not None else []

    def load_windows(self, run: Run) -> list[dict[str, Any]]:
        path = Path(run.path or self.runs_dir / run.run_id) / WINDOWS
        text = read_text(path)
        try:
            return parse_json(text) if text is not None else []
        except ValueError as exc:
            raise ResultsError(f"{path}: not valid JSON ({exc})") from None

    def reindex(self) -> int:
        """Rebuild the SQLite index from the run directories; returns the number of runs.

        The new index is built beside ``results.db`` and renamed over it once complete: an interrupt or an
        unreadable run directory leaves the old index as it was."""
        count = 0
        with self.index.rebuilding() as fresh:
            for path in sorted(self.runs_dir.glob("*/" + MANIFEST)):
                run = self.read_run(path.parent, with_samples=True)
                fresh.put_run(self._row(run.manifest, path.parent), run.samples)
                count += 1
        return count

    def finish_crashed(self, run: Run, removed: str | None) -> Run:
        """Record that ``run``'s process died before it finished and ``storbench cleanup`` finished it
        (``removed``: the run root it deleted, None if nothing was left); the run reads ``crashed`` from now on."""
        path = Path(run.path or self.runs_dir / run.run_id)
        writer = RunWriter(self, run.run_id, path, dict(run.manifest))
        process = run.manifest.get("process") or {}
        errors = [
            *run.manifest.get("errors", []),
            {
                "workload": "run",
                "repetition": 0,
                "error": f"the run's process (pid {process.get('pid', '?')} on {process.get('host', '?')}) ended "
                f"before the run finished; finished by storbench cleanup",
            },
        ]
        writer.update_manifest(errors=errors, cleanup={"at": utc_now(), "removed": removed})
        writer.finish(liveness.CRASHED)
        return self.read_run(path, with_samples=False)

    # -- internals -------------------------------------------------------------
    def _row(self, manifest: dict[str, Any], path: Path) -> dict[str, Any]:
        return {
            "run_id": manifest["run_id"],
            "label": manifest["label"],
            "suite": manifest["suite"],
            "status": manifest["status"],
            "started": manifest["started"],
            "finished": manifest.get("finished"),
            "path": str(path),
            "schema_version": manifest["schema_version"],
            "host": self.host,
            "manifest": json.dumps(manifest, sort_keys=True),
            "summary": json.dumps(summary(manifest)),
        }

    def _brief(self, record: RunRecord) -> Run:
        """A run from its index row alone: its manifest is the row's fields and summary."""
        host = record.get("host", self.host)
        manifest = {
            "run_id": record["run_id"],
            "label": record["label"],
            "suite": record["suite"],
            "status": record["status"],
            "started": record["started"],
            "finished": record["finished"],
            "schema_version": record["schema_version"],
            **json.loads(record["summary"]),
        }
        path = record["path"]  # SQLite: the home's own directory
        if self.index.shared:  # where its directory is, as _from_record finds it (a look, no manifest read)
            path = self._directory(record) or f"{host}:{path}"
        return Run(
            run_id=record["run_id"],
            label=record["label"],
            suite=record["suite"],
            status=record["status"],
            started=record["started"],
            finished=record["finished"],
            manifest=manifest,
            samples=[],
            path=path,
            host=host,
        )

    def _directory(self, record: RunRecord) -> str | None:
        """The run's directory on this machine: where the index says, when it is this host's, else under this
        home's runs/ (a shared index's run copied here); None when this machine has neither."""
        if record.get("host", self.host) == self.host and os.path.exists(os.path.join(record["path"], MANIFEST)):
            return record["path"]
        here = os.path.join(self.runs_dir, record["run_id"])
        return here if os.path.exists(os.path.join(here, MANIFEST)) else None

    def _from_record(self, record: RunRecord, with_samples: bool) -> Run:
        """The run directory when this machine has it (the files are the truth), else the shared index's copy."""
        local, host = Path(record["path"]), record.get("host", self.host)
        directory = self._directory(record)
        if directory == record["path"] and host == self.host:
            return replace(self.read_run(local, with_samples), host=host)
        if directory:
            return self.read_run(Path(directory), with_samples)
        if "manifest" not in record:
            return self.read_run(local, with_samples)  # SQLite: says which directory is missing
        manifest = json.loads(record["manifest"])
        check_schema(manifest.get("schema_version"), f"{self.where} run {record['run_id']}")
        samples = self.index.samples(record["run_id"]) if with_samples else []
        return Run(
            run_id=manifest["run_id"],
            label=manifest["label"],
            suite=manifest["suite"],
            status=liveness.status(record["status"], manifest.get("process"), self.host),
            started=manifest["started"],
            finished=record["finished"],
            manifest=manifest,
            samples=samples,
            path=f"{host}:{record['path']}",
            host=host,
        )

    def read_run(self, path: Path, with_samples: bool) -> Run:
        text = read_text(path / MANIFEST)
        if text is None:
            raise ResultsError(f"{path}: no {MANIFEST}; the run directory is incomplete")
        try:
            manifest = parse_json(text)
        except ValueError as exc:
            raise ResultsError(f"{path / MANIFEST}: not valid JSON ({exc})") from None
        check_schema(manifest.get("schema_version"), str(path / MANIFEST))
        samples: list[Sample] = []
        if with_samples:
            samples, cut = read_samples(path / SAMPLES)
            if cut is not None:
                self.warn(
                    f"{path / SAMPLES}:{cut}: last line cut short (the run's process ended mid-write): "
                    f"skipped; the {len(samples)} samples before it stand"
                )
        return Run(
            run_id=manifest["run_id"],
            label=manifest["label"],
            suite=manifest["suite"],
            status=liveness.status(manifest["status"], manifest.get("process"), self.host),
            started=manifest["started"],
            finished=manifest.get("finished"),
            manifest=manifest,
            samples=samples,
            path=str(path),
            host=self.host,
        )

    def _ensure_index(self) -> None:
        # Run directories copied in from elsewhere (or a deleted results.db) get indexed on first read.
        if self.index.missing() and self.runs_dir.exists() and any(self.runs_dir.iterdir()):
            self.reindex()
