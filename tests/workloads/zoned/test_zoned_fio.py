"""zoned-004 and the zoned workloads for real (fio, the storbench CLI as a child) on a directory target: plain
files as on a conventional stack, and zones fio emulates on them (zone_size), whose resets fio counts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.helpers import storbench
from tests.workloads.helpers import run_json

pytestmark = pytest.mark.real

FAST = ("--set", "runtime_s=1", "--set", "size=64m", "--repeat", "1")


def values(samples, workload):
    return {s["metric"]: s["value"] for s in samples if s["workload"] == workload and s["metric"].startswith("zoned_")}


def test_zoned_004_on_a_directory_reports_the_papers_figures(tmp_path):
    result, outcome, samples = run_json(tmp_path / "home", "zoned-004", "--target", str(tmp_path / "t"), *FAST)
    assert result.returncode == 0, result.stderr
    write, read = values(samples, "zoned-write"), values(samples, "zoned-read")
    assert set(write) == {
        "zoned_avg_iops",
        "zoned_iops_stddev",
        "zoned_write_p99_ms",
        "zoned_write_p99_9_ms",
        "zoned_write_mbps",
    }  # plain files: no zones, no resets
    assert write["zoned_avg_iops"] > 0 and write["zoned_write_p99_9_ms"] >= write["zoned_write_p99_ms"] > 0
    assert read["zoned_read_mbps"] > 0 and read["zoned_read_iops"] > 0
    assert all(not s["labels"] for s in samples if s["metric"].startswith("zoned_"))  # headline material
    manifest = json.loads((Path(outcome["path"]) / "manifest.json").read_text())
    assert manifest["config"]["zoned"]["zoned"] is False and manifest["config"]["zoned"]["summary"]
    assert manifest["window_rules"]["zoned-write"]["io"].startswith(("libaio", "psync", "io_uring"))
    job = json.loads((Path(outcome["path"]) / "artifacts.json").read_text())["fio"]["workloads"]["zoned-write"]
    lines = job["job_file"].splitlines()
    assert {"bs=4m", "iodepth=16", "time_based=1", "rw=write"} <= set(lines) and "zonemode=zbd" not in lines


def test_emulated_zones_are_written_at_the_write_pointers_and_their_resets_counted(tmp_path):
    home = tmp_path / "home"
    result, outcome, samples = run_json(
        home,
        "zoned-write",
        "--target",
        str(tmp_path / "t"),
        *FAST,
        "--set",
        "zone_size=16m",
        "--set",
        "size=40m",
        "--label",
        "zbd",
    )
    assert result.returncode == 0, result.stderr
    write = values(samples, "zoned-write")
    # 1 s of 4 MiB writes wraps a 48 MiB region (40m rounded up to 3 zones of 16 MiB) many times
    assert write["zoned_zone_resets"] >= 3
    manifest = json.loads((Path(outcome["path"]) / "manifest.json").read_text())
    assert "zoned-write: size 40m per job is rounded up to 3 whole zone(s) of 16 MiB" in manifest["notes"][0]
    lines = json.loads((Path(outcome["path"]) / "artifacts.json").read_text())["fio"]["workloads"]["zoned-write"][
        "job_file"
    ].splitlines()
    assert {"zonemode=zbd", f"zonesize={16 << 20}", f"size={48 << 20}"} <= set(lines)
    # against a plain run: the paper's sentences, said first
    plain = run_json(home, "zoned-write", "--target", str(tmp_path / "t"), *FAST, "--label", "plain")
    assert plain[0].returncode == 0, plain[0].stderr
    compared = storbench(home, "compare", "zbd", "plain")
    assert compared.returncode == 0, compared.stderr
    out = compared.stdout.splitlines()
    # the table speaks the paper's names, whatever the figures did
    rows = {
        line.split("  ")[1]
        for line in out
        if line.startswith("  ") and not line.startswith("  - ") and len(line.split("  ")) > 2
    }
    assert {
        "average IOPS",
        "IOPS standard deviation",
        "p99 write latency",
        "p99.9 write latency",
        "zone resets",
    } <= rows, out
    # the paper's words-first sentences lead; which figures get one depends on what changed by 2% or more
    said = [line for line in out if line.startswith("  - ")]
    family = [line.startswith("  - plain vs zbd: zoned-write: ") for line in said]
    assert family == sorted(family, reverse=True), said
    paper_names = (
        "average IOPS",
        "IOPS standard deviation",
        "p99 write latency",
        "p99.9 write latency",
        "average write throughput",
        "zone resets",
    )
    assert all(any(name in line for name in paper_names) for line, first in zip(said, family) if first), said


def test_a_zbd_job_without_zones_is_refused_before_it_starts(tmp_path):
    result = storbench(
        tmp_path / "home", "run", "zoned-write", "--target", str(tmp_path / "t"), "--set", "zonemode=zbd"
    )
    assert result.returncode == 2
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .endswith(
            "zoned-write: zonemode=zbd needs zones and the directory "
            + str(tmp_path / "t")
            + " has none; allowed: zone_size=64m (fio then emulates zones of that size), or zonemode=auto"
        )
    )
    assert not (tmp_path / "t").exists()  # nothing was left behind


def test_the_mix_reports_its_iops_and_each_jobs_own_on_a_directory(tmp_path):
    args = ("--set", "runtime_s=2", "--set", "size=32m", "--set", "bs=1m", "--set", "small_fsync=16", "--repeat", "1")
    result, outcome, samples = run_json(tmp_path / "home", "zoned-mixed", "--target", str(tmp_path / "t"), *args)
    assert result.returncode == 0, result.stderr
    got = values(samples, "zoned-mixed")
    assert got["zoned_large_iops"] > 0 and got["zoned_small_iops"] > 0
    assert got["zoned_avg_iops"] == pytest.approx(got["zoned_large_iops"] + got["zoned_small_iops"], rel=0.05)
    assert got["zoned_write_p99_9_ms"] >= got["zoned_write_p99_ms"] > 0  # the large writes' latency
    job = json.loads((Path(outcome["path"]) / "artifacts.json").read_text())["fio"]["workloads"]["zoned-mixed"]
    assert "[small]" in job["job_file"] and "fsync=16" in job["job_file"].splitlines()
