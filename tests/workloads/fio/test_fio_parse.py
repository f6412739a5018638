"""fio's JSON from two layouts, job files, per-second logs and the engine/O_DIRECT fallback logic."""

import json
import math
import os
from pathlib import Path

import pytest

from storbench.engines import fio as engine
from storbench.engines import fio_job
from storbench.engines import fio_results as results
from storbench.errors import InputError, WorkloadError
from storbench.workloads.fio import samples_for

DATA = Path(__file__).resolve().parents[2] / "data" / "fio"
GROUPED_333 = DATA / "fio-3.33-read-4jobs-grouped.json"  # real output of the installed fio 3.33
PERJOB_333 = DATA / "fio-3.33-randwrite-2jobs-perjob-jsonplus.json"  # real, json+, no group_reporting
# Constructed in fio 3.16's layout (no "N" in the latency blocks, a "sync" block with
# percentiles, disk_util), with self-consistent values for a 60 s sequential write.
GROUPED_316 = DATA / "fio-3.16-layout-constructed-write-4jobs-grouped.json"


def by_metric(samples):
    return {s.metric: s for s in samples if "job" not in s.labels}


def test_fio_333_grouped_read_golden():
    data = json.loads(GROUPED_333.read_text())
    result = results.parse_fio_json(data)
    assert result.version == "fio-3.33" and result.grouped and len(result.jobs) == 1
    read = result.aggregate()["read"]
    raw = data["jobs"][0]["read"]
    assert set(result.aggregate()) == {"read"}
    assert read.bw_bytes == raw["bw_bytes"] > 0
    assert read.io_bytes == raw["io_bytes"]
    assert read.percentile_ms(99.9) == raw["clat_ns"]["percentile"]["99.900000"] / 1e6
    samples = by_metric(samples_for("fio-read", result, {"ioengine": "libaio", "direct": "1"}))
    assert samples["fio_bw_mbps"].value == pytest.approx(raw["bw_bytes"] / 1e6)
    assert samples["fio_iops"].value == pytest.approx(raw["iops"])
    assert samples["fio_lat_mean_ms"].value == pytest.approx(raw["lat_ns"]["mean"] / 1e6)
    assert samples["fio_clat_p50_ms"].value == pytest.approx(raw["clat_ns"]["percentile"]["50.000000"] / 1e6)
    assert samples["fio_clat_p99_ms"].value == pytest.approx(raw["clat_ns"]["percentile"]["99.000000"] / 1e6)
    assert samples["fio_runtime_s"].value == pytest.approx(raw["runtime"] / 1000)
    assert samples["fio_bw_stddev_mbps"].value is None  # no per-second series given
    assert samples["fio_bw_mbps"].labels == {"ioengine": "libaio", "direct": "1"}


def test_fio_316_layout_grouped_write_golden():
    result = results.parse_fio_json(GROUPED_316.read_text())
    assert result.version == "fio-3.16" and result.grouped
    samples = by_metric(samples_for("fio-write", result, {"ioengine": "libaio", "direct": "1"}))
    assert samples["fio_bw_mbps"].value == pytest.approx(1572.872737)
    assert samples["fio_iops"].value == pytest.approx(1500.008333, rel=1e-6)
    assert samples["fio_io_mb"].value == pytest.approx(94373.937152)
    assert samples["fio_runtime_s"].value == pytest.approx(60.001)
    assert samples["fio_lat_mean_ms"].value == pytest.approx(42.596246421754)
    assert samples["fio_clat_p50_ms"].value == pytest.approx(40.108032)
    assert samples["fio_clat_p90_ms"].value == pytest.approx(51.11808)
    assert samples["fio_clat_p99_ms"].value == pytest.approx(89.653248)
    assert samples["fio_clat_p99_9_ms"].value == pytest.approx(143.654912)
    assert not any("dir" in s.labels for s in samples.values())  # one direction: no dir label


def test_fio_333_per_job_jsonplus_merges_histograms_like_fio():
    data = json.loads(PERJOB_333.read_text())
    result = results.parse_fio_json(data)
    assert not result.grouped and len(result.jobs) == 2
    for job, raw in zip(result.jobs, data["jobs"]):
        stats = job.directions["write"]
        # fio's own percentiles per job are what our bin rule gives on that job's bins
        ours = results.percentiles_from_bins(stats.clat_bins, [50.0, 90.0, 99.0, 99.9])
        for key, value in ours.items():
            assert value == raw["write"]["clat_ns"]["percentile"][f"{key:.6f}"]
    merged = result.aggregate()["write"]
    assert merged.bw_bytes == sum(j["write"]["bw_bytes"] for j in data["jobs"])
    assert merged.total_ios == sum(j["write"]["total_ios"] for j in data["jobs"])
    assert (
        min(j.directions["write"].percentile_ms(99.0) for j in result.jobs)
        <= merged.percentile_ms(99.0)
        <= max(j.directions["write"].percentile_ms(99.0) for j in result.jobs)
    )
    samples = samples_for("fio-randwrite", result, {"ioengine": "libaio", "direct": "1"})
    per_job = [s for s in samples if s.metric == "fio_bw_mbps" and "job" in s.labels]
    assert sorted(s.labels["job"] for s in per_job) == ["0", "1"]
    total = by_metric(samples)["fio_bw_mbps"].value
    assert total == pytest.approx(sum(s.value for s in per_job))


