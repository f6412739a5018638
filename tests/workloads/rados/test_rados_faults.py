"""rados bench on a real single-node Ceph when things go wrong or are measured closely: an OSD stopped mid-run,
the seconds before the first completion, memstore against bluestore in compare, and an interrupted write."""

import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storbench import api
from storbench.cli import EXIT_INTERRUPTED
from storbench.results.store import ResultStore
from storbench.services import ceph as ceph_service
from tests.workloads.rados.ceph_tools import objects, one, rados_cmd, wait_clean
from tests.cli.helpers import SRC, storbench
from tests.workloads.helpers import run_json

pytestmark = pytest.mark.ceph


def test_a_stopped_osd_fails_the_run_with_its_error_instead_of_hanging(ceph, pool, tmp_path):
    home, state, _ = ceph
    workdir = Path(state["workdir"])
    command = [
        sys.executable,
        "-m",
        "storbench",
        "--results",
        str(home),
        "run",
        "rados-004",
        "--target",
        f"rados://{pool}",
        "--label",
        "osd-stopped",
        "--scale",
        "30",
        "--set",
        "op_timeout_s=10",
        "--json",
    ]
    env = {
        "PYTHONPATH": SRC,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "TMPDIR": str(tmp_path),
    }  # where the run's private scratch (mkdtemp) is made
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        seconds = _wait_for_write_seconds(tmp_path, 3, proc)
        assert ceph_service.stop_daemon(workdir, "osd.0")
        stdout, stderr = proc.communicate(timeout=180)  # bounded: op timeout + the hard timeout, not a hang
    finally:
        if proc.poll() is None:
            proc.kill()
        ceph_service.start_daemon(workdir, "osd.0")
    assert proc.returncode == 4, stderr
    outcome = json.loads(stdout)
    assert outcome["status"] == "failed"
    error = outcome["errors"][0]
    assert error["workload"] == "rados-bench-write" and error["repetition"] == 1
    # rados bench exits on the timeout, or reports it and hangs until storbench kills it: either way, said
    assert "(110) Connection timed out" in error["error"] and "is an OSD down?" in error["error"], error
    assert len(outcome["errors"]) <= 2  # the write, and maybe cleanup (the OSD was down) naming what remains
    assert all("may remain in pool" in e["error"] for e in outcome["errors"][1:])
    run = Path(outcome["path"])
    artifacts = json.loads((run / "artifacts.json").read_text())["rados"]["workloads"]["rados-bench-write"]
    series = artifacts["runs"][0]["per_second"]["iops"]
    assert len(series) >= seconds and series[-1] == 0 and artifacts["runs"][0]["returncode"] in (1, None)
    assert json.loads((run / "manifest.json").read_text())["status"] == "failed"  # the run is kept, not lost
    wait_clean(state)


def test_seconds_before_the_first_completion_are_null_and_no_stall(ceph, pool, tmp_path):
    """The OSD paused (SIGSTOP) from before the write's first operation for 2.5 s: rados bench prints 0 MB/s for
    those seconds, storbench keeps them as null (n/a) in the stored series and counts no stall for them."""
    home, state, _ = ceph
    osd = next(d for d in api.service_status("ceph", ResultStore(home))["daemons"] if d["name"] == "osd.0")
    command = [
        sys.executable,
        "-m",
        "storbench",
        "--results",
        str(home),
        "run",
        "rados-bench-write",
        "--target",
        f"rados://{pool}",
        "--label",
        "first-op-late",
        "--set",
        "duration_s=6",
        "--set",
        "threads=4",
        "--set",
        "object_size=1m",
        "--json",
    ]
    env = {
        "PYTHONPATH": SRC,
        "SPARK_LOCAL_IP": "127.0.0.1",
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "TMPDIR": str(tmp_path),
    }  # where the run's private scratch (mkdtemp) is made
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 90
        while not list(tmp_path.glob("storbench-rados-*/rados-bench-write-1.txt")):  # made just before rados starts
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.02)
        os.kill(osd["pid"], signal.SIGSTOP)
        time.sleep(2.5)
    finally:
        os.kill(osd["pid"], signal.SIGCONT)
    stdout, stderr = proc.communicate(timeout=180)
    assert proc.returncode == 0, stderr
    outcome = json.loads(stdout)
    run = Path(outcome["path"])
    write = json.loads((run / "artifacts.json").read_text())["rados"]["workloads"]["rados-bench-write"]["runs"][0]
    iops, mbps = write["per_second"]["iops"], write["per_second"]["mbps"]
    late = next(i for i, v in enumerate(iops) if v is not None)
    assert late >= 1 and iops[:late] == mbps[:late] == [None] * late, (iops, mbps)  # null, not 0
    assert all(v is not None for v in iops[late:]) and sum(iops[late:]) > 0, iops
    samples = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    measured = [v for v in iops if v is not None]
    limit = (statistics.median(measured) or statistics.fmean(measured)) / 2
    # only measured seconds can be stalls (counted as 0 IOPS, each n/a second would have been one)
    assert one(samples, "rados-bench-write", "ps_iops_stalls")["value"] == sum(v < limit for v in measured)
    assert one(samples, "rados-bench-write", "ps_iops_min")["value"] == min(measured)


