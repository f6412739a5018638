"""A real signal from outside stops a real engine's run as Ctrl-C does: fio's and Spark's processes end with
storbench, and the target is left clean.

The run core's side (each signal, a second one during cleanup, what is kept, the cleanup order, a failing
cleanup step) is tested in process on the null engine: tests/run/test_failures.py and test_cleanup.py.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storbench import interrupts
from storbench.cli import EXIT_INTERRUPTED
from storbench.engines.spark import SparkEngine
from tests.cli.helpers import SRC, storbench

pytestmark = pytest.mark.real  # every test here sends a real signal to a real run

INTERRUPTED_LINE = "warning: interrupted: what was measured so far is kept"


def _descendants(pid: int) -> dict[int, str]:
    """Every living process under ``pid`` (children, grandchildren, ...) and its name, from /proc."""
    parents: dict[int, int] = {}
    names: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name, rest = stat[stat.index("(") + 1 : stat.rindex(")")], stat[stat.rindex(")") + 2 :].split()
        if rest[0] != "Z":  # a zombie has exited
            parents[int(entry.name)], names[int(entry.name)] = int(rest[1]), name
    found: dict[int, str] = {}
    todo = [pid]
    while todo:
        parent = todo.pop()
        for child, ppid in parents.items():
            if ppid == parent and child not in found:
                found[child] = names[child]
                todo.append(child)
    return found


def _benchmarking(pid: int) -> dict[int, str]:
    """The run's processes once fio runs a job (not a probe such as ``fio --version``) in its forked
    worker, else nothing."""
    found = _descendants(pid)
    fios = [child for child, name in found.items() if name == "fio"]
    for child in fios:
        try:
            if b"--output=" in Path(f"/proc/{child}/cmdline").read_bytes() and len(fios) >= 2:
                return found
        except OSError:
            continue
    return {}


def _alive(pids: dict[int, str]) -> dict[int, str]:
    still = {}
    for pid, name in pids.items():
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if stat.split(")")[-1].split()[0] != "Z" and f"({name})" in stat:
            still[pid] = name
    return still


def _wait_until(check, what: str, timeout: float = 120, step: float = 0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(step)
    raise AssertionError(f"timed out waiting for {what}")


def _interrupt(tmp_path: Path, args: list[str], ready, signum: int, twice: bool = False):
    """``storbench run ARGS --json`` stopped by ``signum`` once ``ready(pid, stderr)`` holds (twice: again while it
    cleans up): (exit code, outcome, stderr, the processes it had, the target)."""
    home, target, err_path = tmp_path / "home", tmp_path / "target", tmp_path / "stderr"
    target.mkdir()  # the user's directory: it stays, only the run's root in it goes
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
                *args,
                "--target",
                str(target),
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            env=env,
        )
    try:
        children = _wait_until(lambda: ready(proc.pid, err_path.read_text()), "the run to be under way", 300)
        proc.send_signal(signum)
        if twice:  # the second signal once the run has seen the first: during its cleanup
            _wait_until(lambda: "interrupted" in err_path.read_text(), "the run to see the signal", step=0.01)
            proc.send_signal(signum)
        out, _ = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, json.loads(out), err_path.read_text(), children, target


def _assert_stopped_like_ctrl_c(
    code: int, signum: int, outcome: dict, stderr: str, children: dict[int, str], target: Path
):
    assert code == 128 + signum, stderr  # what a shell reports for a process the signal stopped
    manifest = json.loads((Path(outcome["path"]) / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and manifest["finished"]
    assert Path(outcome["report"]).exists()
    assert not [p.name for p in target.iterdir() if p.name.startswith("storbench-")]
    assert not _alive(children), children  # gone when storbench is: none outlives it


@pytest.mark.parametrize(
    "signum, twice", [(signal.SIGTERM, False), (signal.SIGINT, True)], ids=["SIGTERM", "SIGINT-again-during-cleanup"]
)
def test_signal_stops_a_run_like_ctrl_c(tmp_path, signum, twice):
    code, outcome, stderr, children, target = _interrupt(
        tmp_path, ["fio-basic", "--set", "runtime_s=30"], lambda pid, _err: _benchmarking(pid), signum, twice
    )
    _assert_stopped_like_ctrl_c(code, signum, outcome, stderr, children, target)
    assert "Traceback" not in stderr
    assert [line for line in stderr.splitlines() if not line.startswith("[")] == [INTERRUPTED_LINE], stderr


@pytest.mark.parametrize("signum, twice", [(signal.SIGINT, True)], ids=["SIGINT-again-during-cleanup"])
def test_a_signal_cancels_spark_jobs_and_ends_the_jvm(tmp_path, signum, twice):
    """Spark's jobs are cancelled before the target is cleaned (none writes into it afterwards), and the JVM,
    a child of storbench, is gone when storbench is. The interrupt is one storbench line: no py4j traceback,
    no killed tasks' lines (issue 12 item 14)."""
    written = []

    def ready(pid, _stderr):  # datagen has written the dataset, and scan's job has read it for a second
        if not written and list((tmp_path / "target").glob("storbench-*/dataset/_SUCCESS")):
            written.append(time.monotonic())
        return _descendants(pid) if written and time.monotonic() - written[0] > 1 else {}

    code, outcome, stderr, children, target = _interrupt(tmp_path, ["spark-scan"], ready, signum, twice)
    assert "java" in children.values()
    _assert_stopped_like_ctrl_c(code, signum, outcome, stderr, children, target)
    assert "FileNotFound" not in stderr  # no job was left reading the removed dataset
    assert "Traceback" not in stderr and "py4j" not in stderr, stderr
    assert [line for line in stderr.splitlines() if not line.startswith("[")] == [INTERRUPTED_LINE], stderr
    assert "Spark" in (Path(outcome["path"]) / "spark.log").read_text()  # the JVM's own lines went there


@pytest.mark.parametrize("name, code", [("TERM", 143), ("HUP", 129), ("INT", EXIT_INTERRUPTED)])
def test_exit_status_names_the_signal(tmp_path, name, code):
    """Issue 25 case 13: 128 + the signal, as shells report it; SIGTERM and SIGHUP are not Ctrl-C's 130. The
    null workload sends the signal to the storbench process itself, in its timed action."""
    result = storbench(
        tmp_path / "home", "run", "null", "-q", "--set", "fail=signal", "--set", f"signal={name}", timeout=120
    )
    assert result.returncode == code, result.stderr
    assert [line for line in result.stderr.splitlines() if not line.startswith("[")] == [INTERRUPTED_LINE]


@pytest.mark.spark
def test_ctrl_c_stays_storbench_s_once_spark_has_started(tmp_path):
    """pyspark's SparkContext sets its own SIGINT handler (it cancels the jobs and raises); storbench takes the
    signal back, so Ctrl-C stops a run the way SIGTERM and SIGHUP do."""
    saved = {sig: signal.getsignal(sig) for sig in interrupts.SIGNALS}
    engine = SparkEngine("local[1]", local_dir=str(tmp_path / "spark-local"), app_name="storbench signal test")
    try:
        interrupts.install()
        engine.start()
        handlers = {signal.getsignal(sig) for sig in interrupts.SIGNALS}
        assert len(handlers) == 1 and handlers == {signal.getsignal(signal.SIGTERM)}, handlers
    finally:
        engine.stop()
        interrupts.exiting()
        for sig, handler in saved.items():
            signal.signal(sig, handler)
