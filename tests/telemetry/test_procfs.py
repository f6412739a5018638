"""Parsers against golden /proc files, and RAPL energy with wraparound."""

from pathlib import Path

import pytest

from storbench.telemetry.procfs import (
    CounterFiles,
    DiskCounters,
    EnergyMeter,
    NetCounters,
    non_loopback_total,
    parse_diskstats,
    parse_meminfo,
    parse_net_dev,
    parse_stat,
    read_cpu,
    read_diskstats,
    read_memory,
    read_net,
)


def test_diskstats_14_fields_has_no_discard_or_flush(data):
    disks = parse_diskstats((data / "proc" / "diskstats-4.14").read_text())
    assert list(disks) == ["sda", "sda1", "vda"]
    assert disks["sda"] == DiskCounters(81234, 1234, 5234567, 45678, 23456, 7890, 3456789, 123456, 0, 67890, 169134)
    assert disks["sda"].discards is None and disks["sda"].flushes is None


def test_diskstats_18_fields_has_discards(data):
    sda = parse_diskstats((data / "proc" / "diskstats-5.4").read_text())["sda"]
    assert (sda.io_ticks, sda.discards, sda.discard_sectors, sda.discard_ms) == (67890, 120, 983040, 77)
    assert sda.flushes is None


def test_diskstats_20_fields_has_flushes(data):
    nvme = parse_diskstats((data / "proc" / "t0" / "diskstats").read_text())["nvme0n1"]
    assert (nvme.reads, nvme.read_sectors, nvme.in_flight, nvme.flushes, nvme.flush_ms) == (
        2000000,
        400000000,
        2,
        30000,
        1500,
    )


def test_diskstats_keeps_only_the_measured_devices(data):
    disks = read_diskstats(CounterFiles(str(data / "proc" / "t0")), frozenset({"sda", "nosuch"}))
    assert list(disks) == ["sda"]


def test_stat_aggregate_line_excludes_guest_time(data):
    cpu = parse_stat((data / "proc" / "t0" / "stat").read_text())
    assert (cpu.user, cpu.idle, cpu.iowait, cpu.steal) == (1000000, 8000000, 50000, 500)
    assert cpu.total == 1000000 + 2000 + 300000 + 8000000 + 50000 + 0 + 10000 + 500  # guest 4000 left out
    assert cpu.busy == cpu.total - 8000000 - 50000
    assert read_cpu(CounterFiles(str(data / "proc" / "t0"))) == cpu  # reads only the first line


def test_stat_without_aggregate_line_is_an_error():
    with pytest.raises(ValueError):
        parse_stat("cpu0 1 2 3 4 5 6 7 8\n")


def test_net_dev_per_interface_and_without_loopback(data):
    interfaces = parse_net_dev((data / "proc" / "t0" / "net" / "dev").read_text())
    assert list(interfaces) == ["lo", "eth0", "wlan0", "docker0"]
    assert interfaces["eth0"] == NetCounters(5000000000, 1000000000)
    assert non_loopback_total(interfaces) == NetCounters(5070000000, 1008000000)
    assert non_loopback_total(read_net(CounterFiles(str(data / "proc" / "t0")))) == NetCounters(5070000000, 1008000000)


def test_meminfo_in_bytes(data):
    info = parse_meminfo((data / "proc" / "t0" / "meminfo").read_text())
    assert info["MemTotal"] == 16303324 * 1024
    assert info["HugePages_Total"] == 0 and info["Hugepagesize"] == 2048 * 1024
    assert list(parse_meminfo((data / "proc" / "t0" / "meminfo").read_text(), until=("MemTotal", "MemAvailable"))) == [
        "MemTotal",
        "MemFree",
        "MemAvailable",
    ]
    assert read_memory(CounterFiles(str(data / "proc" / "t1"))) == (16303324 * 1024, 12227493 * 1024)


def test_missing_files_read_as_not_measured(tmp_path):
    files = CounterFiles(str(tmp_path))
    assert read_diskstats(files, frozenset({"sda"})) == {}
    assert read_cpu(files) is None and read_net(files) is None and read_memory(files) is None


def test_counter_files_reread_the_current_content(tmp_path):
    (tmp_path / "stat").write_text("cpu  1 2 3 4 5 6 7 8\n")
    files = CounterFiles(str(tmp_path))
    assert read_cpu(files).user == 1
    (tmp_path / "stat").write_text("cpu  9 2 3 4 5 6 7 8 0 0\ncpu0 9 2 3 4 5 6 7 8 0 0\n")  # same inode, new text
    assert read_cpu(files).user == 9
    big = "x" * (3 * CounterFiles.CHUNK + 5)
    (tmp_path / "big").write_text(big)
    assert files.read("big") == big
    files.close()
    assert read_cpu(files).user == 9  # reopens after close


def _zone(root: Path, name: str, energy: int, max_range: int = 1000) -> Path:
    zone = root / "class" / "powercap" / name
    zone.mkdir(parents=True)
    (zone / "energy_uj").write_text(f"{energy}\n")
    (zone / "max_energy_range_uj").write_text(f"{max_range}\n")
    return zone


def test_energy_sums_packages_and_undoes_wraparound(tmp_path):
    package0 = _zone(tmp_path, "intel-rapl:0", 900)
    package1 = _zone(tmp_path, "intel-rapl:1", 100)
    core = _zone(tmp_path, "intel-rapl:0:0", 500)  # a sub-zone of package 0: must not count twice
    meter = EnergyMeter(str(tmp_path))
    assert meter.read() == 0
    (package0 / "energy_uj").write_text("50\n")  # wrapped: 900 → 1000 → 50 is 150 µJ
    (package1 / "energy_uj").write_text("130\n")
    (core / "energy_uj").write_text("999\n")
    assert meter.read() == 180


def test_energy_not_measured_without_rapl(tmp_path):
    meter = EnergyMeter(str(tmp_path))
    assert not meter.available and meter.read() is None