def test_notice_lines_before_json_are_skipped():
    text = "note: both iodepth >= 1 and synchronous I/O engine are selected\n" + GROUPED_333.read_text() + "\nbye\n"
    assert engine.load_json(text)["fio version"] == "fio-3.33"
    with pytest.raises(ValueError):
        engine.load_json("fio: no json here")


def test_job_text_paper_002_and_device():
    spec = fio_job.JobSpec(
        name="fio-write",
        rw="write",
        bs="512m",
        size="16g",
        numjobs=4,
        iodepth=16,
        ioengine="libaio",
        direct=True,
        runtime_s=300,
        ramp_time_s=5,
        directory="/data/a:b",
        log_prefix="/data/logs/fio-write",
    )
    text = fio_job.job_text(spec)
    for line in (
        "ioengine=libaio",
        "direct=1",
        "bs=512m",
        "numjobs=4",
        "iodepth=16",
        "group_reporting=1",
        "runtime=300",
        "ramp_time=5",
        "time_based=1",
        "directory=/data/a\\:b",
        "log_avg_msec=1000",
        "[fio-write]",
        "rw=write",
    ):
        assert line in text.splitlines()
    device = fio_job.job_text(
        fio_job.JobSpec(
            name="fio-read",
            rw="read",
            bs="1m",
            size="8m",
            numjobs=2,
            filename="/dev/loop7",
            create_only=True,
            log_prefix="/x/y",
        )
    )
    assert "filename=/dev/loop7" in device and "offset_increment=8m" in device
    assert "create_only=1" in device and "write_bw_log" not in device and "time_based" not in device


def test_per_second_series_sums_jobs_and_drops_partial_seconds(tmp_path):
    (tmp_path / "w_bw.1.log").write_text("1002, 1000000, 1, 0, 0\n2003, 1100000, 1, 0, 0\n")
    (tmp_path / "w_bw.2.log").write_text("999, 500000, 1, 0, 0\n2000, 400000, 1, 0, 0\n3000, 450000, 1, 0, 0\n")
    (tmp_path / "w_iops.1.log").write_text("1000, 10, 0, 4096, 0\n2000, 12, 0, 4096, 0\n")
    series = results.read_log_series(str(tmp_path / "w"), "bw")
    assert series == {"write": [pytest.approx(1500000 * 1024 / 1e6), pytest.approx(1500000 * 1024 / 1e6)]}
    assert results.read_log_series(str(tmp_path / "w"), "iops") == {"read": [10.0, 12.0]}
    assert results.stddev([1.0]) is None and math.isclose(results.stddev([1.0, 3.0]), math.sqrt(2))


def test_fallback_engine_chain_with_a_failing_probe():
    calls = []

    def probe(name, direct, location, is_device):
        calls.append((name, direct))
        if name == "io_uring":
            return False, "io_uring_queue_init: Operation not permitted (simulated)"
        return True, ""

    choice = engine.resolve_io("io_uring", True, "/somewhere", probe=probe)
    assert (choice.engine, choice.direct) == ("libaio", True)
    assert choice.labels() == {"ioengine": "libaio", "direct": "1", "fallback": "ioengine io_uring->libaio"}
    assert "simulated" in choice.reasons[0]
    assert calls == [("io_uring", True), ("io_uring", False), ("libaio", True)]


def test_fallback_direct_only_when_buffered_works():
    def probe(name, direct, location, is_device):
        return (not direct), ("" if not direct else "destination does not support O_DIRECT")

    choice = engine.resolve_io("libaio", True, "/mnt/ramfs", probe=probe)
    assert (choice.engine, choice.direct, choice.fallback) == ("libaio", False, "direct 1->0")
    assert "O_DIRECT" in choice.reasons[0]
    untouched = engine.resolve_io("psync", False, "/x", probe=lambda *a: (True, ""))
    assert untouched.labels() == {"ioengine": "psync", "direct": "0"} and not untouched.reasons


def test_no_engine_at_all_is_one_clear_error():
    with pytest.raises(WorkloadError, match=r"no fio I/O engine works on /x: libaio: nope; psync: nope"):
        engine.resolve_io("libaio", False, "/x", probe=lambda *a: (False, "nope"))
    with pytest.raises(InputError, match="ioengine='spdk' is not allowed"):
        engine.resolve_io("spdk", True, "/x", probe=lambda *a: (True, ""))


@pytest.mark.real
def test_real_probe_reports_fio_reason_for_an_engine_it_cannot_load(tmp_path):
    works, why = engine._probe_uncached("storbench-no-such-engine", False, str(tmp_path), False)
    assert not works and "not loadable" in why
    assert engine.probe_fio("psync", False, str(tmp_path), False) == (True, "")
    assert not list(tmp_path.iterdir())  # the probe file is removed


@pytest.mark.real
def test_real_probe_of_o_direct_matches_the_kernel(tmp_path):
    """/dev/shm (tmpfs) refuses O_DIRECT before Linux 6.6 and accepts it since; the probe says the same."""
    shm = Path("/dev/shm")
    if not shm.is_dir():
        pytest.skip("no /dev/shm")
    try:
        fd = os.open(shm / f"storbench-odirect-{os.getpid()}", os.O_CREAT | os.O_WRONLY | os.O_DIRECT)
        os.close(fd)
        kernel_accepts = True
    except OSError:
        kernel_accepts = False
    finally:
        Path(shm / f"storbench-odirect-{os.getpid()}").unlink(missing_ok=True)
    works, _ = engine._probe_uncached("psync", True, str(shm), False)
    assert works == kernel_accepts
