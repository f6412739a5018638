"""Interleaved configurations in worker processes (storbench.run.worker), as Spark's need: one process each.

The null engine is made to run once per process in this (the experiment's) process, so its configurations
go to workers; each worker is a real child process holding its run's session, driven round by round."""

from __future__ import annotations

import io
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from storbench import api
from storbench.api import RunOptions
from storbench.engines import null
from storbench.progress import Progress
from storbench.results.store import ResultStore
from tests.run.conftest import INTERVAL

pytestmark = pytest.mark.real


@pytest.fixture(autouse=True)
def no_subprocess():
    """Workers are child processes here (the fast lane's guard in tests/run/conftest.py is lifted)."""


@pytest.fixture(autouse=True)
def one_per_process(monkeypatch):
    monkeypatch.setattr(null.NullEngine, "one_per_process", True)


def experiment(tmp_path: Path, per_label: dict[str, dict] | None = None, **fields):
    stream = io.StringIO()
    labels = ("a", "b")
    configurations = [RunOptions(**{"suite": "null", "label": label, "target": str(tmp_path / label),
                                    "interval": INTERVAL, **fields, **(per_label or {}).get(label, {})})
                      for label in labels]
    for label in labels:
        (tmp_path / label).mkdir(exist_ok=True)
    outcomes = api.run_interleaved(configurations, ResultStore(tmp_path / "home"), Progress(stream=stream))
    runs = []
    for outcome in outcomes:
        manifest = json.loads((outcome.path / "manifest.json").read_text())
        samples = [json.loads(line) for line in (outcome.path / "samples.jsonl").read_text().splitlines()]
        runs.append((outcome, manifest, samples))
    return runs, stream.getvalue()


def windows(samples) -> list[tuple[str, int]]:
    return [(s["workload"], s["repetition"]) for s in samples if s["metric"] == "completion_time"]


def test_each_configuration_runs_in_a_worker_of_its_own_round_by_round(tmp_path):
    runs, text = experiment(tmp_path, repeat=3)
    (a, ma, sa), (b, mb, sb) = runs
    assert a.status == b.status == "succeeded"
    assert "a process each" in text
    assert ma["experiment"] == mb["experiment"] and ma["experiment"]["order"] == [
        [a.run_id, b.run_id], [b.run_id, a.run_id], [a.run_id, b.run_id]]
    assert windows(sa) == windows(sb) == [(w, r) for r in (1, 2, 3) for w in ("null-write", "null-read")]
    # the runs' processes were not this one: each worker recorded its own PID
    pids = {ma["process"]["pid"], mb["process"]["pid"]}
    assert len(pids) == 2 and os.getpid() not in pids


def test_a_configuration_failing_in_its_worker_stops_the_other(tmp_path):
    runs, _ = experiment(tmp_path, repeat=3, per_label={"b": {"overrides": {"fail": "error", "fail_at": "2"}}})
    (a, ma, sa), (b, mb, sb) = runs
    assert b.status == "failed" and a.status == "interrupted"
    assert "stopped with the experiment: configuration b failed" in ma["errors"][0]["error"]
    assert windows(sa) == [("null-write", 1), ("null-read", 1)]


def test_a_signal_to_the_experiment_interrupts_every_worker(tmp_path, handlers):
    timer = threading.Timer(3.0, lambda: os.kill(os.getpid(), signal.SIGTERM))
    timer.start()
    started = time.monotonic()
    try:
        runs, _ = experiment(tmp_path, repeat=50, overrides={"sleep_ms": "100"})
    finally:
        timer.cancel()
    assert [outcome.status for outcome, _, _ in runs] == ["interrupted", "interrupted"]
    assert time.monotonic() - started < 60
    assert any(windows(samples) for _, _, samples in runs)  # what was measured before is kept
    assert all(manifest["status"] == "interrupted" for _, manifest, _ in runs)
