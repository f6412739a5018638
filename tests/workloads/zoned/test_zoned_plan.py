"""What a zoned job may do, decided before anything starts (no process, no device): plan_zoning on the zoned
devices of the fake sysfs tree (tests/data/telemetry/zoned), the fio job text, fio's zone reset count."""

from __future__ import annotations

from pathlib import Path

import pytest

from storbench.engines import fio_job
from storbench.engines.fio_results import zone_resets
from storbench.errors import InputError
from storbench.telemetry.zoned import Zone, zoned_device
from storbench.workloads import get_workload
from storbench.workloads.fio.zoning import changed_zones, plan_zoning, refuse_plain_writes

SYS = str(Path(__file__).resolve().parents[2] / "data" / "telemetry" / "zoned" / "sys")
ZNS = zoned_device("nvme0n1", SYS)  # host-managed, 32 zones of 64 MiB, max open 14, 4096-byte blocks
HOST_AWARE = zoned_device("sda", SYS)
CONVENTIONAL = zoned_device("sdc", SYS)


def params(**changes):
    base = {"bs": "4m", "size": "256m", "direct": True, "zonemode": "auto", "zone_size": "", "max_open_zones": 0}
    return {**base, **changes}


def test_a_zns_device_gets_zbd_with_its_open_zone_limit():
    zoning, notes = plan_zoning("zoned-write", "write", params(), ZNS, "/dev/nvme0n1")
    assert (zoning.mode, zoning.zone_size, zoning.emulated, zoning.job_bytes, zoning.max_open) == (
        "zbd",
        64 << 20,
        False,
        256 << 20,
        14,
    )
    assert notes == []


def test_a_size_that_is_not_whole_zones_is_rounded_up_and_said():
    zoning, notes = plan_zoning("zoned-write", "write", params(size="100m", max_open_zones=4), ZNS, "/dev/nvme0n1")
    assert (zoning.job_bytes, zoning.max_open) == (128 << 20, 4)
    assert notes == ["size 100m per job is rounded up to 2 whole zone(s) of 64 MiB on /dev/nvme0n1"]


@pytest.mark.parametrize(
    "rw, changes, device, message",
    [
        (
            "randwrite",
            {"zonemode": "none"},
            ZNS,
            "zoned-randwrite: /dev/nvme0n1 (host-managed: 32 zones of 64 MiB, max open 14, max active 14) is host-managed: "
            "random writes without zonemode=zbd miss the write pointers and the device refuses them; "
            "allowed: zonemode=zbd or auto",
        ),
        ("write", {"zonemode": "none"}, ZNS, "sequential writes without zonemode=zbd miss the write pointers"),
        (
            "write",
            {"bs": "6k"},
            ZNS,
            "zoned-write: bs=6k is not a multiple of the 4096-byte logical block of /dev/nvme0n1, which O_DIRECT needs; "
            "allowed: a multiple of 4096, e.g. 4m",
        ),
        (
            "write",
            {"bs": "3m"},
            ZNS,
            "zoned-write: bs=3m does not divide the 64 MiB zones of /dev/nvme0n1, so I/O would straddle zones; "
            "allowed: a block size that divides 64 MiB",
        ),
        (
            "write",
            {"direct": False},
            ZNS,
            "buffered writes (direct=false) reach the zoned /dev/nvme0n1 out of order; allowed: direct=true",
        ),
        (
            "write",
            {"max_open_zones": 15},
            ZNS,
            "max_open_zones=15 is more than the 14 /dev/nvme0n1 allows; allowed: 1 to 14, or 0 for 14",
        ),
        ("write", {"zone_size": "128m"}, ZNS, "whose zones are 64 MiB; allowed: zone_size empty (the device's own)"),
        (
            "write",
            {"zonemode": "zbd"},
            None,
            "zoned-write: zonemode=zbd needs zones and the directory /d has none; allowed: zone_size=64m (fio then "
            "emulates zones of that size), or zonemode=auto",
        ),
        ("read", {"zonemode": "zbd", "zone_size": "64m"}, None, "zonemode=zbd reads on zones fio emulates"),
    ],
)
def test_jobs_a_device_cannot_take_are_refused_in_one_line(rw, changes, device, message):
    name = {"write": "zoned-write", "randwrite": "zoned-randwrite", "read": "zoned-read"}[rw]
    with pytest.raises(InputError) as error:
        plan_zoning(name, rw, params(**changes), device, "/dev/nvme0n1" if device else "the directory /d")
    assert message in str(error.value) and "\n" not in str(error.value)
    assert error.value.exit_code == 2


def test_plain_fio_writes_to_a_host_managed_device_are_refused_and_reads_are_not():
    with pytest.raises(InputError) as error:
        refuse_plain_writes("fio-randwrite", "randwrite", ZNS, "/dev/nvme0n1", "the zoned-randwrite workload")
    assert str(error.value) == (
        "fio-randwrite: /dev/nvme0n1 (host-managed: 32 zones of 64 MiB, max open 14, max active 14) is host-managed: "
        "random writes without zonemode=zbd miss the write pointers and the device refuses them; "
        "allowed: the zoned-randwrite workload"
    )
    refuse_plain_writes("fio-read", "read", ZNS, "/dev/nvme0n1", "")
    refuse_plain_writes("fio-randwrite", "randwrite", HOST_AWARE, "/dev/sda", "")  # the drive handles them
    refuse_plain_writes("fio-write", "write", CONVENTIONAL, "/dev/sdc", "")


