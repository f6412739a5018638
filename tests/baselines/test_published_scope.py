"""Published figures set beside the same quantity at a stated scope and scale (issue 38, items 11, 13-16)."""

import dataclasses
import re

import pytest

from storbench import api
from storbench.analysis.compare import compare_runs
from storbench.analysis.published import published
from storbench.baselines import load, papers
from storbench.errors import InputError
from storbench.workloads.ycsb import thread_samples
from tests.analysis.factory import make_run, paper_runs

ALL = [(p, fig) for p in papers() for fig in load(p).figures]
NUMBER = re.compile(r"(?<![\d.])\d[\d,]*(?:\.\d+)?")


@pytest.mark.parametrize(
    "paper,figure",
    [(p, f) for p, f in ALL if f.kind == "absolute"],
    ids=[f"{p}-{f.id}" for p, f in ALL if f.kind == "absolute"],
)
def test_an_absolute_value_is_a_number_of_its_source_quote(paper, figure):
    """The yaml's value is one of the numbers the paper prints in the quoted text ("33,013" is 33013)."""
    printed = [float(n.replace(",", "")) for n in NUMBER.findall(figure.source)]
    assert figure.value in printed, (figure.id, figure.value, figure.source)


def test_paper_003_per_thread_is_the_clusters_rate_over_one_servers_threads():
    """Paper 003, Table 3: 33,013 ops/s on four x86 nodes of 56 threads each is 589.52 per thread (÷ 56, not ÷ 224)."""
    prints = {f"node{i}": {"hostname": f"x86-{i}", "cores": 56} for i in range(4)}
    notes: list[str] = []
    samples = {s.metric: s.value for s in thread_samples("ycsb-a", 33013.0, prints, False, notes)}
    figure = load("003").figure("a-per-thread-x86")
    (metric,) = figure.measures.values()
    assert samples[metric] == pytest.approx(figure.value, abs=0.005)  # 589.52
    assert samples["ycsb_ops_per_server_thread"] == pytest.approx(33013 / 224)  # the other scope, its own name
    assert all(m == metric for f in load("003").figures if "per-thread" in f.id for m in f.measures.values())
    uneven = {**prints, "node3": {"hostname": "x86-3", "cores": 32}}
    notes.clear()
    samples = {s.metric: s.value for s in thread_samples("ycsb-a", 33013.0, uneven, False, notes)}
    assert samples[metric] is None and any("thread counts differ" in n for n in notes), notes


def _run(label, values, suite, paper, labels=None, scale="tiny"):
    run = make_run(label, values, suite=suite, paper=paper, scale=scale)
    if labels:
        run = dataclasses.replace(run, samples=[dataclasses.replace(s, labels=dict(labels)) for s in run.samples])
    return dataclasses.replace(run, suite=suite)


def test_a_fio_002_run_is_set_beside_paper_002s_fio_figures():
    """fio labels every sample with how it ran (ioengine, direct): such a row is still the run's figure."""
    run = _run(
        "fio",
        {("fio-read", "fio_bw_mbps"): [2500.0, 2600.0], ("fio-write", "fio_bw_mbps"): [1700.0, 1750.0]},
        "fio-002",
        "002",
        labels={"ioengine": "libaio", "direct": "1"},
    )
    text = api.beside_paper(compare_runs([run]), "002")
    row = next(line for line in text.splitlines() if line.strip().startswith("fio-read"))
    assert "2.8 GB/s" in row and "per server" in row and "0.91×" in row, row  # 2,550 MB/s ÷ 2,800


def test_a_run_of_another_suite_is_not_set_beside_paper_000s_whole_run_figures():
    """A null run's device maxima are not paper 000's Spark figures: one line, nothing beside them."""
    run = _run(
        "smoke",
        {(w, m): [900.0, 950.0] for w in ("null-write", "null-read") for m in ("max_read_mbps", "max_write_mbps")},
        "null",
        None,
    )  # two: an overall row
    with pytest.raises(InputError) as caught:
        published(compare_runs([run]), load("000"))
    message = str(caught.value)
    assert "\n" not in message and message.startswith("paper 000: smoke (null) is not a run of its suites"), message


def test_paper_004s_ratios_beside_zoned_runs_are_labelled_an_analog():
    def pair(suite, workload, metric, base, new):
        return [
            _run(label, {(workload, metric): [v, v * 1.01, v * 0.99]}, suite, "004")
            for label, v in (("cmr", base), ("smr", new))
        ]

    zoned = api.beside_paper(compare_runs(pair("zoned-004", "zoned-write", "zoned_avg_iops", 20.0, 30.0)), "004")
    line = next(line for line in zoned.splitlines() if "your smr vs cmr" in line and "zoned-write" in line)
    assert "[analog only: the paper's is Ceph Rados bench average write IOPS]" in line, line
    rados = api.beside_paper(compare_runs(pair("rados-004", "rados-bench-write", "rados_avg_iops", 20.0, 30.0)), "004")
    line = next(line for line in rados.splitlines() if "your smr vs cmr" in line and "rados-bench-write" in line)
    assert "analog" not in line and "58% increase" in line, line


def test_a_tiny_run_gets_no_quotient_of_a_time_beside_the_papers_2_1_tb_time():
    """A time grows with the data: divided per row where the paper states its rows, else no quotient."""
    comparison = compare_runs(paper_runs()[:1])  # spark-transforms at tiny: 1 M rows
    text = api.beside_paper(comparison, "000")
    lines = text.splitlines()
    timed = next(line for line in lines if line.strip().startswith("groupby") and "480.93" in line)
    assert "10485× per row" in timed and "1.0×" not in timed, timed  # (504.27 s / 1e6) ÷ (480.93 s / 1e10)
    assert "2.1 TB" in timed and "3 servers" in timed, timed
    assert any("scale: yours, sata-vendor-a: tiny (rows=1,000,000" in line for line in lines), text
    rate = next(line for line in lines if "6,369.34 MB/s" in line)
    assert "0.34×" in rate  # a rate: the quotient stands


def test_a_time_beside_a_paper_that_gives_no_size_in_the_runs_terms_has_no_quotient():
    run = _run("dfsio", {("dfsio-write", "completion_time"): [2.0, 2.2]}, "dfsio-002", "002")
    text = api.beside_paper(compare_runs([run]), "002")
    row = next(line for line in text.splitlines() if line.strip().startswith("dfsio-write"))
    assert "just under 300 seconds" in row and "n/a (grows with the data)" in row, row


def test_paper_004s_testdfsio_ratio_is_set_beside_dfsio_004_runs_as_the_same_quantity():
    """dfsio labels its rows with the checksum rule they ran under: still the run's figure."""
    runs = [
        _run(
            label,
            {("dfsio-read", "dfsio_throughput_mbps"): [v, v * 1.01, v * 0.99]},
            "dfsio-004",
            "004",
            labels={"checksum": "false"},
        )
        for label, v in (("cmr", 100.0), ("smr", 120.0))
    ]
    text = api.beside_paper(compare_runs(runs), "004")
    line = next((line for line in text.splitlines() if "your smr vs cmr" in line and "dfsio-read" in line), text)
    assert "1.2×" in line and "“19% higher average throughput”" in line and "analog" not in line, line
