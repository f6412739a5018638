"""Raw block-device targets: parsing, the overwrite safety check (fake answers and a real loop device)."""

import json
import subprocess
from pathlib import Path

import pytest

from storbench.context import RunContext
from storbench.errors import InputError
from storbench.targets import Target, check_device_overwrite, device_refusal, parse_target
from storbench.workloads import get_workload
from tests.cli.helpers import storbench
from tests.loopdev import loop_device
from tests.workloads.helpers import fio_sample, run_json


def lsblk(**node):
    return {"blockdevices": [{"name": "sdx", "mountpoint": None, "fstype": None, "pttype": None, **node}]}


@pytest.mark.parametrize("answer,code,blkid,holders,reason", [
    (lsblk(), 2, "", [], None),
    (lsblk(mountpoint="/data"), 2, "", [], "/dev/sdx is mounted at /data; refusing to overwrite it"),
    (lsblk(mountpoint="[SWAP]"), 2, "", [], "/dev/sdx is mounted at [SWAP]"),
    (lsblk(children=[{"name": "sdx1", "mountpoint": "/boot", "fstype": "vfat", "pttype": "gpt"}]), 2, "", [],
     "/dev/sdx has its partition sdx1 mounted at /boot; refusing to overwrite it"),
    (lsblk(pttype="gpt", children=[{"name": "sdx1", "mountpoint": None}, {"name": "sdx2", "mountpoint": None}]),
     2, "", [], "/dev/sdx has partitions (sdx1, sdx2); refusing to overwrite it"),
    (lsblk(pttype="dos"), 2, "", [], "/dev/sdx has a dos partition table; refusing to overwrite it"),
    (lsblk(fstype="xfs"), 2, "", [], "/dev/sdx has an xfs signature; refusing to overwrite it"),
    # without udev, lsblk knows nothing and blkid's low-level probe finds the signature
    (lsblk(), 0, "DEVNAME=/dev/sdx\nUUID=1d16\nVERSION=1.0\nTYPE=ext4\nUSAGE=filesystem\n", [],
     "/dev/sdx has an ext4 signature; refusing to overwrite it"),
    (lsblk(), 0, "DEVNAME=/dev/sdx\nTYPE=linux_raid_member\n", [], "/dev/sdx has a linux_raid_member signature"),
    (lsblk(), 0, "DEVNAME=/dev/sdx\nPTUUID=ab\nPTTYPE=gpt\n", [], "/dev/sdx has a gpt partition table"),
    (lsblk(), 8, "", [], "/dev/sdx has more than one signature (blkid: ambiguous)"),
    (lsblk(), 4, "", [], "/dev/sdx could not be probed (blkid exit 4)"),
    (lsblk(), 2, "", ["dm-0"], "/dev/sdx is in use by dm-0; refusing to overwrite it"),
    (json.dumps(lsblk(fstype="LVM2_member")), 2, "", [], "/dev/sdx has an LVM2_member signature"),
])
def test_device_refusal_on_fake_answers(answer, code, blkid, holders, reason):
    found = device_refusal("/dev/sdx", answer, code, blkid, holders)
    if reason is None:
        assert found is None
    else:
        assert found is not None and found.startswith(reason)


def test_blank_device_needs_the_flag():
    blank = lambda device: (lsblk(), 2, "", [])  # noqa: E731
    with pytest.raises(InputError, match=r"^/dev/sdx is a raw device and fio would overwrite it; "
                                         r"pass --allow-device-overwrite"):
        check_device_overwrite(Path("/dev/sdx"), False, probe=blank)
    check_device_overwrite(Path("/dev/sdx"), True, probe=blank)
    with pytest.raises(InputError, match="has an ext4 signature"):
        check_device_overwrite(Path("/dev/sdx"), True, probe=lambda d: (lsblk(fstype="ext4"), 2, "", []))


def test_non_fio_workloads_refuse_a_device_target():
    target = Target(uri="device:///dev/sdx", scheme="device", path=Path("/dev/sdx"))
    ctx = RunContext(run_id="r", target=target, root_uri="", storage=None)  # type: ignore[arg-type]
    for name in ("datagen", "groupby", "teragen"):
        with pytest.raises(InputError, match=f"workload {name} cannot use the raw device target device:///dev/sdx"):
            get_workload(name).check(ctx, {})


def test_device_scheme_must_name_a_block_device(tmp_path):
    with pytest.raises(InputError, match="is not a block device"):
        parse_target(f"device://{tmp_path}")
    result = storbench(tmp_path / "home", "run", "fio-basic", "--target", "device:///dev/nosuchdisk", timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "storbench: error: --target 'device:///dev/nosuchdisk': /dev/nosuchdisk is not a block device"]


def test_loop_device_with_ext4_is_refused_even_with_the_flag(tmp_path):
    with loop_device(tmp_path / "ext4.img", 32, mkfs=True) as device:
        assert parse_target(device) == Target(uri=f"device://{device}", scheme="device", path=Path(device))
        result = storbench(tmp_path / "home", "run", "fio-basic", "--target", device, "--allow-device-overwrite",
                           timeout=120)
        assert result.returncode == 2, result.stderr
        assert result.stderr.strip().splitlines() == [
            f"storbench: error: {device} has an ext4 signature; refusing to overwrite it"]
        signature = subprocess.run(["blkid", "-p", "-o", "export", device], capture_output=True, text=True).stdout
        assert "TYPE=ext4" in signature  # untouched


def test_blank_loop_device(tmp_path):
    home = tmp_path / "home"
    with loop_device(tmp_path / "blank.img", 64) as device:
        refused = storbench(home, "run", "fio-basic", "--target", device, timeout=120)
        assert refused.returncode == 2
        assert refused.stderr.strip().splitlines() == [
            f"storbench: error: {device} is a raw device and fio would overwrite it; pass --allow-device-overwrite "
            f"to allow this (only devices with no filesystem, partition table or signature)"]
        spark = storbench(home, "run", "spark-transforms", "--target", f"device://{device}",
                          "--allow-device-overwrite", timeout=120)
        assert spark.returncode == 2
        assert spark.stderr.strip().splitlines()[-1] == (
            f"storbench: error: workload datagen cannot use the raw device target device://{device}; "
            f"only fio workloads can (use a directory on a filesystem)")
        too_big = storbench(home, "run", "fio-basic", "--target", device, "--allow-device-overwrite",
                            "--set", "size=1g", timeout=120)
        assert too_big.returncode == 2 and "is more than the 67.1 MB of" in too_big.stderr
        result, outcome, samples = run_json(home, "fio-002", "--target", device, "--allow-device-overwrite",
                                            "--set", "size=8m", "--set", "runtime_s=2", "--set", "ramp_time_s=0")
        assert result.returncode == 0, result.stderr
        for name in ("fio-write", "fio-read"):
            assert fio_sample(samples, name, "fio_bw_mbps")["value"] > 0
        manifest = json.loads((Path(outcome["path"]) / "manifest.json").read_text())
        assert manifest["config"]["target"] == f"device://{device}"
        assert manifest["config"]["devices"] == [Path(device).name]
        assert manifest["config"]["run_root"] is None
        job = json.loads((Path(outcome["path"]) / "artifacts.json").read_text())["fio"]["workloads"]["fio-write"]
        assert f"filename={device}" in job["job_file"] and "offset_increment=8m" in job["job_file"]
