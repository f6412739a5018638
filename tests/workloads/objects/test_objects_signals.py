"""Issue 12: an objects run fanned out over Spark barrier tasks, stopped by SIGTERM, ends as interrupted (not
failed: py4j turns the interrupt into its own error on its way up) with one storbench line, no traceback,
no engine process left and nothing of the run left in the bucket."""

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.cli.helpers import SRC
from tests.cli.test_signals import INTERRUPTED_LINE, _alive, _descendants, _wait_until

pytestmark = [pytest.mark.s3, pytest.mark.spark]

SUITE = """name: objects-put-fanout
description: PUT for a minute from two Spark barrier tasks
repetitions: 1
params: {size: 4k, objects: 40, duration_s: 60, drivers: 2, fanout: spark, concurrency: 2}
workloads: [objects-put]
"""


def test_sigterm_stops_a_spark_fanout_as_an_interrupt(s3, client, tmp_path):
    home, _ = s3
    suite, err_path = tmp_path / "fanout.yaml", tmp_path / "stderr"
    suite.write_text(SUITE)
    env = {**os.environ, "PYTHONPATH": SRC, "SPARK_LOCAL_IP": "127.0.0.1"}
    with open(err_path, "w") as err:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "storbench",
                "--results",
                str(home),
                "run",
                str(suite),
                "--target",
                "s3://storbench/fanout-signal",
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=env,
        )
    task_dirs = set(Path(tempfile.gettempdir()).glob("storbench-load-task-*"))  # others' (other workers', older)
    try:
        loaded = lambda: len([n for n in _descendants(proc.pid).values() if n == "storbench-load"]) == 2  # noqa: E731
        _wait_until(loaded, "both barrier tasks' engines to run", 300)
        children = _descendants(proc.pid)
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stderr = err_path.read_text()
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    outcome = json.loads(out)
    assert json.loads((Path(outcome["path"]) / "manifest.json").read_text())["status"] == "interrupted"
    assert "Traceback" not in stderr and "py4j" not in stderr, stderr
    assert [line for line in stderr.splitlines() if not line.startswith("[")] == [INTERRUPTED_LINE], stderr
    assert not _alive(children), children
    # the killed tasks' scratch (their job files) went with Spark's own directories, not left in /tmp
    left = [
        d
        for d in set(Path(tempfile.gettempdir()).glob("storbench-load-task-*")) - task_dirs
        if "fanout-signal" in _job(d)
    ]
    assert left == [], left
    # the tasks' engines stopped before the run prefix was deleted: none wrote into it afterwards
    assert [key for key in client.list("storbench", "fanout-signal/")] == []


def _job(task_dir: Path) -> str:
    try:
        return (task_dir / "job.json").read_text()
    except OSError:
        return ""
