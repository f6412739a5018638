"""`services up spark`'s cluster from outside: bad input, a submit without the cluster's secret refused, the
secret in its private file only, `services down` stopping every recorded process and the executors (the last
test of the session's ``spark_standalone``), and an interrupted `services up` leaving nothing running."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storbench.engines.spark import SparkEngine
from storbench.services import process
from storbench.services import spark as spark_service
from storbench.services import spark_auth
from tests.cli.helpers import storbench

pytestmark = pytest.mark.spark


@pytest.fixture
def cluster(spark_standalone):
    """(results home, state, the workers' loop devices) of the session's 2-worker cluster (tests/conftest.py)."""
    return spark_standalone


def test_bad_input_is_one_line(cluster, tmp_path):
    home, _, _ = cluster
    dirs = []
    for name in ("a", "b", "c"):
        (tmp_path / name).mkdir()
        dirs += ["--worker-dir", str(tmp_path / name)]
    for args, words in (
        (["--workers", "0"], "--workers 0"),
        (["--workers", "2", *dirs], "--worker-dir given 3 times"),
        (["--workers", "1", "--memory", "lots"], "--memory 'lots'"),
        (["--workers", "1", "--worker-dir", str(tmp_path / "missing")], "not a directory"),
    ):
        result = storbench(tmp_path / "home", "services", "up", "spark", *args, timeout=60)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert result.returncode != 0 and len(lines) == 1 and words in lines[0], (args, result.stderr)
    assert not (tmp_path / "home" / "services" / "spark").exists()  # refused before anything started


APP = "from pyspark import SparkContext\nprint('COUNT', SparkContext().parallelize(range(4), 2).count())\n"


@pytest.mark.parametrize(
    "conf, refusal",
    [
        ({}, "Expected SaslMessage, received something else"),  # a client without spark.authenticate
        ({"spark.authenticate": "true", "spark.authenticate.secret": "not-the-secret"}, "Mismatched response"),
    ],
)
def test_a_submit_without_the_secret_is_refused(cluster, tmp_path, conf, refusal):
    """A plain spark-submit to the master: refused at its first RPC (seen in its output, then stopped: Spark
    would retry for a minute); the master never lists the application."""
    _, state, _ = cluster
    (tmp_path / "app.py").write_text(APP)
    conf = {"spark.ui.enabled": "false", "spark.app.name": f"intruder {tmp_path.name}", **conf}
    argv = [
        str(spark_service.spark_home() / "bin" / "spark-submit"),
        "--master",
        state["uri"],
        *(arg for k, v in conf.items() for arg in ("--conf", f"{k}={v}")),
        str(tmp_path / "app.py"),
    ]
    out = tmp_path / "out.log"
    with open(out, "wb") as log:
        proc = subprocess.Popen(
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"},
        )
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline and refusal not in out.read_text(errors="replace"):
            time.sleep(0.5)
        apps = [a["name"] for a in spark_service.master_json(state).get("activeapps", [])]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # its own session: the spark-submit and the JVM it started
        proc.wait(timeout=30)
    text = out.read_text(errors="replace")
    assert f"Failed to connect to master {state['uri'][len('spark://') :]}" in text and refusal in text, text[-3000:]
    assert "COUNT" not in text and conf["spark.app.name"] not in apps


def _secret(state):
    found = [
        line.split("=", 1)[1]
        for line in Path(state["auth_file"]).read_text().splitlines()
        if line.startswith("spark.authenticate.secret=")
    ]
    assert len(found) == 1 and len(found[0]) >= 40
    return found[0]


def test_the_secret_stays_in_its_private_file(cluster):
    """0600 in a 0700 directory; not in state.json, in the environment `services env` gives, in any log or
    work file of the service, nor in the command line of master, workers, their executors or the driver."""
    home, state, _ = cluster
    secret, auth = _secret(state), Path(state["auth_file"])
    assert auth.stat().st_mode & 0o777 == 0o600 and auth.parent.stat().st_mode & 0o777 == 0o700
    assert secret not in Path(state["workdir"], process.STATE).read_text()
    assert spark_service.client_env(state) == {
        "STORBENCH_SPARK_MASTER": state["uri"],
        "STORBENCH_SPARK_PROPERTIES": str(auth),
    }
    recorded = process.read_state(Path(state["workdir"]))["processes"]
    engine = SparkEngine(state["uri"], spark_auth.client_conf(home, state["uri"]), app_name="storbench auth test")
    try:
        context = engine.start().sparkContext
        assert context.parallelize(range(8), 4).map(lambda x: x * 2).sum() == 56  # executors reached the driver
        executors = _executors(recorded)
        below = {p["name"]: [p["pid"], *process.descendants(p["pid"])] for p in recorded}
        server = {pid: name for name, pids in below.items() for pid in pids}
        driver = [pid for pid in process.descendants(os.getpid()) if "SparkSubmit" in process.cmdline(pid)]
        seen = {pid: line for pid in [*server, *driver] if (line := process.cmdline(pid))}  # gone: nothing
    finally:
        engine.stop()
    assert len(executors) == 2 and len(driver) == 1
    assert {*executors, *driver, *(p["pid"] for p in recorded)} <= set(seen)  # each read while it ran
    leaks = [pid for pid, line in seen.items() if secret in line]
    assert not set(leaks) - set(driver), "the secret in a server's or an executor's command line"
    files = [
        f
        for root in [state["workdir"], *state["worker_roots"]]
        for f in Path(root).rglob("*")
        if f.is_file() and f != auth
    ]
    assert any(f.name == "stderr" for f in files)  # the executors' own logs (their launch command) are among them
    assert [f for f in files if secret in _text_if_there(f)] == []
    # the driver's spark-submit takes secret settings from a private properties file, not --conf
    assert not leaks, "the secret in the driver's command line"


def _executors(recorded):
    """PIDs of the executor JVMs below the workers (polled until each worker has one)."""
    for _ in range(240):
        found = {
            p["name"]: [
                pid for pid in process.descendants(p["pid"]) if "CoarseGrainedExecutorBackend" in process.cmdline(pid)
            ]
            for p in recorded
            if p["kind"] == "worker"
        }
        if all(found.values()):
            return [pid for pids in found.values() for pid in pids]
        time.sleep(0.5)
    raise AssertionError(f"no executor under every worker: {found}")


def test_down_stops_every_recorded_pid_and_the_executors(cluster):
    home, state, _ = cluster
    recorded = process.read_state(Path(state["workdir"]))["processes"]
    assert {p["kind"] for p in recorded} == {"master", "worker", "exporter"} and len(recorded) == 5
    assert all(process.alive(p["pid"], p["marker"]) for p in recorded)
    engine = SparkEngine(
        state["uri"],
        spark_auth.client_conf(home, state["uri"]),  # an app holding executors
        app_name="storbench down test",
    )
    try:
        engine.start()
        executors = [(pid, process.cmdline(pid)) for pid in _executors(recorded)]
        down = storbench(home, "services", "down", "spark", timeout=120)
    finally:
        engine.stop()
    assert down.returncode == 0 and down.stdout.strip() == "spark: stopped", down.stderr
    for entry in recorded:
        assert not process.alive(entry["pid"], entry["marker"]), entry
    assert len(executors) == 2 and not any(process.alive(pid, line) for pid, line in executors)
    for root in state["owned_roots"]:
        assert not Path(root).exists()  # our marked worker dirs go; the --worker-dir itself stays
        assert Path(root).parent.is_dir()
    assert not Path(state["workdir"]).exists()
    again = storbench(home, "services", "down", "spark", timeout=60)
    assert again.returncode == 0 and again.stdout.strip() == "spark: was not running"


def test_interrupted_up_leaves_nothing_running(tmp_path):
    home = tmp_path / "home"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "storbench", "--results", str(home), "services", "up", "spark", "--workers", "1"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    state_file = home / "services" / "spark" / process.STATE
    recorded = []
    deadline = time.monotonic() + 180  # a loaded machine starts JVMs slowly
    while time.monotonic() < deadline:  # until the master, the worker and its exporter are spawned, before all is ready
        try:
            recorded = json.loads(state_file.read_text())["processes"]
        except (OSError, ValueError, KeyError):
            recorded = []
        # all three spawned and each already its own program (spark-class execs java after a moment)
        if (
            len(recorded) == 3 and all(process.alive(p["pid"], p["marker"]) for p in recorded)
        ) or proc.poll() is not None:
            break
        time.sleep(0.05)
    assert len(recorded) == 3 and all(process.alive(p["pid"], p["marker"]) for p in recorded), recorded
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    for entry in recorded:
        assert not process.alive(entry["pid"], entry["marker"]), entry
    assert not state_file.exists()
    status = storbench(home, "services", "status", "spark")
    assert status.returncode == 1 and status.stdout.strip() == "spark: not running"


def _text_if_there(path: Path) -> str:
    """A file's text, or nothing for one its executor removed since the directory was listed (a cache file)."""
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""
