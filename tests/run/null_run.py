"""`api.run` of the null suite (null engine, mem:// target) in process, and what a user reads afterwards.

``run_null`` returns the outcome, the manifest, the samples, the terminal's lines and ``EVENTS``: the order in
which the null engine, the mem:// target, the null workloads and the telemetry were called (tests/run/conftest.py
records them and refuses any process).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from storbench import api
from storbench.api import RunOptions
from storbench.engines import null
from storbench.progress import Progress
from storbench.results.store import ResultStore

INTERVAL = 0.05  # the shortest telemetry interval allowed: the collector's thread stops within it


@dataclass
class NullRun:
    status: str
    path: Path
    errors: list[dict[str, Any]]
    manifest: dict[str, Any]
    samples: list[dict[str, Any]]
    stderr: str
    events: list[str]

    def times(self) -> list[tuple[str, int, dict[str, str]]]:
        """(workload, repetition, labels) of each recorded window, in order."""
        return [(s["workload"], s["repetition"], s["labels"]) for s in self.samples if s["metric"] == "completion_time"]

    def json(self, name: str) -> Any:
        return json.loads((self.path / name).read_text())


def run_null(tmp_path: Path, suite: str = "null", target: str | None = "mem://x", **fields: Any) -> NullRun:
    """``storbench run`` of ``suite`` in process; ``fields`` are RunOptions' (``overrides``: --set)."""
    stream = io.StringIO()
    options = RunOptions(**{"suite": suite, "target": target, "interval": INTERVAL, **fields})
    outcome = api.run(options, ResultStore(tmp_path / "home"), Progress(stream=stream))
    samples = [json.loads(line) for line in (outcome.path / "samples.jsonl").read_text().splitlines()]
    manifest = json.loads((outcome.path / "manifest.json").read_text())
    return NullRun(
        outcome.status, outcome.path, outcome.errors, manifest, samples, stream.getvalue(), list(null.EVENTS)
    )


def after(events: list[str], first: str) -> list[str]:
    """The events from the last one that is ``first`` on."""
    index = len(events) - 1 - events[::-1].index(first)
    return events[index:]
