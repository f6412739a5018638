"""fio workloads for real, through the real CLI (and the runner in-process where a probe is faked)."""

import json
import re
import os
import socket
import statistics
import subprocess
from pathlib import Path

import pytest

from storbench.engines import fio as engine
from storbench.engines.tool import stand_in
from storbench.progress import Progress
from storbench.results.store import ResultStore
from storbench.run import RunOptions, run
from storbench.suites import load_suite
from tests.cli.helpers import storbench
from tests.workloads.helpers import fio_sample, run_json

pytestmark = pytest.mark.real  # the CLI as a child process, fio

FIO_WORKLOADS = ("fio-write", "fio-read", "fio-randwrite", "fio-randread")


def test_fio_basic_runs_and_parses(tmp_path):
    target = tmp_path / "target"
    result, outcome, samples = run_json(
        tmp_path / "home", "fio-basic", "--target", str(target), "--set", "runtime_s=1", "--set", "size=16m"
    )
    assert result.returncode == 0, result.stderr
    assert outcome["status"] == "succeeded"
    for name in FIO_WORKLOADS:
        for metric in (
            "fio_bw_mbps",
            "fio_iops",
            "fio_io_mb",
            "fio_lat_mean_ms",
            "fio_clat_p50_ms",
            "fio_clat_p99_ms",
            "fio_clat_p99_9_ms",
        ):
            sample = fio_sample(samples, name, metric)
            assert sample["value"] > 0, (name, metric)
            assert sample["labels"] == {"ioengine": "libaio", "direct": "1"}
        assert any(s["workload"] == name and s["metric"] == "completion_time" for s in samples)
    run_dir = Path(outcome["path"])
    artifacts = json.loads((run_dir / "artifacts.json").read_text())["fio"]
    assert artifacts["version"].startswith("fio-3.")
    job = artifacts["workloads"]["fio-randread"]["job_file"]
    assert "rw=randread" in job and "bs=4k" in job and "ioengine=libaio" in job and "runtime=1" in job
    assert artifacts["workloads"]["fio-read"]["runs"][0]["fio_json"]["jobs"][0]["read"]["io_bytes"] > 0
    assert not target.exists()  # the run root is gone, and the directory made for it (issue 12 item 8)


def test_fio_002_tiny_scale_as_shipped(tmp_path):
    """Paper 002's job shape at the tiny scale: 4 jobs, iodepth 16, time based, group reporting."""
    result, outcome, samples = run_json(tmp_path / "home", "fio-002", "--target", str(tmp_path / "t"))
    assert result.returncode == 0, result.stderr
    artifacts = json.loads((Path(outcome["path"]) / "artifacts.json").read_text())["fio"]
    for name, direction in (("fio-write", "write"), ("fio-read", "read")):
        assert fio_sample(samples, name, "fio_bw_mbps")["value"] > 0
        spread = fio_sample(samples, name, "fio_bw_stddev_mbps")
        series = artifacts["workloads"][name]["runs"][0]["per_second"]["bw_mbps"][direction]
        assert spread["value"] == pytest.approx(statistics.stdev(series))  # 5 s: the recorded per-second series'
    write = artifacts["workloads"]["fio-write"]
    for line in (
        "numjobs=4",
        "iodepth=16",
        "direct=1",
        "ioengine=libaio",
        "group_reporting=1",
        "time_based=1",
        "ramp_time=1",
        "runtime=5",
    ):
        assert line in write["job_file"].splitlines()
    assert len(write["runs"][0]["per_second"]["bw_mbps"]["write"]) >= 3


def test_scale_number_sets_the_per_job_size_in_bytes(tmp_path):
    _, _, per = load_suite("fio-basic").resolve("1G", {})
    assert {params["size"] for params in per.values()} == {"1000000000"}
    _, _, per = load_suite("fio-002").resolve("paper", {})
    assert per["fio-write"]["bs"] == "512m" and per["fio-write"]["runtime_s"] == 300
    result, outcome, samples = run_json(
        tmp_path / "home", "fio-basic", "--scale", "16M", "--target", str(tmp_path / "t"), "--set", "runtime_s=1"
    )
    assert result.returncode == 0, result.stderr
    manifest = json.loads((Path(outcome["path"]) / "manifest.json").read_text())
    assert manifest["scale"] == "16000000"
    assert manifest["workload_parameters"]["fio-read"]["size"] == "16000000"
    assert fio_sample(samples, "fio-read", "fio_bw_mbps")["value"] > 0


