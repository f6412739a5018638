"""Raw block-device targets through fio and the CLI on real loop devices (the checks alone: tests/targets; a
device holding a file system, or swapped or formatted after the check: tests/lab/test_device_guard.py)."""

import json
from pathlib import Path

import pytest

from tests.cli.helpers import storbench
from tests.loopdev import loop_device
from tests.workloads.helpers import fio_sample, run_json

pytestmark = pytest.mark.real  # loop devices, fio


def test_device_scheme_must_name_a_block_device(tmp_path):
    result = storbench(tmp_path / "home", "run", "fio-basic", "--target", "device:///dev/nosuchdisk", timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "storbench: error: --target 'device:///dev/nosuchdisk': /dev/nosuchdisk is not a block device"
    ]


def test_blank_loop_device(tmp_path):
    home = tmp_path / "home"
    with loop_device(tmp_path / "blank.img", 64) as device:
        refused = storbench(home, "run", "fio-basic", "--target", device, timeout=120)
        assert refused.returncode == 2
        assert refused.stderr.strip().splitlines() == [
            f"storbench: error: {device} is a raw device and fio would overwrite it; pass --allow-device-overwrite "
            f"to allow this (only devices with no filesystem, partition table or signature)"
        ]
        spark = storbench(
            home, "run", "spark-transforms", "--target", f"device://{device}", "--allow-device-overwrite", timeout=120
        )
        assert spark.returncode == 2
        assert spark.stderr.strip().splitlines()[-1] == (
            f"storbench: error: workload datagen cannot use the raw device target device://{device}; "
            f"only the fio and zoned workloads can (datagen needs a directory on a filesystem or an "
            f"hdfs://HOST:PORT/PATH or an s3://BUCKET/PREFIX target, e.g. s3://storbench/ on "
            f"`storbench services up s3`)"
        )
        too_big = storbench(
            home, "run", "fio-basic", "--target", device, "--allow-device-overwrite", "--set", "size=1g", timeout=120
        )
        assert too_big.returncode == 2 and "is more than the 67.1 MB of" in too_big.stderr
        result, outcome, samples = run_json(
            home,
            "fio-002",
            "--target",
            device,
            "--allow-device-overwrite",
            "--set",
            "size=8m",
            "--set",
            "runtime_s=2",
            "--set",
            "ramp_time_s=0",
        )
        assert result.returncode == 0, result.stderr
        for name in ("fio-write", "fio-read"):
            assert fio_sample(samples, name, "fio_bw_mbps")["value"] > 0
        manifest = json.loads((Path(outcome["path"]) / "manifest.json").read_text())
        assert manifest["config"]["target"] == f"device://{device}"
        assert manifest["config"]["devices"] == [Path(device).name]
        assert manifest["config"]["run_root"] is None
        assert manifest["config"]["zoned"]["summary"] == f"raw {Path(device).name} (none)"  # a loop device is not zoned
        job = json.loads((Path(outcome["path"]) / "artifacts.json").read_text())["fio"]["workloads"]["fio-write"]
        assert f"filename={device}" in job["job_file"] and "offset_increment=8m" in job["job_file"]
