"""Golden files: real `rados bench` output of Ceph 16.2.15 (tests/data/ceph/), parsed and checked against
the summary rados itself printed. No cluster needed."""

from pathlib import Path

import pytest

from storbench.results.consistency import consistency
from storbench.engines.rados import Cluster
from storbench.engines.rados_output import MIB_TO_MB, first_error, parse_bench
from storbench.errors import TargetError
from storbench.workloads.rados_bench import owned
from storbench.workloads.rados_bench.fio import fio_rados_job

DATA = Path(__file__).resolve().parents[2] / "data" / "ceph"


def golden(name: str):
    path = DATA / name
    stderr = path.with_suffix(".stderr")
    return parse_bench(path.read_text(), stderr.read_text() if stderr.exists() else "")


def test_write_4m_16_threads():
    out = golden("rados-16.2.15-write-4m-t16-5s.txt")
    assert (out.prefix, out.concurrency, out.op_size, out.object_size) == (
        "benchmark_data_vm_13116",
        16,
        4194304,
        4194304,
    )
    assert out.complete and not out.errors
    assert out.iops_series() == [115, 160, 124, 119, 112]  # differences of the finished column
    assert out.mbps_series()[1] == pytest.approx(640 * MIB_TO_MB)  # cur MB/s is MiB/s
    s = out.summary
    assert (s["ops"], s["avg_iops"], s["max_iops"], s["min_iops"]) == (646, 126, 160, 112)
    assert s["bw_mibps"] == 506.393 and s["stddev_iops"] == 19.532 and s["avg_lat_s"] == 0.125387
    assert s["time_s"] == 5.10276 and s["max_lat_s"] == 0.411302
    assert consistency(out.iops_series()).stddev == pytest.approx(s["stddev_iops"], abs=1e-3)


@pytest.mark.parametrize(
    "name, series, stddev",
    [
        ("rados-16.2.15-seq-t16.txt", [192, 249], 40.3051),
        ("rados-16.2.15-rand-t16-5s.txt", [211, 249, 286, 271, 298], 34.3438),
    ],
)
def test_reads(name, series, stddev):
    out = golden(name)
    assert out.prefix is None and out.complete  # reads print no prefix
    assert out.iops_series() == series
    assert out.summary["stddev_iops"] == stddev
    assert consistency(series).stddev == pytest.approx(stddev, abs=1e-3)


def test_long_write_skips_repeated_headers_and_timestamp_lines():
    out = golden("rados-16.2.15-write-64k-t16-22s.txt")
    assert [line.sec for line in out.seconds] == list(range(0, 22))
    series = out.iops_series()
    assert len(series) == 21 and sum(series) == out.seconds[-1].finished
    assert out.summary["ops"] == 46289 and out.summary["stddev_iops"] == 640.09
    figures = consistency(series)
    assert figures.stddev == pytest.approx(640.09, abs=0.01)  # rados's own figure over the same seconds
    assert figures.stalls == 2  # two seconds under half the median (1,027 and 1,056 IOPS; median 2,157)


def test_osd_stopped_mid_write_is_an_incomplete_run_with_its_error():
    out = golden("rados-16.2.15-write-osd-stopped.stdout")
    assert not out.complete and out.summary == {}
    assert out.errors[0] == "error during benchmark: (110) Connection timed out"
    series = out.iops_series()
    assert series[:4] == [89, 131, 96, 85] and series[4:] == [0] * 9
    assert consistency(series).stalls == 9  # median 0: half the mean is the reference
    assert out.seconds[5].last_lat_s is None  # "-": nothing finished that second
    assert (
        first_error(golden("rados-16.2.15-write-osd-stopped.stdout").errors[0])
        == "error during benchmark: (110) Connection timed out"
    )