def test_per_job_samples_without_group_reporting(tmp_path):
    suite = tmp_path / "perjob.yaml"
    suite.write_text(
        "name: perjob\nparams: {numjobs: 2, size: 8m, runtime_s: 1, group_reporting: false}\n"
        "workloads:\n  - {workload: fio-randwrite, params: {bs: 4k}}\n"
    )
    result, _, samples = run_json(tmp_path / "home", str(suite), "--target", str(tmp_path / "t"))
    assert result.returncode == 0, result.stderr
    per_job = [s for s in samples if s["metric"] == "fio_bw_mbps" and "job" in s["labels"]]
    assert sorted(s["labels"]["job"] for s in per_job) == ["0", "1"]
    total = fio_sample(samples, "fio-randwrite", "fio_bw_mbps")["value"]
    assert total == pytest.approx(sum(s["value"] for s in per_job))
    assert fio_sample(samples, "fio-randwrite", "fio_clat_p99_ms")["value"] > 0  # from merged histograms


@pytest.fixture
def listening_port():
    """Something that answers on a port, so an hdfs:// target passes the reachability check."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    try:
        yield server.getsockname()[1]
    finally:
        server.close()


@pytest.mark.parametrize(
    "args,message",
    [
        (["--set", "ioengine=posixaio"], "--set: ioengine='posixaio' is not allowed; allowed: io_uring, libaio, psync"),
        (["--set", "bs=12q"], "--set: bs='12q' is not a fio size"),
        (["--set", "size=lots"], "--set: size='lots' is not a fio size"),
        (["--set", "numjobs=-1"], "numjobs"),
        (["--set", "numjobs=0"], "--set: numjobs=0 is below the minimum 1"),
        (["--set", "iodepth=0"], "--set: iodepth=0 is below the minimum 1"),
        (["--set", "bs=1000"], "bs=1000 is not a multiple of 512 bytes, which direct=1 needs"),
        (["--set", "bs=1m", "--set", "size=4k"], "size=4k per job is smaller than bs=1m"),
        (["--set", "bs=1g", "--set", "size=1g", "--set", "iodepth=100000"], "of I/O buffers, but only"),
        (["--set", "runtime_s=-5"], "runtime_s"),
        (["--set", "direct=maybe"], "--set: direct='maybe' must be true or false"),
    ],
)
def test_bad_fio_input_is_one_line(tmp_path, args, message):
    home = tmp_path / "home"
    result = storbench(home, "run", "fio-basic", "--target", str(tmp_path / "t"), *args, timeout=120)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("storbench: error: "), result.stderr
    assert message in lines[0]
    assert not (home / "runs").exists() or not any((home / "runs").iterdir())
    assert not (tmp_path / "t").exists() or not any((tmp_path / "t").iterdir())  # nothing left on the target


def test_hdfs_target_is_refused_by_fio(tmp_path, listening_port):
    result = storbench(
        tmp_path / "home", "run", "fio-basic", "--target", f"hdfs://127.0.0.1:{listening_port}/bench", timeout=120
    )
    assert result.returncode == 2, result.stderr
    last = result.stderr.strip().splitlines()[-1]  # (a warning that a remote target has no local device comes first)
    # the families that take hdfs:// come from the registry (a new Spark family joins the list)
    assert re.fullmatch(
        rf"storbench: error: workload fio-write cannot use the hdfs:// target "
        rf"hdfs://127\.0\.0\.1:{listening_port}/bench; only the dfsio, (\S+, )*terasort and tpcds "
        rf"workloads can \(fio-write needs a directory on a filesystem or a raw device /dev/NAME\)",
        last,
    ), last
    assert "spark-transforms, " in last


class _NoIoUring(engine.FioEngine):
    """The real fio engine, except that its probe finds io_uring unavailable."""

    def probe(self, name, direct, location, is_device):
        if name == "io_uring":
            return False, "io_uring_queue_init failed: Operation not permitted (simulated)"
        return super().probe(name, direct, location, is_device)


def test_engine_fallback_is_recorded(tmp_path):
    """io_uring made unavailable (its probe fails): libaio runs, and every sample says so."""
    store = ResultStore(tmp_path / "home")
    options = RunOptions(
        suite="fio-basic",
        target=str(tmp_path / "t"),
        overrides={"ioengine": "io_uring", "runtime_s": "1", "size": "8m"},
    )
    with stand_in(_NoIoUring):
        outcome = run(options, store, Progress(quiet=True))
    assert outcome.status == "succeeded", outcome.errors
    samples = [json.loads(line) for line in (outcome.path / "samples.jsonl").read_text().splitlines()]
    fio_samples = [s for s in samples if s["metric"].startswith("fio_")]
    assert fio_samples and all(
        s["labels"]["ioengine"] == "libaio"
        and s["labels"]["direct"] == "1"
        and s["labels"]["fallback"] == "ioengine io_uring->libaio"
        for s in fio_samples
    )
    manifest = json.loads((outcome.path / "manifest.json").read_text())
    assert any("ioengine io_uring is unavailable" in note and "simulated" in note for note in manifest["notes"])
    artifacts = json.loads((outcome.path / "artifacts.json").read_text())["fio"]["workloads"]
    assert artifacts["fio-write"]["io"]["effective"] == {"ioengine": "libaio", "direct": 1}
    assert "; fallback: ioengine io_uring->libaio" in artifacts["fio-write"]["job_file"]
    assert "ioengine=libaio" in artifacts["fio-write"]["job_file"].splitlines()


def test_dev_shm_run_records_what_the_kernel_did(tmp_path):
    """On /dev/shm: direct=1 where tmpfs takes O_DIRECT (Linux >= 6.6), else buffered with the fallback labelled."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or not os.access(shm, os.W_OK):
        pytest.skip("no writable /dev/shm")
    target = shm / f"storbench-test-{os.getpid()}"
    try:
        result, outcome, samples = run_json(
            tmp_path / "home", "fio-basic", "--target", str(target), "--set", "runtime_s=1", "--set", "size=8m"
        )
        assert result.returncode == 0, result.stderr
        works, _ = engine._probe_uncached("libaio", True, str(shm), False)
        labels = fio_sample(samples, "fio-read", "fio_bw_mbps")["labels"]
        if works:
            assert labels == {"ioengine": "libaio", "direct": "1"}
        else:
            assert labels == {"ioengine": "libaio", "direct": "0", "fallback": "direct 1->0"}
            assert "direct=1 is refused" in result.stderr
    finally:
        subprocess.run(["rm", "-rf", str(target)], check=False)