def _wait_for_write_seconds(tmpdir: Path, seconds: int, proc: subprocess.Popen) -> int:
    """Until the running write has printed ``seconds`` per-second lines (its output is in the run's scratch)."""
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        for out in tmpdir.glob("storbench-rados-*/rados-bench-write-1.txt"):
            lines = [line for line in out.read_text().splitlines() if line.strip()[:1].isdigit()]
            if len(lines) > seconds:
                return seconds
        time.sleep(0.2)
    raise AssertionError("the write did not start within 90 s")


def test_compare_memstore_vs_bluestore_shows_iops_stddev_cv_and_stalls(ceph, tmp_path):
    home, state, _ = ceph
    other = ResultStore(tmp_path / "memstore-home")
    mem = api.service_up("ceph", other, objectstore="memstore", osd_gb=2)
    try:
        assert mem["objectstore"] == "memstore" and mem["conf"] != state["conf"]
        targets = (("bluestore", "rados://storbench"), ("memstore", f"rados://storbench?conf={mem['conf']}"))
        for label, target in targets:
            result, outcome, _ = run_json(home, "rados-004", "--target", target, "--label", label, "--scale", "3")
            assert result.returncode == 0 and outcome["status"] == "succeeded", (result.stderr, outcome)
    finally:
        assert api.service_down("ceph", other)
    table = storbench(home, "compare", "bluestore", "memstore")
    assert table.returncode == 0, table.stderr
    write = table.stdout.split("rados-bench-write", 1)[1]
    for text in ("Average IOPS", "Stddev IOPS", "Per-second IOPS CV", "Stalls", "memstore vs bluestore"):
        assert text in write, text
    comparison = api.compare(["bluestore", "memstore"], ResultStore(home))
    rows = {r.metric: r for r in comparison.rows if r.workload == "rados-bench-write"}
    assert rows["rados_stddev_iops"].deltas[1].words.endswith(("consistent", "no change"))


def _bench_objects(state, pool) -> set[str]:
    return {name for name in objects(state, pool) if name.startswith("benchmark_data_")}


def test_an_interrupted_write_leaves_none_of_its_objects_and_keep_data_keeps_them(ceph, pool):
    home, state, _ = ceph
    rados_cmd(state, pool, "put", "canary", "-", data=b"must survive")
    rados_cmd(state, pool, "put", "benchmark_data_otherhost_1_object0", "-", data=b"someone else's bench")
    before = objects(state, pool)
    command = [
        sys.executable,
        "-m",
        "storbench",
        "--results",
        str(home),
        "run",
        "rados-004",
        "--target",
        f"rados://{pool}",
        "--label",
        "interrupted",
        "--scale",
        "300",
        "--set",
        "object_size=1m",
        "--set",
        "threads=4",
        "--json",
    ]
    env = {"PYTHONPATH": SRC, "SPARK_LOCAL_IP": "127.0.0.1", "PATH": "/usr/local/bin:/usr/bin:/bin"}
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        deadline = time.monotonic() + 90
        while len(_bench_objects(state, pool)) < 5:  # the write is under way
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == EXIT_INTERRUPTED, stderr
    assert "may remain" not in stdout + stderr
    assert objects(state, pool) == before  # the run's objects and metadata are gone, the others stay

    result, outcome, _ = run_json(
        home,
        "rados-004",
        "--target",
        f"rados://{pool}",
        "--label",
        "kept",
        "--scale",
        "2",
        "--set",
        "object_size=64k",
        "--set",
        "threads=2",
        "--keep-data",
    )
    assert result.returncode == 0 and outcome["status"] == "succeeded", result.stderr
    write = json.loads((Path(outcome["path"]) / "artifacts.json").read_text())["rados"]["workloads"][
        "rados-bench-write"
    ]["runs"][0]
    kept = objects(state, pool) - before
    assert write["run_name"] in kept and any(name.startswith(write["prefix"] + "_object") for name in kept)
    assert all(name == write["run_name"] or name.startswith(write["prefix"] + "_object") for name in kept)
    notes = json.loads((Path(outcome["path"]) / "manifest.json").read_text())["notes"]
    assert any("--keep-data" in note and write["prefix"] in note for note in notes)
