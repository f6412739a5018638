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
from tests.run.null_run import INTERVAL

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
    configurations = [
        RunOptions(
            **{
                "suite": "null",
                "label": label,
                "target": str(tmp_path / label),
                "interval": INTERVAL,
                **fields,
                **(per_label or {}).get(label, {}),
            }
        )
        for label in labels
    ]
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
        [a.run_id, b.run_id],
        [b.run_id, a.run_id],
        [a.run_id, b.run_id],
    ]
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


def _signal_once_both_measure(runs: Path, stop: threading.Event) -> None:
    """SIGTERM to this process once both runs have stored samples (not after a fixed time: on a loaded machine
    the workers may still be opening their runs, a case of its own below)."""
    while not stop.is_set():
        stored = [p for p in runs.glob("*/samples.jsonl") if p.stat().st_size]
        if len(stored) == 2:
            os.kill(os.getpid(), signal.SIGTERM)
            return
        stop.wait(0.05)


def test_a_signal_to_the_experiment_interrupts_every_worker(tmp_path, handlers):
    stop = threading.Event()
    watcher = threading.Thread(target=_signal_once_both_measure, args=(tmp_path / "home" / "runs", stop))
    watcher.start()
    try:
        runs, _ = experiment(tmp_path, repeat=50, overrides={"sleep_ms": "100"})
    finally:
        stop.set()
        watcher.join()
    assert [outcome.status for outcome, _, _ in runs] == ["interrupted", "interrupted"]
    assert any(windows(samples) for _, _, samples in runs)  # what was measured before is kept
    assert all(max((r for _, r in windows(samples)), default=0) < 50 for _, _, samples in runs)  # stopped early
    assert all(manifest["status"] == "interrupted" for _, manifest, _ in runs)


def test_a_signal_while_a_worker_opens_its_run_closes_that_run(tmp_path, handlers, monkeypatch):
    """A signal to the experiment once a worker has recorded its run but before the experiment has the worker's
    answer (it is no member yet): the worker is told too, closes its run as interrupted and is gone before
    the experiment goes on; no run is left "running" (issue 38 item 10)."""
    from storbench.run import worker as worker_module

    read_answer = worker_module.WorkerConfiguration.answer
    workers = []

    def signalled_first(self):
        if not workers:
            workers.append(self.process)
            deadline = time.monotonic() + 120
            while not list((tmp_path / "home" / "runs").glob("*/manifest.json")) and time.monotonic() < deadline:
                time.sleep(0.05)
            os.kill(os.getpid(), signal.SIGTERM)  # storbench's handler raises here, before the answer is read
        return read_answer(self)

    monkeypatch.setattr(worker_module.WorkerConfiguration, "answer", signalled_first)
    try:
        with pytest.raises(KeyboardInterrupt):
            experiment(tmp_path)
        assert workers[0].poll() is not None  # the worker ended before the experiment's interrupt went on
    finally:
        if workers and workers[0].poll() is None:
            workers[0].kill()
            workers[0].wait()
    statuses = [json.loads(p.read_text())["status"] for p in (tmp_path / "home" / "runs").glob("*/manifest.json")]
    assert statuses == ["interrupted"]