@pytest.fixture
def ramfs(tmp_path):
    """A filesystem that refuses O_DIRECT whatever the kernel version (root only)."""
    if os.geteuid() != 0:
        pytest.skip("mounting ramfs needs root")
    mount = tmp_path / "ramfs"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "ramfs", "ramfs", str(mount)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount ramfs here")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def test_direct_falls_back_to_buffered_where_o_direct_is_refused(ramfs):
    """Through the workload lifecycle (ramfs reports no free space, so the CLI's capacity check refuses it)."""
    from storbench.context import RunContext
    from storbench.targets import parse_target
    from storbench.workloads import get_workload

    target = parse_target(str(ramfs))
    root = target.claim("t1")
    ctx = RunContext(run_id="t1", target=target, root_uri=str(root), engines={"fio": engine.FioEngine()})
    _, _, per = load_suite("fio-basic").resolve("tiny", {"runtime_s": "1", "size": "8m"})
    workload = get_workload("fio-read")
    params = per["fio-read"]
    try:
        workload.check(ctx, params)
        workload.prepare(ctx, params)
        samples = workload.run(ctx, params)
    finally:
        target.release()
    bw = next(s for s in samples if s.metric == "fio_bw_mbps")
    assert bw.value > 0
    assert bw.labels == {"ioengine": "libaio", "direct": "0", "fallback": "direct 1->0"}
    assert ctx.notes == [
        f"fio-read: direct=1 is refused on {ramfs}/storbench-t1 (looks like your file system "
        f"does not support direct=1/buffered=0; destination does not support O_DIRECT); "
        f"using buffered I/O (direct=0)"
    ]
    assert "direct=0" in ctx.artifacts["fio"]["workloads"]["fio-read"]["job_file"].splitlines()


def test_fio_run_leaves_nothing_in_the_temp_dir(tmp_path, monkeypatch):
    """Issue 12 item 11: a whole fio run keeps its scratch private and removes it."""
    private_tmp = tmp_path / "tmpdir"
    private_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(private_tmp))
    result, outcome, _ = run_json(
        tmp_path / "home", "fio-basic", "--target", str(tmp_path / "target"), "--set", "runtime_s=1", "--set", "size=8m"
    )
    assert result.returncode == 0, result.stderr
    assert outcome["status"] == "succeeded"
    assert list(private_tmp.iterdir()) == []
