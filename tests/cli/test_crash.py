"""A run whose process is gone (kill -9) reads `crashed` in `runs` and `show`, and `storbench cleanup` finishes it;
a run that finished has nothing to clean up (exit 0); `runs` never says a run on another host is running.

The killed and timed-out runs are real `storbench run` processes on the null suite with a file:// target (a
second each); the listings that need no process run in this one.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storbench import cli
from storbench.results.model import Sample
from storbench.results.store import ResultStore
from storbench.targets import MARKER
from tests.cli.helpers import SRC, storbench


def _wait_until(check, what: str, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _started(home: Path, target: Path, label: str = "default") -> tuple[str, Path] | None:
    """(run id, run root) once the run labelled ``label`` is recorded and has claimed its root on the target."""
    for manifest in (home / "runs").glob(f"*-{label}-*/manifest.json"):
        run_id = manifest.parent.name
        if (target / f"storbench-{run_id}" / MARKER).exists():
            return run_id, target / f"storbench-{run_id}"
    return None


def _status(home: Path, run_id: str) -> str:
    listed = json.loads(storbench(home, "runs", "--json").stdout)
    return next(r["status"] for r in listed if r["run_id"] == run_id)


@pytest.mark.real  # a real `storbench run`, killed with SIGKILL
def test_a_killed_run_reads_crashed_and_cleanup_finishes_it(tmp_path):
    home, target = tmp_path / "home", tmp_path / "t"
    env = {**os.environ, "PYTHONPATH": SRC}
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "storbench",
            "--results",
            str(home),
            "run",
            "null",
            "--target",
            str(target),
            "--repeat",
            "1",
            "--set",
            "sleep_ms=120000",
            "-q",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        run_id, root = _wait_until(lambda: _started(home, target), "the run to claim its root")
        _wait_until(lambda: _status(home, run_id) == "running", "the run to read running")
        refused = storbench(home, "cleanup", run_id)  # a live run is not cleaned up under its feet
        assert refused.returncode == 2 and root.exists()
        assert refused.stderr == (
            f"storbench: error: run {run_id} is still running (pid {run.pid}): stop it first "
            f"(Ctrl-C, or kill -TERM {run.pid}); it removes its own run root as it stops\n"
        )
    finally:
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=30)

    assert (root / MARKER).read_text().strip() == run_id  # nothing cleaned up: the process had no chance
    assert _status(home, run_id) == "crashed"
    listed = [
        [cell.strip() for cell in line.split("  ") if cell.strip()]
        for line in storbench(home, "runs").stdout.splitlines()
    ]
    assert listed[0][4] == "STATUS" and listed[1][:5] == [run_id, "default", "null", "tiny", "crashed"]
    shown = storbench(home, "show", run_id)
    assert shown.returncode == 0
    assert any(line.split() == ["Status", "crashed"] for line in shown.stdout.splitlines()), shown.stdout

    done = storbench(home, "cleanup", run_id)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        f"removed file://{root}",
        f"run {run_id}: crashed (its process ended before the run finished); finished by cleanup",
    ]
    assert not root.exists() and not list(target.glob("*"))
    manifest = json.loads((home / "runs" / run_id / "manifest.json").read_text())
    assert manifest["status"] == "crashed" and manifest["finished"]
    assert manifest["cleanup"]["removed"] == f"file://{root}"
    assert manifest["errors"][-1]["error"].startswith(f"the run's process (pid {run.pid} on ")
    assert _status(home, run_id) == "crashed"

    again = storbench(home, "cleanup", run_id)
    assert (again.returncode, again.stderr) == (0, "")
    assert again.stdout == f"run {run_id}: crashed, nothing of it left on its target: nothing to do\n"


@pytest.mark.real  # real `storbench run`s: one that finished, one stopped by timeout(1)
def test_cleanup_of_a_finished_run_and_a_timed_out_run_has_nothing_to_do(tmp_path):
    """Issue 25 cases 11 and 8: a run that finished cleanly, and one `timeout` stopped (SIGTERM to its process
    group), left nothing: cleanup says so and exits 0, and the stopped run never asked for a cleanup."""
    home, target = tmp_path / "home", tmp_path / "t"
    finished = storbench(home, "run", "null", "--target", str(target), "--repeat", "1", "--json", "-q")
    run_id = json.loads(finished.stdout)["run_id"]
    done = storbench(home, "cleanup", run_id)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"run {run_id}: succeeded, nothing of it left on its target: nothing to do\n"

    # timeout(1) passes a SIGTERM it gets on to the run and its whole process group, as when its time is up;
    # sent once the run is in its timed action (a fixed time limit would race the start-up on a loaded machine)
    stopped = subprocess.Popen(
        [
            "timeout",
            "300",
            sys.executable,
            "-m",
            "storbench",
            "--results",
            str(home),
            "run",
            "null",
            "--target",
            str(target),
            "--repeat",
            "1",
            "--label",
            "timed",
            "--set",
            "sleep_ms=60000",
            "-q",
        ],
        env={**os.environ, "PYTHONPATH": SRC},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        _wait_until(lambda: _started(home, target, "timed"), "the run to claim its root")
    finally:
        stopped.send_signal(signal.SIGTERM)
        stderr = stopped.communicate(timeout=60)[1]
    assert stopped.returncode != 0 and "interrupted" in stderr, stderr
    assert "could not remove" not in stderr and "storbench cleanup" not in stderr
    assert not list(target.glob("*"))  # the target directory the run created went with its root
    timed = storbench(home, "cleanup", "timed")
    assert timed.returncode == 0 and timed.stdout.endswith(
        ": interrupted, nothing of it left on its target: nothing to do\n"
    )


def _recorded(home: Path, run_id: str, label: str, **process) -> None:
    store = ResultStore(home)
    writer = store.create_run(run_id, {"label": label, "suite": "null", "scale": "tiny"})
    writer.add_samples([Sample("null-write", "completion_time", 1.0, "s", 1)])
    writer.update_manifest(process={**writer.manifest["process"], **process})


def test_runs_never_says_a_run_it_cannot_check_is_running(tmp_path, capsys):
    home = tmp_path / "home"
    _recorded(home, "20260101-000000-here-0001", "here", pid=2**22 + 1)  # no such process
    _recorded(home, "20260101-000001-there-0002", "there", host="elsewhere")
    _recorded(home, "20260101-000002-now-0003", "now")  # this process: alive
    assert cli.main(["--results", str(home), "runs"]) == 0
    rows = [line.split("  ") for line in capsys.readouterr().out.splitlines()[1:]]
    statuses = [[cell.strip() for cell in row if cell.strip()][4] for row in rows]
    assert statuses == ["crashed", "running? (host elsewhere)", "running"]
    assert cli.main(["--results", str(home), "cleanup", "there"]) == 2
    assert capsys.readouterr().err == (
        "storbench: error: run 20260101-000001-there-0002 ran on elsewhere: whether "
        "it still runs is seen there; run `storbench cleanup "
        "20260101-000001-there-0002` on elsewhere\n"
    )


@pytest.mark.parametrize("command", ["show", "cleanup", "compare"])
@pytest.mark.parametrize("ref", ["../x", "/etc"])
def test_a_path_as_a_run_reference_is_one_line(tmp_path, capsys, command, ref):
    assert cli.main(["--results", str(tmp_path / "home"), command, ref]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"storbench: error: run {ref!r}: a path; name a run by its id or label (see `storbench runs`); "
        f"a run directory elsewhere is read with `storbench import DIR` first\n"
    )