def test_what_other_devices_and_file_targets_get():
    # reads of a host-managed device without zbd, and random writes to a host-aware one, are allowed
    assert plan_zoning("zoned-read", "read", params(zonemode="none"), ZNS, "z")[0].mode == "none"
    assert plan_zoning("zoned-randwrite", "randwrite", params(zonemode="none"), HOST_AWARE, "h")[0].mode == "none"
    assert plan_zoning("zoned-write", "write", params(), HOST_AWARE, "h")[0].max_open == 0  # no limit
    assert plan_zoning("zoned-write", "write", params(), CONVENTIONAL, "c")[0].mode == "none"
    plain, _ = plan_zoning("zoned-write", "write", params(size="100m"), None, "files")
    assert (plain.mode, plain.job_bytes) == ("none", 100 << 20)  # no zones: the size as asked
    emulated, _ = plan_zoning("zoned-write", "write", params(zone_size="64m"), None, "files")
    assert (emulated.mode, emulated.emulated, emulated.zone_size) == ("zbd", True, 64 << 20)
    # emulated zones start empty each run: a read of them gets plain I/O
    assert plan_zoning("zoned-read", "read", params(zone_size="64m"), None, "files")[0].mode == "none"


def test_the_job_file_carries_the_zone_options_only_when_zoned():
    spec = fio_job.JobSpec(
        name="zoned-write", rw="write", bs="4m", size="256m", filename="/dev/nvme0n1", zonemode="zbd", max_open_zones=14
    )
    lines = fio_job.job_text(spec).splitlines()
    assert "zonemode=zbd" in lines and "max_open_zones=14" in lines
    assert not any(line.startswith("zonesize=") for line in lines)  # the device's own zones
    assert spec.output_format == "json,normal"  # fio counts zone resets in its normal output only
    plain = fio_job.JobSpec(name="w", rw="write", bs="4m", size="256m", directory="/d")
    assert "zone" not in fio_job.job_text(plain) and plain.output_format == "json"


def test_zone_resets_from_fios_normal_output():
    line = "  write: IOPS=542, BW=2170MiB/s (2275MB/s)(2200MiB/1014msec); 268 zone resets\n"
    assert zone_resets("z: (groupid=0, jobs=1): err= 0\n" + line) == 268
    assert zone_resets(line + line.replace("268", "2")) == 270  # per job without group reporting
    assert zone_resets("  write: IOPS=542, BW=2170MiB/s (2275MB/s)(2200MiB/1014msec)\n") == 0
    assert zone_resets('{"jobs": []}') is None  # JSON alone: not counted


def test_zones_outside_the_claim_must_not_move():
    zone = Zone(524288, 131072, 524288, 2, 1, 131072)
    assert changed_zones([zone], [zone]) == []
    assert changed_zones([zone], [Zone(524288, 131072, 532480, 2, 2, 131072)]) == [zone]  # written
    assert changed_zones([zone], []) == [zone]  # gone from the report


def test_the_zoned_workloads_are_registered_with_the_papers_metrics():
    write, read = get_workload("zoned-write"), get_workload("zoned-read")
    assert [m.name for m in write.metrics][:2] == ["zoned_avg_iops", "zoned_iops_stddev"]
    assert {"zonemode", "zone_size", "max_open_zones", "flush"} <= {p.name for p in write.params}
    assert "flush" not in {p.name for p in read.params}


def test_the_mix_runs_small_random_writes_beside_the_large_ones_in_a_group_of_their_own():
    """zoned-mixed (issue 41 item 3): the large writes' section, then a small-writes section that sets its own
    pattern over [global] (buffered, synced every small_fsync) and starts a reporting group, so fio reports the two
    apart and storbench can say each one's IOPS."""
    mixed = get_workload("zoned-mixed")
    assert {"small_bs", "small_fsync", "flush", "zonemode"} <= {p.name for p in mixed.params}
    assert {"zoned_large_iops", "zoned_small_iops"} <= {m.name for m in mixed.metrics}
    small = {"rw": "randwrite", "bs": "4k", "ioengine": "psync", "direct": "0", "fsync": "256", "new_group": "1"}
    spec = fio_job.JobSpec(
        name="zoned-mixed", rw="write", bs="4m", size="128m", directory="/d", sections=[("small", small)]
    )
    text = fio_job.job_text(spec)
    large, _, rest = text.partition("[zoned-mixed]\n")
    assert "direct=1" in large.splitlines() and rest.startswith("rw=write\n")
    section = rest.split("[small]\n", 1)[1].split("\n\n")[0].splitlines()
    assert section == ["rw=randwrite", "bs=4k", "ioengine=psync", "direct=0", "fsync=256", "new_group=1"]
