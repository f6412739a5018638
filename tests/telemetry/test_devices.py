"""Path → disks on a fake sysfs + mountinfo tree (tests/data/telemetry/host), and the --devices option."""

from pathlib import Path

import pytest

from storbench.errors import InputError
from storbench.telemetry import device_info, devices_for_path, parse_devices_option
from storbench.telemetry.devices import mount_of, parse_mountinfo


@pytest.fixture
def host(data):
    root = data / "host"
    return {"sys_root": str(root / "sys"), "proc_root": str(root / "proc")}


@pytest.mark.parametrize(
    "path, devices, chain",
    [
        ("/home/user/data", ["sda"], "/ on /dev/sda2 (ext4): sda2 → sda"),
        ("/bench/raid/run1", ["sda", "sdb"], "/bench/raid on /dev/md0 (xfs): md0 → sda, sdb"),
        ("/bench/lvm/x", ["nvme0n1"], "/bench/lvm on /dev/mapper/vg0-srv (ext4): dm-0 → nvme0n1"),
        ("/boot/efi/EFI", ["nvme0n1"], "/boot/efi on /dev/nvme0n1p1 (vfat): nvme0n1p1 → nvme0n1"),
        ("/bench/btrfs/sub", ["sdc"], "/bench/btrfs on /dev/sdc (btrfs)"),  # anonymous 0:45, found by source
    ],
)
def test_path_resolves_to_physical_disks(host, path, devices, chain):
    resolution = devices_for_path(path, **host)
    assert resolution.devices == devices
    assert resolution.how == chain
    assert resolution.warning is None


@pytest.mark.parametrize("path, fstype", [("/tmp/storbench", "tmpfs"), ("/bench/over lay/x", "overlay")])
def test_path_without_block_device_warns(host, path, fstype):
    resolution = devices_for_path(path, **host)
    assert resolution.devices == []
    assert fstype in resolution.warning and "--devices" in resolution.warning


def test_mountinfo_prefers_the_longest_mount_point_and_unescapes(data):
    mounts = parse_mountinfo((data / "host" / "proc" / "self" / "mountinfo").read_text())
    assert mount_of("/bench/raidx", mounts).point == "/"  # a prefix of a name is not a parent directory
    assert mount_of("/bench/raid", mounts).dev == "9:0"
    assert mount_of("/bench/over lay/a", mounts).fstype == "overlay"


def test_devices_option_accepts_names_and_dev_paths(host):
    assert parse_devices_option("sda, /dev/nvme0n1,sda", **host) == ["sda", "nvme0n1"]
    assert parse_devices_option("sda1", **host) == ["sda1"]


def test_devices_option_rejects_unknown_with_the_known_list(host):
    with pytest.raises(InputError) as error:
        parse_devices_option("sda,nosuchdisk0", **host)
    # detached loop devices are noise and are not suggested
    assert str(error.value) == "--devices: unknown block device 'nosuchdisk0'; known: dm-0, md0, nvme0n1, sda, sdb, sdc"
    assert error.value.exit_code == 2


def test_devices_option_must_name_something(host):
    with pytest.raises(InputError, match="no device named"):
        parse_devices_option(" , ", **host)


def test_device_info_of_disks_and_partitions(host):
    sys_root = host["sys_root"]
    assert device_info("sda", sys_root) == {
        "model": "WDC WD20EFRX-68E",
        "vendor": "ATA",
        "size_bytes": 3907029168 * 512,
        "rotational": True,
        "scheduler": "bfq",
    }
    nvme = device_info("nvme0n1", sys_root)
    assert (nvme["vendor"], nvme["rotational"], nvme["scheduler"]) == (None, False, "none")
    partition = device_info("sda1", sys_root)
    assert partition["size_bytes"] == 3900000000 * 512 and partition["model"] == "WDC WD20EFRX-68E"
    assert device_info("md0", sys_root)["scheduler"] == "none"
    assert device_info("nosuch", sys_root) == dict.fromkeys(
        ["model", "vendor", "size_bytes", "rotational", "scheduler"]
    )


def test_this_machine_resolves_tmp_path_to_whole_disks(tmp_path):
    resolution = devices_for_path(str(tmp_path))
    if not resolution.devices:
        pytest.skip(f"{tmp_path} has no block device here: {resolution.warning}")
    for name in resolution.devices:
        assert Path("/sys/block", name).exists(), resolution
        assert name in Path("/proc/diskstats").read_text()


def test_this_machine_unknown_device_lists_real_disks():
    with pytest.raises(InputError) as error:
        parse_devices_option("nosuchdisk0")
    message = str(error.value)
    assert "'nosuchdisk0'" in message and "\n" not in message
    if Path("/sys/block/vda").exists():
        assert "vda" in message
