"""The run core in process: `api.run` of the null suite (null engine, mem:// target), in milliseconds.

No subprocess starts here. ``run_null`` returns what a user would read afterwards (the
outcome, the manifest, the samples, the terminal's lines) and ``EVENTS``: the order in
which the null engine, the mem:// target, the null workloads and the telemetry were called.
"""

from __future__ import annotations

import io
import json
import platform
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from storbench import api, interrupts
from storbench.api import RunOptions
from storbench.engines import null
from storbench.progress import Progress
from storbench.results.store import ResultStore
from storbench.targets import mem
from storbench.telemetry.run import HostTelemetry
from tests import proc_guard
from tests.run.exporter import NodeExporter

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


@pytest.fixture(autouse=True)
def no_subprocess():
    """The fast lane's promise: nothing here starts a process. (The standard library's ``uname -p``, which
    platform.platform() in the machine's fingerprint runs once per interpreter and caches, runs first.)"""
    platform.platform()
    with proc_guard.refusing(lambda program: f"a run-core test started a process: {program}"):
        yield


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    """Empty volumes and events; telemetry's stop and series write recorded beside the plugins' calls."""
    null.EVENTS.clear()
    mem.VOLUMES.clear()
    stop, series = HostTelemetry.stop, HostTelemetry.write_series

    def recorded_stop(self):
        null.record("telemetry stop")
        stop(self)

    def recorded_series(self, writer, windows):
        null.record("telemetry series")
        series(self, writer, windows)

    monkeypatch.setattr(HostTelemetry, "stop", recorded_stop)
    monkeypatch.setattr(HostTelemetry, "write_series", recorded_series)
    yield
    mem.VOLUMES.clear()


@pytest.fixture
def exporter():
    """An in-process node_exporter (tests/run/exporter.py): add nodes, read their URLs."""
    server = NodeExporter().start()
    yield server
    server.stop()


@pytest.fixture
def handlers():
    """storbench's signal handlers, as the CLI installs them, and the test runner's restored after."""
    saved = {sig: signal.getsignal(sig) for sig in interrupts.SIGNALS}
    interrupts.install()
    try:
        yield
    finally:
        interrupts.exiting()
        for sig, handler in saved.items():
            signal.signal(sig, handler)


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
