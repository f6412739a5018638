"""dfsio (TestDFSIO semantics) on file:// and on the real HDFS, plus Hadoop's own TestDFSIO as a cross-check."""

import json
import math
import re
from pathlib import Path

import pytest

from storbench.workloads.dfsio import per_file_stats
from storbench.workloads.dfsio.testdfsio import parse_result, to_samples
from tests.cli.helpers import storbench

DATA = Path(__file__).resolve().parents[2] / "data" / "dfsio"


def test_testdfsio_figures_from_per_file_results():
    # two files: 100 MB in 1 s and 100 MB in 4 s
    stats = per_file_stats([(100_000_000, 1_000_000_000), (100_000_000, 4_000_000_000)])
    assert stats["throughput_mbps"] == pytest.approx(200 / 5)  # total bytes / total task time
    assert stats["avg_io_rate_mbps"] == pytest.approx((100 + 25) / 2)
    assert stats["io_rate_stddev_mbps"] == pytest.approx(math.sqrt((100**2 + 25**2) / 2 - 62.5**2))


def test_hadoop_testdfsio_result_file_parses_and_converts_to_mb():
    values = parse_result((DATA / "testdfsio-3.4.3-write.txt").read_text())
    assert values["throughput"] == 1419.42 and values["files"] == 4
    samples = {s.metric: s for s in to_samples("dfsio-write", values)}
    assert samples["dfsio_throughput_mbps"].value == pytest.approx(1419.42 * 1.048576)
    assert samples["dfsio_throughput_mbps"].labels == {"driver": "testdfsio"}
    labelled = to_samples("dfsio-write", values, {"checksum": "true"})
    assert labelled[0].labels == {"driver": "testdfsio", "checksum": "true"}


def _run(home, target, label, *extra):
    result = storbench(
        home,
        "run",
        "dfsio-002",
        "--label",
        label,
        "--target",
        target,
        "--repeat",
        "1",
        "--scale",
        "4M",
        "--interval",
        "0.25",
        "--json",
        *extra,
    )
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["status"] == "succeeded", outcome["errors"]
    run_dir = home / "runs" / outcome["run_id"]
    lines = (run_dir / "samples.jsonl").read_text().splitlines()
    samples = {(s["workload"], s["metric"], s["labels"].get("interface")): s for s in map(json.loads, lines)}
    samples["manifest"] = json.loads((run_dir / "manifest.json").read_text())
    return samples


@pytest.mark.spark
def test_dfsio_on_file_target_and_testdfsio_cross_check(tmp_path):
    home, target = tmp_path / "home", tmp_path / "target"
    target.mkdir()
    ours = _run(home, str(target), "dfsio-ours")
    for phase in ("dfsio-write", "dfsio-read"):
        assert ours[(phase, "dfsio_throughput_mbps", None)]["value"] > 0
        assert ours[(phase, "dfsio_total_mb", None)]["value"] == pytest.approx(4 * 4.0)
        _rates_are_consistent(ours, phase, files=4)
    assert list(target.iterdir()) == []  # dfsio-clean and the run root are gone
    hadoop = _run(home, str(target), "dfsio-hadoop", "--set", "driver=testdfsio")
    assert hadoop[("dfsio-read", "dfsio_throughput_mbps", None)]["labels"] == {
        "driver": "testdfsio",
        "checksum": "true",
    }
    assert ours[("dfsio-read", "dfsio_throughput_mbps", None)]["labels"] == {"checksum": "false"}
    # the Hadoop engine started only for the testdfsio driver, and recorded the Hadoop it ran
    assert hadoop["manifest"]["software"]["hadoop"].startswith("hadoop 3.")
    assert "hadoop" not in ours["manifest"]["software"]
    # the same rules for both drivers: each read phase starts with the files just written evicted (the
    # testdfsio driver's own files, not an empty directory), each write window ends once the data is synced
    for run, checksum in ((ours, "false"), (hadoop, "true")):
        rules = run["manifest"]["window_rules"]
        assert rules["dfsio-write"] == {"flush": "syncfs", "checksum": checksum}
        assert rules["dfsio-read"] == {"cache": "cold", "checksum": checksum}
    # the numbers agree: the same bytes written and read (TestDFSIO's MiB converted to MB) ...
    for phase in ("dfsio-write", "dfsio-read"):
        assert hadoop[(phase, "dfsio_total_mb", None)]["value"] == pytest.approx(16.0, rel=1e-3)
        _rates_are_consistent(hadoop, phase, files=4)
    # ... and rates within each phase's bound (RATE_BOUND: a unit or timer error, not a verdict)
    for phase in ("dfsio-read", "dfsio-write"):
        ratio = (
            hadoop[(phase, "dfsio_throughput_mbps", None)]["value"]
            / ours[(phase, "dfsio_throughput_mbps", None)]["value"]
        )
        assert rates_agree(phase, ratio), (phase, ratio, RATE_BOUND[phase])
    table = storbench(home, "compare", "dfsio-ours", "dfsio-hadoop")
    assert table.returncode == 0, table.stderr
    assert "dfsio-write" in table.stdout and "stddev" in table.stdout.lower()
    # the checksum difference makes the two not comparable, named as such
    flat = re.sub(r"\s+", " ", re.sub(r"-\n\s+", "-", table.stdout))  # the note is wrapped, at hyphens too
    assert "NOT COMPARABLE" in flat
    assert "window dfsio-write.checksum: false (dfsio-ours) vs true (dfsio-hadoop)" in flat


