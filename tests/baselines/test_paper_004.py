"""Paper 004's ratios beside stored runs, through `storbench compare` (issue 41 item 5): beside rados-004's and
dfsio-004's rows as the same quantity, beside zoned-004's (and zoned-mixed's) only as an analog, labelled so.

The runs are written to a results home as a run writes them (no service, no device): the figures are invented,
the paper's are its own.
"""

from __future__ import annotations

import dataclasses

import pytest

from storbench import cli
from storbench.baselines import load
from tests.analysis.factory import make_run

# paper 004's two configurations as compare names them
PAPER = "paper 004, Kalista IO Phalanx on host-managed SMR HDDs vs legacy file systems (e.g., XFS/ext4) on CMR HDDs"
SUITE_PARAMETERS = {
    "zoned-004": {"size": "256m", "runtime_s": 3},
    "rados-004": {"duration_s": 4},
    "dfsio-004": {"files": 4, "file_size": 16000000},
    "zoned-mixed": {},  # a workload run alone: its own suite, of no paper
}


def stored(store, label: str, suite: str, values: dict[tuple[str, str], list[float]], labels=None) -> None:
    """One finished run in ``store``, as `storbench run` leaves it: its manifest and its samples."""
    run = make_run(
        label,
        values,
        run_id=f"20260101-120000-{label}-0004",
        suite=suite,
        paper="004" if suite.endswith("-004") else None,
        parameters=SUITE_PARAMETERS[suite],
        workload_parameters={},
        workload_versions={w: "1" for w, _ in values},
    )
    fields = {k: v for k, v in run.manifest.items() if k not in ("schema_version", "run_id", "status")}
    writer = store.create_run(run.run_id, fields)
    writer.add_samples([dataclasses.replace(s, labels=dict(labels or {})) for s in run.samples])
    writer.finish("succeeded")


def compare(store, capsys, *args: str) -> list[str]:
    assert cli.main(["--results", str(store.home), "compare", *args]) == 0, capsys.readouterr().err
    return capsys.readouterr().out.splitlines()


def ratio_line(lines: list[str], run: str, base: str, what: str) -> str:
    found = [line.strip() for line in lines if line.strip().startswith(f"your {run} vs {base}: ") and what in line]
    assert len(found) == 1, "\n".join(lines)
    return found[0]


def spread(v: float) -> list[float]:
    return [v * 0.99, v, v * 1.01]


def test_zoned_004_runs_get_every_ratio_of_paper_004_labelled_an_analog(store, capsys):
    """IOPS, its standard deviation and read throughput of two zoned-004 runs: the paper's +58%, 10x and +19%
    beside them, each marked analog only with the paper's own quantity named."""
    for label, iops, spread_iops, read in (("ext4-conv", 40.0, 8.0, 150.0), ("btrfs-zoned", 60.0, 2.0, 180.0)):
        stored(
            store,
            label,
            "zoned-004",
            {
                ("zoned-write", "zoned_avg_iops"): spread(iops),
                ("zoned-write", "zoned_iops_stddev"): spread(spread_iops),
                ("zoned-read", "zoned_read_mbps"): spread(read),
            },
        )
    lines = compare(store, capsys, "ext4-conv", "btrfs-zoned")
    assert any(line.startswith("Published figures: paper 004") for line in lines), "\n".join(lines)
    expected = {
        "average IOPS (zoned-write)": ("1.5×", "Ceph Rados bench average write IOPS", "1.6×", "58% increase"),
        "IOPS standard deviation (zoned-write)": (
            "0.25×",
            "Ceph Rados bench write IOPS standard deviation",
            "0.10×",
            "10x gain in performance consistency",
        ),
        "average read throughput (zoned-read)": (
            "1.2×",
            "Apache Hadoop TestDFSIO average read throughput",
            "1.2×",
            "19% higher average throughput",
        ),
    }
    for what, (yours, quantity, theirs, words) in expected.items():
        line = ratio_line(lines, "btrfs-zoned", "ext4-conv", what)
        assert f": {yours} {what} [analog only: the paper's is {quantity}]; {PAPER}: {theirs} (“{words}”" in line, line


def test_rados_004_runs_get_the_rados_ratios_as_the_same_quantity(store, capsys):
    for label, iops, spread_iops in (("bluestore-ext4", 50.0, 10.0), ("bluestore-f2fs", 79.0, 1.0)):
        stored(
            store,
            label,
            "rados-004",
            {
                ("rados-bench-write", "rados_avg_iops"): spread(iops),
                ("rados-bench-write", "rados_stddev_iops"): spread(spread_iops),
            },
            labels={"driver": "rados"},
        )
    lines = compare(store, capsys, "bluestore-ext4", "bluestore-f2fs")
    for metric_words, yours, words in (
        ("Average IOPS [driver=rados] (rados-bench-write)", "1.6×", "58% increase"),
        ("Stddev IOPS [driver=rados] (rados-bench-write)", "0.10×", "10x gain in performance consistency"),
    ):
        found = [
            line
            for line in lines
            if line.strip().startswith("your bluestore-f2fs vs bluestore-ext4: ")
            and metric_words in line
            and f"“{words}”" in line
        ]
        assert len(found) == 1, "\n".join(lines)
        assert f": {yours} " in found[0] and "analog" not in found[0], found[0]


def test_dfsio_004_runs_get_the_testdfsio_ratio_as_the_same_quantity(store, capsys):
    for label, mbps in (("hdfs-ext4", 100.0), ("hdfs-f2fs", 119.0)):
        stored(
            store,
            label,
            "dfsio-004",
            {("dfsio-read", "dfsio_throughput_mbps"): spread(mbps)},
            labels={"checksum": "false"},
        )
    lines = compare(store, capsys, "hdfs-ext4", "hdfs-f2fs")
    found = [line for line in lines if "your hdfs-f2fs vs hdfs-ext4: " in line and "(dfsio-read)" in line]
    assert len(found) == 1, "\n".join(lines)
    assert "1.2×" in found[0] and "“19% higher average throughput”" in found[0] and "analog" not in found[0]


def test_zoned_mixed_runs_named_beside_paper_004_are_an_analog_of_its_rados_figures(store, capsys):
    """zoned-mixed (paper 004's OSD mix on a file system) is in no suite: beside the paper when it is named."""
    for label, iops in (("ext4-conv", 300.0), ("f2fs-zoned", 450.0)):
        stored(store, label, "zoned-mixed", {("zoned-mixed", "zoned_avg_iops"): spread(iops)})
    lines = compare(store, capsys, "ext4-conv", "f2fs-zoned", "--paper", "004")
    line = ratio_line(lines, "f2fs-zoned", "ext4-conv", "(zoned-mixed)")
    assert "1.5×" in line and "[analog only: the paper's is Ceph Rados bench average write IOPS]" in line, line
    assert "“58% increase”" in line, line


@pytest.mark.parametrize("figure", [f.id for f in load("004").figures])
def test_each_paper_004_figure_has_one_measure_and_analogs_only_in_zoned_workloads(figure):
    fig = load("004").figure(figure)
    assert len(fig.measures) == 1 and not any(w.startswith("zoned-") for w in fig.measures), fig.measures
    assert fig.analogs and all(w.startswith("zoned-") for w in fig.analogs), fig.analogs
