"""fio-write through the run core against a stand-in fio engine (tests/engines/fake_tool.py): no fio binary runs;
the workload's job, its samples and the run's records are checked from the canned output the stand-in wrote."""

import json
import statistics

import pytest

from storbench.engines.tool import stand_in
from storbench.progress import Progress
from storbench.results.store import ResultStore
from storbench.run import RunOptions, run
from tests.engines.fake_tool import CANNED, PER_SECOND, FakeFio


@pytest.fixture
def fake_fio(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))  # a fio on PATH could not be found, let alone run
    FakeFio.specs.clear()
    with stand_in(FakeFio):
        yield FakeFio


def test_fio_write_runs_end_to_end_on_the_fake_engine(tmp_path, fake_fio):
    options = RunOptions(
        suite="fio-write",
        target=str(tmp_path / "t"),
        overrides={"bs": "4k", "numjobs": "4", "iodepth": "8", "size": "1m", "direct": "false"},
    )
    outcome = run(options, ResultStore(tmp_path / "home"), Progress(quiet=True))
    assert outcome.status == "succeeded", outcome.errors

    layout, timed = fake_fio.specs  # the untimed layout, then the measured run, as the user set them
    assert layout.job.create_only and not timed.job.create_only
    job = timed.job
    assert (job.name, job.rw, job.bs, job.size, job.numjobs, job.iodepth) == ("fio-write", "write", "4k", "1m", 4, 8)
    assert (job.ioengine, job.direct) == ("libaio", False)
    assert job.directory.startswith(f"{tmp_path / 't'}/storbench-")  # the run-owned directory on the target
    assert timed.output == "fio-write-1.json" and timed.timeout_s is None  # the limit is the job's own

    samples = [json.loads(line) for line in (outcome.path / "samples.jsonl").read_text().splitlines()]
    fio = {s["metric"]: s for s in samples if s["metric"].startswith("fio_")}
    raw = json.loads(CANNED.read_text())["jobs"][0]["write"]
    assert fio["fio_bw_mbps"]["value"] == pytest.approx(raw["bw_bytes"] / 1e6)
    assert fio["fio_iops"]["value"] == pytest.approx(raw["iops"])
    assert fio["fio_bw_mbps"]["labels"] == {"ioengine": "libaio", "direct": "0"}
    # the per-second logs it wrote for 4 jobs, summed per second by the real log reader
    iops = [4 * value for _, value in PER_SECOND]
    assert fio["fio_iops_stddev"]["value"] == pytest.approx(statistics.stdev(iops))
    bandwidth = [4 * kib * 1024 / 1e6 for kib, _ in PER_SECOND]
    assert fio["fio_bw_stddev_mbps"]["value"] == pytest.approx(statistics.stdev(bandwidth))

    manifest = json.loads((outcome.path / "manifest.json").read_text())
    assert manifest["software"]["fio"] == "fio-3.16 (fake)"
    kept = json.loads((outcome.path / "artifacts.json").read_text())["fio"]
    assert kept["version"] == "fio-3.16 (fake)"
    assert "bs=4k" in kept["workloads"]["fio-write"]["job_file"].splitlines()
    assert kept["workloads"]["fio-write"]["runs"][0]["per_second"]["iops"] == {"write": iops}
