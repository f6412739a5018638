"""Issue 12 item 17: the collector appends each tick's row to the run's telemetry.csv as it goes, so a run
killed outright (SIGKILL) still leaves its series up to the last tick; the end of a run rewrites it whole."""

import os
import signal
import subprocess
import sys
import time

import pytest

from storbench.telemetry import Collector
from storbench.results.series import from_csv
from tests.cli.helpers import SRC
from tests.cli.test_signals import _descendants


def test_each_tick_is_appended_while_the_collector_runs(tmp_path):
    journal = tmp_path / "telemetry.csv"
    collector = Collector([], interval=0.05, journal=journal)
    collector.start()
    time.sleep(0.5)
    rows = from_csv(journal.read_text())  # before stop()
    collector.stop()
    assert len(rows) >= 4
    times = [row["t"] for row in rows]
    assert times == sorted(times) and times[0] > 0
    assert all(row["cpu_pct"] is not None and row["read_mbps"] is None for row in rows)
    assert list(rows[0]) == list(collector.rates()[0])  # the columns of the final series


def test_a_journal_that_cannot_be_written_does_not_stop_sampling(tmp_path):
    collector = Collector([], interval=0.05, journal=tmp_path)  # a directory: every open fails
    collector.start()
    time.sleep(0.3)
    collector.stop()
    assert len(collector.rates()) >= 3


@pytest.mark.real
def test_a_killed_run_leaves_its_series(tmp_path):
    home, target = tmp_path / "home", tmp_path / "target"
    target.mkdir()
    env = {**os.environ, "PYTHONPATH": SRC}
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "storbench",
            "--results",
            str(home),
            "run",
            "fio-basic",
            "--target",
            str(target),
            "--interval",
            "0.2",
            "--set",
            "runtime_s=30",
            "--set",
            "size=8m",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        deadline = time.monotonic() + 120
        series = []
        while time.monotonic() < deadline and len(series) < 5:
            time.sleep(0.5)
            found = list(home.glob("runs/*/telemetry.csv"))
            series = from_csv(found[0].read_text()) if found else []
        assert len(series) >= 5, "no telemetry appended while the run went on"
    finally:
        for pid in [child.pid, *_descendants(child.pid)]:  # storbench and its fio, at once: no cleanup runs
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        child.wait()
    rows = from_csv(next(home.glob("runs/*/telemetry.csv")).read_text())
    assert len(rows) >= 5 and [row["t"] for row in rows] == sorted(row["t"] for row in rows)