def test_seconds_before_the_first_completion_are_na_not_stalls():
    # the OSD stopped (SIGSTOP) from 0.4 s to 3.0 s after the write began: seconds 1 and 2 finished nothing yet,
    # and rados printed 0 as their current MB/s and average latency
    out = golden("rados-16.2.15-write-osd-paused-first-2s.txt")
    assert out.complete and not out.errors
    assert out.iops_series() == [None, None, 18, 56, 49, 45]  # n/a kept in place: the time axis stays whole
    mbps = out.mbps_series()
    assert mbps[:2] == [None, None] and mbps[3] == pytest.approx(224 * MIB_TO_MB)
    first = out.seconds[1]
    assert (first.finished, first.cur_mibps, first.avg_lat_s, first.last_lat_s) == (0, None, None, None)
    assert out.seconds[3].avg_lat_s == 2.4982  # from the first completion on, figures are figures
    figures = consistency(out.iops_series())
    assert figures.n == 4 and figures.min == 18
    assert figures.stalls == 1  # second 3's 18 operations (under half the median, 47); never the n/a seconds
    # rados's own Stddev IOPS counts the two seconds as 0 IOPS (and averages second 3 over three): not ours
    assert out.summary["stddev_iops"] == 26.6158 and figures.stddev == pytest.approx(16.6333, abs=1e-4)


def test_a_zero_second_after_the_first_completion_is_a_stall_not_na():
    out = golden("rados-16.2.15-write-osd-stopped.stdout")
    assert out.iops_series()[4:] == [0] * 9 and out.mbps_series()[4:] == [0] * 9  # real zeros, not None
    assert consistency(out.mbps_series()).stalls == 9


def test_a_cut_off_stalled_write_keeps_every_second():
    out = golden("rados-16.2.15-write-stalled-cut.txt")  # a full cluster: writes stopped, then killed
    assert not out.complete
    series = out.iops_series()
    assert len(series) == 38 and series.count(0) == 25
    assert consistency(series).stalls == 25


def test_cleanup_matches_only_the_runs_own_objects():
    write = {"run_name": "storbench-r1-w1", "driver": "rados", "prefix": "benchmark_data_vm_13116", "objects": 646}
    assert owned(write, "storbench-r1-w1")
    assert owned(write, "benchmark_data_vm_13116_object0") and owned(write, "benchmark_data_vm_13116_object645")
    assert not owned(write, "benchmark_data_vm_13116_object646")  # beyond what a finished write made
    assert not owned(write, "benchmark_data_vm_131160_object1")  # another pid with the same digits
    assert not owned(write, "canary") and not owned(write, "storbench-r1-w10")
    cut = {**write, "objects": None}
    assert owned(cut, "benchmark_data_vm_13116_object9999")  # a cut-off write: bounded by the listing
    none = {**write, "prefix": None, "objects": None}
    assert not owned(none, "benchmark_data_vm_13116_object0")
    fio = {"run_name": "storbench-r1-w2", "driver": "fio"}
    assert owned(fio, "storbench-r1-w2.0.17") and not owned(fio, "storbench-r1-w2.0.17.x")
    assert not owned(fio, "storbench-r1-w21.0.1")


def test_fio_rados_job_names_objects_after_the_run():
    text = fio_rados_job(
        "rados-bench-write",
        "write",
        Cluster("/x/ceph.conf", "p1"),
        "storbench-r1-w1",
        8,
        4 << 20,
        4 << 20,
        16,
        5,
        "/tmp/logs/w",
    )
    lines = text.splitlines()
    for line in (
        "ioengine=rados",
        "pool=p1",
        "conf=/x/ceph.conf",
        "nrfiles=8",
        f"size={8 * (4 << 20)}",
        "iodepth=16",
        "runtime=5",
        "filename_format=storbench-r1-w1.$jobnum.$filenum",
        "rw=write",
    ):
        assert line in lines, line


@pytest.mark.real
def test_listing_keeps_only_the_wanted_names_and_a_stalled_one_is_cut_off(tmp_path, monkeypatch):
    fake = tmp_path / "rados"  # stands in for `rados ls`: a few names, then (with STALL) no end
    fake.write_text(
        "#!/bin/sh\nprintf 'canary\\nbenchmark_data_vm_7_object0\\nbenchmark_data_vm_7_object1\\n'\n"
        '[ -n "$STALL" ] && exec sleep 30\nexit 0\n'
    )
    fake.chmod(0o755)
    monkeypatch.setattr("storbench.engines.rados.rados_binary", lambda: str(fake))
    cluster = Cluster("/x/ceph.conf", "p1")
    assert cluster.list_objects(lambda name: name.startswith("benchmark_data_vm_7_")) == [
        "benchmark_data_vm_7_object0",
        "benchmark_data_vm_7_object1",
    ]
    monkeypatch.setenv("STALL", "1")
    with pytest.raises(TargetError, match="did not answer within 1 s"):
        cluster.list_objects(lambda name: True, timeout=1)
