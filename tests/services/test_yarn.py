"""`services up yarn` and runs on it: Hadoop's own ResourceManager and 2 NodeManagers (the session's `yarn` fixture),
Spark on YARN (client mode, executors on the NodeManagers, both nodes measured), Hadoop's TestDFSIO as a MapReduce
job on the same YARN against the session's HDFS, bad input before any work, and a NodeManager killed mid-run.
The run with the killed NodeManager is last: the service has one node left after it."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from storbench.services import process, yarn as yarn_service
from storbench.services.process import descendants
from storbench.telemetry.nodes import load_nodes
from tests.cli.helpers import SRC, storbench
from tests.workloads.helpers import run_json

pytestmark = [pytest.mark.real, pytest.mark.yarn]
TINY = ("--repeat", "1", "--scale", "100K")


@pytest.fixture(autouse=True)
def python_for_executors(monkeypatch):
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)  # the containers' Python: this venv's


def _status(url: str, data: bytes | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


def test_nodes_file_and_who_may_submit(yarn):
    home, state = yarn
    assert yarn_service.running_nodes(state) == ["127.0.0.2", "127.0.0.3"]
    nodes = load_nodes(state["nodes"])
    assert [(n.name, n.host, n.role) for n in nodes.nodes] == [
        ("nodemanager-1", "127.0.0.2", "worker"),
        ("nodemanager-2", "127.0.0.3", "worker"),
    ]
    assert all(n.exporter.startswith(f"http://{n.host}:") for n in nodes.nodes)
    # the web UI and REST API: an anonymous request is refused; a stated user other than storbench may not submit
    assert _status(f"{state['web_ui']}/ws/v1/cluster/nodes")[0] == 401
    api = f"{state['web_ui']}/ws/v1/cluster/apps"
    code, body = _status(f"{api}/new-application?user.name=mallory", b"")
    assert code == 200, body
    app = json.dumps(
        {
            "application-id": json.loads(body)["application-id"],
            "application-name": "x",
            "queue": "default",
            "am-container-spec": {"commands": {"command": "true"}},
            "resource": {"memory": 256, "vCores": 1},
        }
    ).encode()
    code, body = _status(f"{api}?user.name=mallory", app)
    assert code == 403 or "not have permission" in body or "cannot submit" in body.lower(), (code, body)


# spark-transforms' repartition and terasort in one run, one Spark session on YARN: the session's start-up (an
# ApplicationMaster and two executor containers) is paid once for both
MIX = """\
name: yarn-mix
description: spark-transforms' repartition and terasort, one Spark session on YARN
repetitions: 1
scales:
  tiny: {rows: 100000, partitions: 2, size_bytes: 4000000, partition_mb: 1}
params:
  repartition_partitions: 4
