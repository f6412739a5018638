"""Fault test (issue 12) on a real HDFS: a DataNode killed (SIGKILL, by PID) mid-`terasort`.

MiniDFSCluster runs its DataNodes inside its own JVM, so this test's private cluster has one there and a
second one as a DataNode process of its own (Hadoop's ``DataNode`` main, same jars), which it kills once
teragen is done. With replication 1 the blocks on that DataNode have no other replica: terasort cannot
read its input (the NameNode still lists the dead DataNode for minutes; the client gives up after its
retries), so the phase fails, not hangs."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storbench import api
from storbench.results.store import ResultStore
from storbench.services import process
from storbench.services.jvm import java_command, launcher_classpath
from tests.workloads.helpers import failed_run
from tests.cli.helpers import SRC

pytestmark = pytest.mark.spark


def hdfs_shell(uri: str, conf_dir: Path, *args: str) -> subprocess.CompletedProcess:
    """Hadoop's own client (FsShell, the jars the project's HDFS runs on) against ``uri``; ``conf_dir`` holds
    the (empty) core-site.xml it insists on finding."""
    conf_dir.mkdir(exist_ok=True)
    (conf_dir / "core-site.xml").write_text("<configuration/>\n")
    return subprocess.run(
        [
            *java_command(),
            "-cp",
            f"{conf_dir}:{launcher_classpath()}",
            "org.apache.hadoop.fs.FsShell",
            "-fs",
            uri,
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _start_datanode(uri: str, workdir: Path) -> subprocess.Popen:
    argv = [
        *java_command(),
        "-Xmx256m",
        "-Djava.net.preferIPv4Stack=true",
        "-cp",
        launcher_classpath(),
        "org.apache.hadoop.hdfs.server.datanode.DataNode",
        "-D",
        f"fs.defaultFS={uri}",
        "-D",
        f"dfs.datanode.data.dir={workdir / 'data'}",
        "-D",
        "dfs.datanode.address=127.0.0.1:0",
        "-D",
        "dfs.datanode.http.address=127.0.0.1:0",
        "-D",
        "dfs.datanode.ipc.address=127.0.0.1:0",
    ]
    proc = process.spawn(argv, workdir, "datanode.log")
    deadline = time.monotonic() + 60
    while "successfully registered with NN" not in (workdir / "datanode.log").read_text(errors="replace"):
        assert proc.poll() is None and time.monotonic() < deadline, (workdir / "datanode.log").read_text()[-2000:]
        time.sleep(0.3)
    return proc


@pytest.fixture
def private_hdfs(tmp_path):
    """(results home, state, the DataNode process this test may kill); everything stopped after."""
    home = tmp_path / "home"
    store = ResultStore(home)
    state = api.service_up("hdfs", store, datanodes=1)
    datanode = None
    try:
        datanode = _start_datanode(state["uri"], tmp_path / "datanode")
        yield home, state, datanode
    finally:
        if datanode is not None and datanode.poll() is None:
            datanode.kill()
            datanode.wait()
        api.service_down("hdfs", store)


def test_datanode_killed_mid_terasort_fails_the_phase_keeps_teragen_and_leaves_nothing(private_hdfs, tmp_path):
    home, state, datanode = private_hdfs
    uri = state["uri"]
    (tmp_path / "keep-me.txt").write_text("not the run's")
    assert hdfs_shell(uri, tmp_path / "conf", "-put", str(tmp_path / "keep-me.txt"), "/keep-me.txt").returncode == 0
    command = [
        sys.executable,
        "-m",
        "storbench",
        "--results",
        str(home),
        "run",
        "terasort",
        "--label",
        "dn-killed",
        "--target",
        f"{uri}/bench",
        "--scale",
        "10000000",
        "--set",
        "partition_mb=1",
        "--repeat",
        "1",
        "--replication",
        "1",
        "--json",
        "--spark-conf",
        "spark.hadoop.dfs.client.retry.window.base=200",
    ]  # the client's read retries: ms, not s
    env = {**os.environ, "PYTHONPATH": SRC, "SPARK_LOCAL_IP": "127.0.0.1", "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 180
        while not any('"teragen"' in f.read_text() for f in home.glob("runs/*/samples.jsonl")):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.1)
        os.kill(datanode.pid, signal.SIGKILL)  # teragen is stored: terasort is starting
        datanode.wait()
        stdout, stderr = proc.communicate(timeout=300)  # bounded: the client's retries end, no hang
    finally:
        if proc.poll() is None:
            proc.kill()
    outcome, run, manifest = failed_run(proc.returncode, stdout, stderr)
    assert len(manifest["errors"]) == 1, manifest["errors"]  # the phase; cleanup went through
    error = manifest["errors"][0]
    assert error["workload"] == "terasort" and error["repetition"] == 1
    # counted by kind: the HDFS exception that failed it, not py4j's "error occurred while calling"
    assert "org.apache.hadoop.hdfs.BlockMissingException: Could not obtain block" in error["error"], error
    assert "\n" not in error["error"]

    samples = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    timed = {s["workload"] for s in samples if s["metric"] == "completion_time"}
    assert timed == {"teragen"}  # teragen's samples are kept; terasort and teravalidate have none

    listing = hdfs_shell(uri, tmp_path / "conf", "-ls", "-R", "/")
    assert listing.returncode == 0, listing.stderr
    paths = [line.split()[-1] for line in listing.stdout.splitlines() if line[:1] in ("d", "-")]
    assert paths == ["/keep-me.txt"], paths  # nothing of the run, and /bench (made by the run) is gone too