# Hadoop's TestDFSIO ÷ storbench's dfsio rate of the same 16 MB, each way. What the pair must catch is a unit
# or timer error: a millisecond clock read as seconds is 1000x (MiB vs MB, 1.05x, is checked exactly on a
# result file above; bytes are checked to 0.1%). What it must accept is what the machine's load did to the pair
# on record, and each bound is 2.6x-2.9x the worst of it: 16 MB move in milliseconds, so the load of the moment
# decides the pair. Read: cold reads, both sides evicted; issue 26 saw 0.064 (32 MB files, quiet machine) and a
# CI rehearsal with a second test worker on the other core saw 0.013 (76x), so 200 either way (load can fall on
# either side). Write: to the page cache under the kernel's dirty-page throttling, 0.5x to 17x between runs
# minutes apart, so 50 either way (it was 200, 12x the record). Both stay at least 5x below a timer error.
# Speed pairs are judged in benchmarks/dfsio_vs_fio.py, not here.
RATE_BOUND = {"dfsio-read": 200.0, "dfsio-write": 50.0}


def rates_agree(phase, ratio):
    return 1 / RATE_BOUND[phase] < ratio < RATE_BOUND[phase]


def test_the_rate_bounds_catch_a_timer_error_and_hold_the_recorded_spread():
    for phase in RATE_BOUND:
        assert not rates_agree(phase, 1000.0) and not rates_agree(phase, 1 / 1000)  # ms read as s, either way
    assert rates_agree("dfsio-read", 0.013) and rates_agree("dfsio-read", 0.064)  # the read pairs on record
    assert rates_agree("dfsio-write", 17.0) and rates_agree("dfsio-write", 0.5)  # the write spread on record
    assert not rates_agree("dfsio-write", 100.0)  # 6x the write record: passed the old 200x bound


def _rates_are_consistent(samples, phase, files):
    """TestDFSIO's three rates of equal-sized files agree with each other: the mean of per-file rates is at least
    the aggregate rate (total bytes / total task time; the harmonic mean of equal-weight rates never exceeds
    their arithmetic mean), and the standard deviation of n non-negative rates is at most mean * sqrt(n - 1)."""
    figure = {
        m: samples[(phase, m, None)]["value"]
        for m in ("dfsio_throughput_mbps", "dfsio_avg_io_rate_mbps", "dfsio_io_rate_stddev_mbps")
    }
    assert figure["dfsio_throughput_mbps"] > 0, (phase, figure)
    if figure["dfsio_avg_io_rate_mbps"] is None:  # TestDFSIO's millisecond clock read a file's time as 0 (Infinity)
        assert samples["manifest"]["software"].get("hadoop"), (phase, figure)
        return
    assert figure["dfsio_avg_io_rate_mbps"] >= figure["dfsio_throughput_mbps"] * (1 - 1e-3), (phase, figure)
    assert figure["dfsio_io_rate_stddev_mbps"] <= figure["dfsio_avg_io_rate_mbps"] * math.sqrt(files - 1) * 1.001, (
        phase,
        figure,
    )


@pytest.mark.spark
def test_dfsio_on_real_hdfs(hdfs):
    home, state = hdfs
    samples = _run(home, f"{state['uri']}/dfsio", "dfsio-hdfs", "--replication", "2", "--set", "replication=2")
    assert samples[("dfsio-read", "dfsio_throughput_mbps", None)]["value"] > 0
    # the DataNodes are ours, on this host: the write window ends once their file systems are synced; both
    # drivers pay HDFS's checksums there
    rules = samples["manifest"]["window_rules"]
    assert rules["dfsio-write"] == {"flush": "syncfs (DataNode directories)", "checksum": "true"}
    assert rules["dfsio-read"] == {"cache": "cold", "checksum": "true"}
    # the DataNodes' traffic crosses loopback: its own per-interface maximum is recorded
    assert samples[("dfsio-write", "max_net_mbps", "lo")]["value"] > 0


def test_a_rate_testdfsio_could_not_measure_is_none_not_a_crash():
    text = (DATA / "testdfsio-3.4.3-write.txt").read_text()
    text = text.replace("Average IO rate mb/sec: 1694.86", "Average IO rate mb/sec: Infinity")
    text = text.replace("IO rate std deviation: 630.18", "IO rate std deviation: NaN")
    samples = {s.metric: s.value for s in to_samples("dfsio-read", parse_result(text))}
    assert samples["dfsio_avg_io_rate_mbps"] is None and samples["dfsio_io_rate_stddev_mbps"] is None
    assert samples["dfsio_throughput_mbps"] == pytest.approx(1419.42 * 1.048576)


def test_java_decimalformat_infinity_and_nan_are_understood():
    text = (DATA / "testdfsio-3.4.3-write.txt").read_text()
    text = text.replace("Average IO rate mb/sec: 1694.86", "Average IO rate mb/sec: \u221e")
    text = text.replace("IO rate std deviation: 630.18", "IO rate std deviation: \ufffd")
    values = parse_result(text)
    assert math.isinf(values["avg_io_rate"]) and math.isnan(values["io_rate_stddev"])
