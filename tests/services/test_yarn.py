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
from storbench.services.spark import descendants
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
    assert [(n.name, n.host, n.role) for n in nodes.nodes] == [("nodemanager-1", "127.0.0.2", "worker"),
                                                              ("nodemanager-2", "127.0.0.3", "worker")]
    assert all(n.exporter.startswith(f"http://{n.host}:") for n in nodes.nodes)
    # the web UI and REST API: an anonymous request is refused; a stated user other than storbench may not submit
    assert _status(f"{state['web_ui']}/ws/v1/cluster/nodes")[0] == 401
    api = f"{state['web_ui']}/ws/v1/cluster/apps"
    code, body = _status(f"{api}/new-application?user.name=mallory", b"")
    assert code == 200, body
    app = json.dumps({"application-id": json.loads(body)["application-id"], "application-name": "x",
                      "queue": "default", "am-container-spec": {"commands": {"command": "true"}},
                      "resource": {"memory": 256, "vCores": 1}}).encode()
    code, body = _status(f"{api}?user.name=mallory", app)
    assert code == 403 or "not have permission" in body or "cannot submit" in body.lower(), (code, body)


def test_spark_transforms_on_yarn_both_nodes(yarn):
    home, state = yarn
    result, outcome, samples = run_json(home, "spark-transforms", "--spark-master", "yarn", *TINY,
                                        "--set", "repartition_partitions=4", timeout=400)
    assert result.returncode == 0, result.stderr[-2000:]
    assert outcome["status"] == "succeeded", outcome["errors"]
    manifest = json.loads((Path(outcome["path"]) / "manifest.json").read_text())
    assert [n["name"] for n in manifest["config"]["nodes"]] == ["nodemanager-1", "nodemanager-2"]
    nodes = {s["labels"]["node"] for s in samples if s["workload"] == "repartition" and s["metric"] == "max_cpu_pct"
             and "node" in s["labels"]}
    assert nodes == {"worker-1", "worker-2"}  # both NodeManagers (role worker, by ordinal) measured by exporters
    hosts = {s["labels"].get("executor_host") for s in samples if s["workload"] == "repartition"} - {None}
    assert hosts == {"127.0.0.2", "127.0.0.3"}  # executors on both NodeManagers (Spark's event log)


def test_terasort_on_yarn_per_node_table(yarn):
    home, state = yarn
    result, outcome, samples = run_json(home, "terasort", "--spark-master", "yarn", "--repeat", "1",
                                        "--set", "size_bytes=4M", "--set", "partition_mb=1", timeout=400)
    assert result.returncode == 0, result.stderr[-2000:]
    assert outcome["status"] == "succeeded", outcome["errors"]
    per_node = {s["labels"]["node"] for s in samples if s["workload"] == "terasort" and "node" in s["labels"]}
    assert per_node == {"worker-1", "worker-2"}
    shown = storbench(home, "show", outcome["run_id"])
    print(shown.stdout)  # the per-node table, for the closing note (pytest -s)
    assert "nodemanager-1" in shown.stdout and "nodemanager-2" in shown.stdout


def test_testdfsio_on_yarn_against_hdfs(yarn, hdfs):
    home, _ = yarn
    _, hdfs_state = hdfs
    figures = {}
    for driver in ("testdfsio", "storbench"):
        result, outcome, samples = run_json(
            home, "dfsio", "--target", f"{hdfs_state['uri']}/yarn-dfsio-{driver}", "--spark-master", "yarn",
            "--repeat", "1", "--set", "files=2", "--set", "file_size=4M", "--set", f"driver={driver}", timeout=500)
        assert result.returncode == 0, result.stderr[-2000:]
        assert outcome["status"] == "succeeded", outcome["errors"]
        figures[driver] = {(s["workload"], s["metric"]): s["value"] for s in samples
                           if s["metric"].startswith("dfsio_") and not s["labels"].get("node")}
        assert figures[driver][("dfsio-write", "dfsio_total_mb")] == pytest.approx(8.0, rel=0.06)
    print(json.dumps({d: {f"{w} {m}": v for (w, m), v in f.items()} for d, f in figures.items()}, indent=1))
    assert figures["testdfsio"][("dfsio-read", "dfsio_throughput_mbps")] > 0


def test_bad_input_is_one_line_before_any_work(yarn, tmp_path):
    home, state = yarn
    cases = [
        ({}, ["--spark-conf", "spark.yarn.queue=nosuchqueue"], "spark.yarn.queue 'nosuchqueue': no such queue"),
        ({}, ["--spark-conf", "spark.executor.memory=8g"], "is more than a NodeManager has (1536 MB)"),
    ]
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "yarn-site.xml").write_text('<configuration><property><name>yarn.resourcemanager.address</name>'
                                        '<value>127.0.0.1:1</value></property></configuration>')
    cases.append(({"HADOOP_CONF_DIR": str(conf)}, [], "no ResourceManager answers at 127.0.0.1:1"))
    for env, extra, said in cases:
        result = storbench(home, "run", "groupby", "--spark-master", "yarn", *TINY, *extra, env_extra=env, timeout=60)
        assert result.returncode == 2, result.stderr
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and said in lines[0], result.stderr
    empty = tmp_path / "empty-home"
    result = storbench(empty, "run", "groupby", "--spark-master", "yarn", *TINY, timeout=60,
                       env_extra={"HADOOP_CONF_DIR": "", "YARN_CONF_DIR": ""})
    assert result.returncode == 2 and "no ResourceManager" in result.stderr, result.stderr
    result = storbench(empty, "services", "up", "yarn", "--memory", "99999999", timeout=60)
    assert result.returncode == 2 and "more than this machine has" in result.stderr, result.stderr


def test_nodemanager_killed_mid_run_ends(yarn):
    """A NodeManager and its containers killed (SIGKILL, by PID) while terasort runs: the run ends, recovered on
    the other node or failed with its error counted, never hangs."""
    home, state = yarn
    nm = next(p for p in state["processes"] if p["name"] == "nodemanager-2")
    env = {**os.environ, "PYTHONPATH": SRC, "SPARK_LOCAL_IP": "127.0.0.1"}
    run = subprocess.Popen([sys.executable, "-m", "storbench", "--results", str(home), "--json", "run", "terasort",
                            "--spark-master", "yarn", "--repeat", "1", "--set", "size_bytes=30M",
                            "--set", "partition_mb=2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=env)
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
