"""Fault test (issue 12) on a real SeaweedFS: the server killed (SIGKILL, by PID) mid-`objects-put`.

The server is this test's own (the session one serves the other tests): started through the service, killed
mid-run, then started again on the same data directory, ports and credentials to see what the run left."""

import json
import os
import signal
import subprocess
import sys
import time
from itertools import islice
from pathlib import Path

import pytest

from storbench import api
from storbench.results.store import ResultStore
from storbench.s3client import S3Client, S3Error
from storbench.services import process
from tests.workloads.helpers import failed_run
from tests.cli.helpers import SRC

pytestmark = pytest.mark.s3


@pytest.fixture
def private_s3(tmp_path):
    """(results home, state) of a one-off SeaweedFS on free ports; stopped (and a restarted one too) after."""
    home = tmp_path / "home"
    store = ResultStore(home)
    state = api.service_up("s3", store)
    state["restarted"] = []
    try:
        yield home, state
    finally:
        for pid in state["restarted"]:
            process.stop_pid(pid, state["marker"], timeout=2.0)
        api.service_down("s3", store)
        ports = [str(port) for port in state["ports"].values()]  # nothing of this server left in /tmp
        assert not [p for p in Path("/tmp").glob("seaweedfs-*.sock") if p.stem.rsplit("-", 1)[-1] in ports]


def _restart(state: dict, argv: list[str]) -> S3Client:
    """The killed S3 gateway again, same argv (ports, credentials; its cwd holds security.toml); its stale
    socket goes first."""
    (Path(state["socket_dir"]) / "s3.sock").unlink(missing_ok=True)
    proc = process.spawn(
        argv, Path(state["workdir"]), "restarted.log", env={"TMPDIR": str(Path(state["workdir"]) / "tmp")}
    )
    state["restarted"].append(proc.pid)
    client = S3Client(state["s3_endpoint"], state["access_key"], state["secret_key"], timeout=5)
    deadline = time.monotonic() + 60
    while True:  # back once it lists and serves reads again (its volumes load after it answers LIST)
        assert proc.poll() is None, Path(state["workdir"], "restarted.log").read_text()[-2000:]
        try:
            list(client.list(state["bucket"], ""))
            if client.get(state["bucket"], "bench/keep-me.txt") == b"not the run's":
                return client
        except (OSError, S3Error):
            pass
        assert time.monotonic() < deadline, "the restarted server did not serve reads in 60 s"
        time.sleep(0.3)


def test_s3_server_killed_mid_put_fails_the_phase_keeps_samples_and_names_what_is_left(private_s3, tmp_path):
    home, state = private_s3
    argv = Path(f"/proc/{state['pid']}/cmdline").read_bytes().decode().split("\0")[:-1]
    client = S3Client(state["s3_endpoint"], state["access_key"], state["secret_key"], timeout=5)
    client.put(state["bucket"], "bench/keep-me.txt", b"not the run's")
    command = [
        sys.executable,
        "-m",
        "storbench",
        "--results",
        str(home),
        "run",
        "objects-basic",
        "--target",
        "s3://storbench/bench",
        "--label",
        "s3-killed",
        "--set",
        "size=4k",
        "--set",
        "duration_s=0",
        "--set",
        "ops=200000",
        "--set",
        "objects=200000",
        "--set",
        "concurrency=4",
        "--json",
    ]
    env = {**os.environ, "PYTHONPATH": SRC, "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 90
        while True:  # the put is under way: some of its objects are stored
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            keys = (k for k in client.list(state["bucket"], "bench/storbench-") if "/objects/" in k)
            if len(list(islice(keys, 50))) >= 50:
                break
            time.sleep(0.1)
        os.kill(state["pid"], signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=240)  # bounded: the run ends, it does not hang
    finally:
        if proc.poll() is None:
            proc.kill()
    outcome, run, manifest = failed_run(proc.returncode, stdout, stderr)
    put_error, *cleanup_errors = manifest["errors"]
    assert put_error["workload"] == "objects-put" and put_error["repetition"] == 1
    assert "operations failed (connect " in put_error["error"] and "\n" not in put_error["error"]

    samples = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    put = {(s["metric"], s["labels"].get("error")): s["value"] for s in samples if s["workload"] == "objects-put"}
    assert put[("obj_ops", None)] >= 50  # what finished before the kill is kept
    assert put[("obj_errors", "connect")] > 0  # errors counted by kind
    assert put[("obj_errors", None)] == sum(v for (m, kind), v in put.items() if m == "obj_errors" and kind)
    assert put[("obj_errors", None)] + put[("obj_ops", None)] <= 200000
    assert not [s for s in samples if s["workload"] in ("objects-get", "objects-mixed")]  # the run stopped there
    phase = json.loads((run / "artifacts.json").read_text())["objects"]["workloads"]["objects-put"][0]["result"]
    assert phase["errors"]["connect"]["count"] == put[("obj_errors", "connect")]

    # The dead server could not be cleaned: the run says, in one line, which prefix it left, and only that.
    root = manifest["config"]["run_root"]
    assert root == f"s3://storbench/bench/storbench-{outcome['run_id']}"
    assert [e["workload"] for e in cleanup_errors] == ["cleanup"]
    assert cleanup_errors[0]["error"].startswith(
        f"could not remove {root} (later: storbench cleanup {outcome['run_id']}): "
    )
    assert "\n" not in cleanup_errors[0]["error"]
    client = _restart(state, argv)
    left = list(client.list(state["bucket"], ""))
    prefix = root.removeprefix("s3://storbench/") + "/"
    assert "bench/keep-me.txt" in left
    assert all(k == "bench/keep-me.txt" or k.startswith(prefix) for k in left), left

    # Once the server is back, the run's leftovers go with one command, and only they.
    env = {**env, "AWS_ACCESS_KEY_ID": state["access_key"], "AWS_SECRET_ACCESS_KEY": state["secret_key"]}
    deadline = time.monotonic() + 60
    while True:  # as the line says: a server still loading its volumes answers 500 for a while, try again
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "storbench",
                "--results",
                str(home),
                "cleanup",
                outcome["run_id"],
                "--endpoint",
                state["s3_endpoint"],
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        if (
            done.returncode == 0
            or "try again when the target answers" not in done.stderr
            or time.monotonic() > deadline
        ):
            break
        time.sleep(1)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"removed {root}"
    assert list(client.list(state["bucket"], "")) == ["bench/keep-me.txt"]
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "storbench",
            "--results",
            str(home),
            "cleanup",
            outcome["run_id"],
            "--endpoint",
            state["s3_endpoint"],
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert again.returncode == 0 and again.stderr == ""  # the run had finished: nothing left, nothing to do
    assert again.stdout == (
        f"run {outcome['run_id']}: {outcome['status']}, nothing of it left on its target: nothing to do\n"
    )
