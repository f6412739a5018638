"""A signal while Spark starts (before PySpark knows its gateway) still ends Spark's JVM with storbench, in a
single run and in an interleaved experiment, and the run is recorded interrupted (issue 38 item 10).

PySpark's launch keeps the process it starts to itself until the JVM has written its connection details: an
interrupt in that wait lost it, and the JVM ran on for good. The held moment is deterministic: a
``spark-env.sh`` (Spark sources it from SPARK_CONF_DIR in spark-submit, before any JVM starts) announces
its process and waits to be released, so the signal lands exactly in that wait. Which processes are the
run's is read from its process tree (and the held script's own pid), never from names another test's JVM
could share.
"""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.helpers import SRC
from tests.cli.test_signals import INTERRUPTED_LINE, _descendants, _wait_until

pytestmark = [pytest.mark.real, pytest.mark.spark]

HOLD = """# tests/cli/test_spark_start_signals.py: hold spark-submit before it starts a JVM, until released
touch "$STORBENCH_TEST_HOLD/held.$$"
while [ ! -e "$STORBENCH_TEST_HOLD/release" ]; do sleep 0.1; done
"""


def _started(pid: int) -> str | None:
    """A process's start time (field 22 of /proc/PID/stat), None when it is gone or a zombie: a pid and its
    start time name one process, not a later one that reused the pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return None if fields[0] == "Z" else fields[19]


def _spark_processes(pid: int, held: Path) -> dict[int, str]:
    """The run's Spark processes now: spark-submit (held or not) and JVMs under storbench ``pid`` (its
    workers' too), and any spark-submit the hold announced; pid -> its start time."""
    found = {child for child, name in _descendants(pid).items() if name in ("java", "bash", "spark-submit")}
    found |= {int(p.name.split(".")[1]) for p in held.glob("held.*")}
    return {child: start for child in found if (start := _started(child))}


def _jvm_starting(pid: int) -> bool:
    """Spark's driver JVM (SparkSubmit, not spark-submit's launcher) is among storbench's processes."""
    for child, name in _descendants(pid).items():
        try:
            if name == "java" and b"org.apache.spark.deploy.SparkSubmit" in Path(f"/proc/{child}/cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False


def _interrupt_spark_start(tmp_path: Path, labels: list[str], signum: int, hold: bool):
    """``storbench run spark-transforms`` on one target per label, stopped by ``signum`` while Spark starts:
    held in spark-env.sh (``hold``), or once its driver JVM is starting. (exit code, stderr, run manifests,
    the Spark processes it had that still run afterwards)."""
    home, held = tmp_path / "home", tmp_path / "held"
    held.mkdir()
    conf = tmp_path / "spark-conf"
    conf.mkdir()
    if hold:
        (conf / "spark-env.sh").write_text(HOLD)
    targets = []
    for label in labels:
        (tmp_path / label).mkdir()
        targets += ["--target", str(tmp_path / label)] + (["--label", label] if len(labels) > 1 else [])
    env = {
        **os.environ,
        "PYTHONPATH": SRC,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_CONF_DIR": str(conf),
        "STORBENCH_TEST_HOLD": str(held),
    }
    err_path = tmp_path / "stderr"
    with open(err_path, "w") as err:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "storbench",
                "--results",
                str(home),
                "run",
                "spark-transforms",
                "--scale",
                "tiny",
                "--quiet",
                *targets,
            ],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=env,
        )
    seen: dict[int, str] = {}
    try:
        ready = (lambda: list(held.glob("held.*"))) if hold else (lambda: _jvm_starting(proc.pid))
        _wait_until(ready, "Spark's start-up", 300, step=0.02)
        seen = _spark_processes(proc.pid, held)
        proc.send_signal(signum)
        proc.wait(180)
        survivors = {pid: start for pid, start in seen.items() if _started(pid) == start}
    finally:
        (held / "release").touch()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid, start in seen.items():  # a failing run's leftovers, by pid and start time only
            if _started(pid) == start:
                os.kill(pid, signal.SIGKILL)
    manifests = [json.loads(p.read_text()) for p in sorted((home / "runs").glob("*/manifest.json"))]
    return proc.returncode, err_path.read_text(), manifests, seen, survivors


@pytest.mark.parametrize(
    "signum, hold",
    [(signal.SIGINT, True), (signal.SIGTERM, True), (signal.SIGINT, False)],
    ids=["SIGINT-held-before-the-JVM", "SIGTERM-held-before-the-JVM", "SIGINT-JVM-starting"],
)
def test_a_signal_while_spark_starts_leaves_no_jvm(tmp_path, signum, hold):
    code, stderr, manifests, seen, survivors = _interrupt_spark_start(tmp_path, ["a"], signum, hold)
    assert seen, "no Spark process seen under storbench"
    assert survivors == {}, f"Spark processes outlived storbench: {survivors}"
    assert code == 128 + signum, stderr
    assert [m["status"] for m in manifests] == ["interrupted"], stderr
    assert [line for line in stderr.splitlines() if not line.startswith("[")] == [INTERRUPTED_LINE], stderr


def test_a_signal_while_an_experiment_s_spark_starts_leaves_no_jvm(tmp_path):
    """Two configurations, a worker process each (one SparkContext per process): the experiment's signal
    reaches the worker whose Spark is held in its start."""
    code, stderr, manifests, seen, survivors = _interrupt_spark_start(tmp_path, ["a", "b"], signal.SIGINT, True)
    assert seen, "no Spark process seen under storbench"
    assert survivors == {}, f"Spark processes outlived storbench: {survivors}"
    assert code == 128 + signal.SIGINT, stderr
    assert [m["status"] for m in manifests] == ["interrupted", "interrupted"], stderr
    assert "Traceback" not in stderr, stderr