prepare: [datagen, teragen]
workloads: [repartition, terasort]
"""


def test_spark_transforms_and_terasort_on_yarn_both_nodes(yarn, tmp_path):
    home, state = yarn
    suite = tmp_path / "yarn-mix.yaml"
    suite.write_text(MIX)
    result, outcome, samples = run_json(home, str(suite), "--spark-master", "yarn", timeout=400)
    assert result.returncode == 0, result.stderr[-2000:]
    assert outcome["status"] == "succeeded", outcome["errors"]
    manifest = json.loads((Path(outcome["path"]) / "manifest.json").read_text())
    assert [n["name"] for n in manifest["config"]["nodes"]] == ["nodemanager-1", "nodemanager-2"]
    for workload in ("repartition", "terasort"):
        nodes = {
            s["labels"]["node"]
            for s in samples
            if s["workload"] == workload and s["metric"] == "max_cpu_pct" and "node" in s["labels"]
        }
        assert nodes == {"worker-1", "worker-2"}, workload  # both NodeManagers (role worker) measured by exporters
        ran = {
            s["labels"]["node"]
            for s in samples
            if s["workload"] == workload
            and s["metric"] == "spark_task_time_s"
            and "node" in s["labels"]
            and s["value"] > 0
        }
        assert ran == {"worker-1", "worker-2"}, workload  # tasks ran on both NodeManagers (Spark's event log)
    shown = storbench(home, "show", outcome["run_id"])
    print(shown.stdout)  # the per-node table, for the closing note (pytest -s)
    assert "worker-1" in shown.stdout and "worker-2" in shown.stdout


def test_testdfsio_on_yarn_against_hdfs(yarn, hdfs):
    """Hadoop's TestDFSIO as a MapReduce job on the YARN the Spark session runs on, then storbench's driver, in
    one run (a sweep over the driver: one Spark session), both against the session's HDFS."""
    home, _ = yarn
    _, hdfs_state = hdfs
    result, outcome, samples = run_json(
        home,
        "dfsio-002",
        "--target",
        f"{hdfs_state['uri']}/yarn-dfsio",
        "--spark-master",
        "yarn",
        "--repeat",
        "1",
        "--set",
        "files=2",
        "--set",
        "file_size=4M",
        "--sweep",
        "driver=testdfsio,storbench",
        timeout=500,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert outcome["status"] == "succeeded", outcome["errors"]
    figures = {
        d: {
            (s["workload"], s["metric"]): s["value"]
            for s in samples
            if s["metric"].startswith("dfsio_") and s["labels"].get("driver") == d and not s["labels"].get("node")
        }
        for d in ("testdfsio", "storbench")
    }
    print(json.dumps({d: {f"{w} {m}": v for (w, m), v in f.items()} for d, f in figures.items()}, indent=1))
    for driver, found in figures.items():
        for workload in ("dfsio-write", "dfsio-read"):
            assert found[(workload, "dfsio_total_mb")] == pytest.approx(8.0, rel=0.06), (driver, workload)
            assert found[(workload, "dfsio_throughput_mbps")] > 0, (driver, workload)
    windows = {(s["workload"], s["labels"].get("driver")) for s in samples if s["metric"] == "completion_time"}
    assert {("dfsio-write", "testdfsio"), ("dfsio-write", "storbench")} <= windows  # both timed by storbench
    shown = storbench(home, "show", outcome["run_id"])
    print(shown.stdout)  # both drivers' rows side by side, for the closing note


def _as_nobody(code: str) -> subprocess.CompletedProcess:
    """``code`` run by Python as the local account ``nobody`` (no groups): a stranger on this machine."""
    return subprocess.run(
        ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", sys.executable, "-I", "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
    )


# A stranger's submission through the REST API (no Hadoop client or jars needed, as any local user can do it): claims
# the Hadoop name storbench, asks for an ApplicationMaster whose command records the uid it runs as in its stdout
STRANGER = """
import json, sys, urllib.request
web, user = sys.argv[1], "storbench"
def call(path, body=None):
    request = urllib.request.Request(f"{web}/ws/v1/cluster/apps{path}?user.name={user}", data=body,
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=20) as answer:
        return answer.read()
app = json.loads(call("/new-application", b""))["application-id"]
call("", json.dumps({"application-id": app, "application-name": "stranger", "queue": "default",
                     "am-container-spec": {"commands": {"command": "id -u 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr"}},
                     "resource": {"memory": 256, "vCores": 1}}).encode())
print(app)
"""


class RanAsRoot(AssertionError):
    """The one failure the reproduction below expects today (any other failure of that test is a real one)."""


@pytest.mark.xfail(
    strict=True,
    raises=RanAsRoot,
    reason="issue 38 item 1: YARN's containers run as the OS user "
    "who started the service (root here); remove this mark when they no longer do",
)
def test_a_stranger_claiming_storbench_gets_no_root(yarn):
    """The reproduction of issue 38 item 1: another local account (nobody) states the Hadoop name storbench (simple
    auth trusts it) and submits an application whose container records ``id -u``; the container must not run as
    root. Today it does (uid 0), so this test is expected to fail until YARN's containers run unprivileged."""
    if os.geteuid() != 0:
        pytest.skip("needs root: the service started by root, the stranger another account")
    home, state = yarn
    web = state["web_ui"]
    submitted = _as_nobody(f"import sys; sys.argv[1:] = [{web!r}]\n{STRANGER}")
    assert submitted.returncode == 0, submitted.stderr[-2000:]  # the name alone is enough to submit
    app = submitted.stdout.strip()
    deadline, final = time.monotonic() + 120, None
    while time.monotonic() < deadline and final is None:  # the AM's command exits at once: the app then ends
        found = yarn_service.rest(state, f"apps/{app}")["app"]
        final = found["state"] if found["state"] in ("FINISHED", "FAILED", "KILLED") else None
        time.sleep(0.5)
    assert final is not None, f"{app} did not end within 120 s"
    outputs = [p for p in Path(state["workdir"]).glob(f"nm-*/logs/{app}/*/stdout")]
    assert len(outputs) == 1, outputs  # one container: the stranger's command ran
    uid = outputs[0].read_text().strip()
    assert uid.isdigit(), uid
    print(f"the stranger's container ran as uid {uid}")
    if int(uid) == 0:
        raise RanAsRoot(f"{app}: a local user (nobody) who claims the Hadoop name storbench ran code as uid 0")


def test_bad_input_is_one_line_before_any_work(yarn, tmp_path):
    home, state = yarn
    cases = [
        ({}, ["--spark-conf", "spark.yarn.queue=nosuchqueue"], "spark.yarn.queue 'nosuchqueue': no such queue"),
        ({}, ["--spark-conf", "spark.executor.memory=8g"], "is more than a container may have on this YARN (1536 MB)"),
    ]
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "yarn-site.xml").write_text(
        "<configuration><property><name>yarn.resourcemanager.address</name>"
        "<value>127.0.0.1:1</value></property></configuration>"
    )
    cases.append(({"HADOOP_CONF_DIR": str(conf)}, [], "no ResourceManager answers at 127.0.0.1:1"))
    for env, extra, said in cases:
        result = storbench(home, "run", "groupby", "--spark-master", "yarn", *TINY, *extra, env_extra=env, timeout=60)
        assert result.returncode == 2, result.stderr
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and said in lines[0], result.stderr
    empty = tmp_path / "empty-home"
    result = storbench(
        empty,
        "run",
        "groupby",
        "--spark-master",
        "yarn",
        *TINY,
        timeout=60,
        env_extra={"HADOOP_CONF_DIR": "", "YARN_CONF_DIR": ""},
    )
    assert result.returncode == 2 and "no ResourceManager" in result.stderr, result.stderr
    result = storbench(empty, "services", "up", "yarn", "--memory", "99999999", timeout=60)
    assert result.returncode == 2 and "more than this machine has" in result.stderr, result.stderr


def test_nodemanager_killed_mid_run_ends(yarn):
    """A NodeManager and its containers killed (SIGKILL, by PID) while terasort runs: the run ends, recovered on
    the other node or failed with its error counted, never hangs."""
    home, state = yarn
    nm = next(p for p in state["processes"] if p["name"] == "nodemanager-2")
    env = {**os.environ, "PYTHONPATH": SRC, "SPARK_LOCAL_IP": "127.0.0.1"}
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "storbench",
            "--results",
            str(home),
            "run",
            "terasort",
            "--spark-master",
            "yarn",
            "--repeat",
            "1",
            "--set",
            "size_bytes=8M",
            "--set",
            "partition_mb=2",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and run.poll() is None:  # until an executor runs on that node
            if any("CoarseGrainedExecutorBackend" in process.cmdline(p) for p in descendants(nm["pid"])):
                break
            time.sleep(0.5)
        assert run.poll() is None, run.communicate()[1][-2000:]
        victims = [nm["pid"], *descendants(nm["pid"])]
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        out, err = run.communicate(timeout=400)  # a hang fails here
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode in (0, 4), err[-2000:]
    outcome = json.loads(out)
    assert outcome["status"] == "succeeded" or outcome["errors"], outcome
