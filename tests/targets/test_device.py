"""Raw device targets: parsing, the device measured, and the overwrite safety check on fake answers.

The same checks on real loop devices, through fio, are in tests/workloads/fio/test_fio_device.py.
"""

import json
from pathlib import Path

import pytest

from storbench.errors import InputError
from storbench.targets import TargetOptions, parse_target
from storbench.targets.device import DeviceTarget, check_device_overwrite, device_refusal, device_size


def lsblk(**node):
    return {"blockdevices": [{"name": "sdx", "mountpoint": None, "fstype": None, "pttype": None, **node}]}


@pytest.mark.parametrize(
    "answer,code,blkid,holders,reason",
    [
        (lsblk(), 2, "", [], None),
        (lsblk(mountpoint="/data"), 2, "", [], "/dev/sdx is mounted at /data; refusing to overwrite it"),
        (lsblk(mountpoint="[SWAP]"), 2, "", [], "/dev/sdx is mounted at [SWAP]"),
        (
            lsblk(children=[{"name": "sdx1", "mountpoint": "/boot", "fstype": "vfat", "pttype": "gpt"}]),
            2,
            "",
            [],
            "/dev/sdx has its partition sdx1 mounted at /boot; refusing to overwrite it",
        ),
        (
            lsblk(pttype="gpt", children=[{"name": "sdx1", "mountpoint": None}, {"name": "sdx2", "mountpoint": None}]),
            2,
            "",
            [],
            "/dev/sdx has partitions (sdx1, sdx2); refusing to overwrite it",
        ),
        (lsblk(pttype="dos"), 2, "", [], "/dev/sdx has a dos partition table; refusing to overwrite it"),
        (lsblk(fstype="xfs"), 2, "", [], "/dev/sdx has an xfs signature; refusing to overwrite it"),
        # without udev, lsblk knows nothing and blkid's low-level probe finds the signature
        (
            lsblk(),
            0,
            "DEVNAME=/dev/sdx\nUUID=1d16\nVERSION=1.0\nTYPE=ext4\nUSAGE=filesystem\n",
            [],
            "/dev/sdx has an ext4 signature; refusing to overwrite it",
        ),
        (lsblk(), 0, "DEVNAME=/dev/sdx\nTYPE=linux_raid_member\n", [], "/dev/sdx has a linux_raid_member signature"),
        (lsblk(), 0, "DEVNAME=/dev/sdx\nPTUUID=ab\nPTTYPE=gpt\n", [], "/dev/sdx has a gpt partition table"),
        (lsblk(), 8, "", [], "/dev/sdx has more than one signature (blkid: ambiguous)"),
        (lsblk(), 4, "", [], "/dev/sdx could not be probed (blkid exit 4)"),
        (lsblk(), 2, "", ["dm-0"], "/dev/sdx is in use by dm-0; refusing to overwrite it"),
        (json.dumps(lsblk(fstype="LVM2_member")), 2, "", [], "/dev/sdx has an LVM2_member signature"),
    ],
)
def test_device_refusal_on_fake_answers(answer, code, blkid, holders, reason):
    found = device_refusal("/dev/sdx", answer, code, blkid, holders)
    if reason is None:
        assert found is None
    else:
        assert found is not None and found.startswith(reason)


def test_blank_device_needs_the_flag():
    blank = lambda device: (lsblk(), 2, "", [])  # noqa: E731
    with pytest.raises(
        InputError,
        match=r"^/dev/sdx is a raw device and fio would overwrite it; "
        r"pass --allow-device-overwrite",
    ):
        check_device_overwrite(Path("/dev/sdx"), False, probe=blank)
    check_device_overwrite(Path("/dev/sdx"), True, probe=blank)
    with pytest.raises(InputError, match="has an ext4 signature"):
        check_device_overwrite(Path("/dev/sdx"), True, probe=lambda d: (lsblk(fstype="ext4"), 2, "", []))


def test_device_scheme_must_name_a_block_device(tmp_path):
    for text in (f"device://{tmp_path}", "device:///dev/nosuchdisk"):
        with pytest.raises(InputError, match=r"is not a block device$"):
            parse_target(text)


def test_the_device_itself_is_measured_and_nothing_is_claimed(tmp_path):
    target = DeviceTarget(Path("/dev/sdx"), TargetOptions())
    assert target.uri == "device:///dev/sdx"
    assert target.devices(None, lambda warning: None) == (["sdx"], "raw device /dev/sdx")
    assert target.local_path() is None
    assert target.claim("r1") is None and target.root_uri is None
    assert not target.release()
    assert device_size(Path("/dev/nosuchdisk")) is None
