"""A SIMULATED results store for the scale benchmarks and their tests: many runs, no run ever ran.

``fill(stores, runs, samples_per_run)`` writes ``runs`` run directories under the first store's
``home/runs`` (each a copy of the golden run ``cfg-a`` of tests/data/golden: its manifest with a new run id,
label and start, and its first ``samples_per_run`` samples) and indexes them in every store's index (SQLite
or PostgreSQL, the stores sharing that home), each in one transaction, the rows being the ones ``ResultStore``
itself writes (``store._row``). Labels repeat every ``labels`` runs, so a label has many runs, as a long-lived
store has. Files are written without fsync: this is
a fixture, not a run.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from storbench.results.model import Sample
from storbench.results.store import MANIFEST, SAMPLES, ResultStore

GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "data" / "golden" / "runs" / "20250102-090000-cfg-a-000e"
START = datetime(2025, 1, 1, tzinfo=timezone.utc)


def fill(stores: list[ResultStore], runs: int, samples_per_run: int, labels: int = 100) -> list[str]:
    """The run ids written, oldest first (every run ``succeeded``, one minute apart, 20 minutes long)."""
    base = json.loads((GOLDEN / MANIFEST).read_text())
    lines = (GOLDEN / SAMPLES).read_text().splitlines()
    lines = [lines[i % len(lines)] for i in range(samples_per_run)]
    samples = [Sample.from_dict(json.loads(line)) for line in lines]
    store = stores[0]
    store.runs_dir.mkdir(parents=True, exist_ok=True)
    ids, rows = [], []
    for i in range(runs):
        started = START + timedelta(minutes=i)
        label = f"cfg-{i % labels}"
        run_id = f"{started:%Y%m%d-%H%M%S}-{label}-{i % 65536:04x}"
        manifest: dict[str, Any] = {
            **base,
            "run_id": run_id,
            "label": label,
            "started": f"{started:%Y-%m-%dT%H:%M:%SZ}",
            "finished": f"{started + timedelta(minutes=20):%Y-%m-%dT%H:%M:%SZ}",
        }
        path = store.runs_dir / run_id
        path.mkdir()
        (path / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True))
        (path / SAMPLES).write_text("\n".join(lines) + "\n")
        ids.append(run_id)
        rows.append(store._row(manifest, path))
    for index in (s.index for s in stores):
        with index._cursor(write=True) as cur:
            for row in rows:
                names = [c for c in index.COLUMNS if c in row]
                cur.execute(
                    index._sql(f"INSERT INTO runs ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})"),
                    [row[c] for c in names],
                )
                index._insert_samples(cur, row["run_id"], samples)
    return ids
