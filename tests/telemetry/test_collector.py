"""The collector on this machine: thread safety, time origin, and a live dd measured to within 5 %."""

import os
import shutil
import subprocess
import threading
import time

import pytest

from storbench.telemetry import Collector, devices_for_path, window_metrics
from tests.loopdev import loop_device

DD_MIB = 256
DD_MB = DD_MIB * 1024 * 1024 / 1e6  # 268.435456


def test_marks_from_many_threads_keep_snapshots_in_time_order():
    collector = Collector([], interval=0.05)
    collector.start()
    marks: list[float] = []
    threads = [threading.Thread(target=lambda: marks.extend(collector.mark() for _ in range(20))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    time.sleep(0.2)
    collector.stop()
    times = [p.time for p in collector.points()]
    assert times == sorted(times) and len(set(times)) == len(times)
    assert set(marks) <= set(times)
    assert len(times) >= 80 + 2 + 1  # marks, start and stop, at least one tick
    assert collector.cpu_seconds > 0


def test_start_takes_the_origin_snapshot_and_rates_are_relative_to_it():
    collector = Collector([], interval=0.05)
    collector.start()
    origin = collector.points()[0].time
    time.sleep(0.3)
    collector.stop()
    rows = collector.rates()
    assert rows and all(row["t"] > 0 for row in rows)
    assert rows[-1]["t"] == pytest.approx(collector.points()[-1].time - origin, abs=1e-4)
    assert [row["t"] for row in rows] == sorted(row["t"] for row in rows)
    assert rows[0]["read_mbps"] is None  # no devices measured: not zero
    assert rows[0]["cpu_pct"] is not None


def test_stop_without_start_is_harmless():
    collector = Collector([], interval=1.0)
    collector.stop()
    collector.stop()
    assert len(collector.points()) == 2


def _dd_window(tmp_path, devices: list[str]) -> dict:
    target = tmp_path / "f"
    collector = Collector(devices, interval=0.2)
    collector.start()
    try:
        os.sync()  # dirty pages of others written now, not inside the window
        start = collector.mark()
        subprocess.run(
            ["dd", "if=/dev/zero", f"of={target}", "bs=1M", f"count={DD_MIB}", "oflag=direct", "conv=fsync"],
            check=True,
            capture_output=True,
        )
        end = collector.mark()
    finally:
        collector.stop()
        target.unlink(missing_ok=True)
    return window_metrics(collector.points(), start, end, collector.interval)


@pytest.mark.real  # losetup, mkfs and mount
def test_live_dd_is_measured_on_the_device_behind_the_path(tmp_path):
    """dd onto a file system of its own (a loop device nothing else writes to): the device behind the path is
    found, and the window holds dd's bytes. On the machine's shared disk other programs' writes landed in the
    window whenever the machine was busy (a parallel test run, other services)."""
    if shutil.which("dd") is None or shutil.which("mount") is None:
        pytest.skip("dd and mount are needed")
    mount = tmp_path / "mnt"
    mount.mkdir()
    with loop_device(tmp_path / "disk.img", 2 * DD_MIB, mkfs=True) as device:
        subprocess.run(["mount", device, str(mount)], check=True)
        try:
            resolution = devices_for_path(str(mount))
            assert resolution.devices == [device.removeprefix("/dev/")], resolution
            metrics = _dd_window(mount, resolution.devices)
        finally:
            subprocess.run(["umount", str(mount)], check=True)
    # dd's bytes and the file's metadata (the journal's few blocks at the fsync)
    assert DD_MB <= metrics["written_mb"] <= 1.05 * DD_MB, (resolution, metrics["written_mb"])
    assert metrics["max_write_mbps"] > 0 and metrics["avg_write_latency_ms"] is not None
    assert 0 < metrics["max_util_pct"] <= 100
