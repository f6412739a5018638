"""A real Prometheus (Debian's, from scripts/setup.sh) scrapes a real `storbench run null --metrics-port` every
second, and PromQL through its HTTP API returns the run's throughput, its progress rising and its id."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.telemetry.exporters import PROMETHEUS, free_port, private_dir, start_prometheus, stop_process

pytestmark = [
    pytest.mark.real,
    pytest.mark.skipif(PROMETHEUS is None, reason="Debian's prometheus is not installed (scripts/setup.sh)"),
]
SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.fixture(autouse=True)
def no_subprocess():
    """This module starts Prometheus and the CLI: tests/run's fast-lane guard does not apply here."""


def query(base: str, promql: str) -> list[dict]:
    url = f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    with urllib.request.urlopen(url, timeout=10) as answer:
        found = json.load(answer)
    assert found["status"] == "success", found
    return found["data"]["result"]


def test_prometheus_scrapes_a_running_run(tmp_path):
    port = free_port("127.0.0.1")
    workdir = private_dir()
    prometheus = start_prometheus([f"127.0.0.1:{port}"], workdir)
    try:
        # 8 repetitions of two 1 s windows: about 16 s of run, scraped every second (6 s was scraped once under
        # a loaded CI's start-up of Prometheus, and progress needs two scrapes)
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "storbench",
                "--results",
                str(tmp_path),
                "run",
                "null",
                "--repeat",
                "8",
                "--set",
                "sleep_ms=1000",
                "--interval",
                "0.5",
                "--json",
                "--metrics-port",
                str(port),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": SRC},
        )
        assert done.returncode == 0, done.stderr
        outcome = json.loads(done.stdout)
        with socket.socket() as probe:
            assert probe.connect_ex(("127.0.0.1", port)) != 0  # the endpoint ended with the run
        rates = query(prometheus.url, 'max_over_time(storbench_window_value{metric="null_mbps"}[5m])')
        assert {r["metric"]["workload"] for r in rates} == {"null-write", "null-read"}
        assert all(float(r["value"][1]) > 0 for r in rates)
        (progress,) = query(
            prometheus.url, "max_over_time(storbench_progress_ratio[5m]) - min_over_time(storbench_progress_ratio[5m])"
        )
        assert float(progress["value"][1]) > 0  # several scrapes, while the run went on
        (info,) = query(prometheus.url, "max by (run_id, suite) (max_over_time(storbench_run_info[5m]))")
        assert (info["metric"]["run_id"], info["metric"]["suite"]) == (outcome["run_id"], "null")
    finally:
        stop_process(prometheus.proc)
        shutil.rmtree(workdir, ignore_errors=True)
