"""`flush`: the timed window of a writing workload ends once its data is on the device.

A workload writing to an ext4 file system of its own (a loop device, so no other writer shares
the device): with flush the device's writes over the window account for the data written;
without it the window ends with the data still in the page cache.
"""

import json
import subprocess
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.cli.helpers import storbench
from tests.loopdev import loop_device

pytestmark = pytest.mark.real  # loop devices, the CLI as a child process


@contextmanager
def mounted_ext4(base: Path, size_mb: int):
    """A fresh ext4 on a loop device, mounted; its inode tables and journal written at mkfs (lazy
    initialisation would write them in the background, into the windows measured)."""
    with loop_device(base / "disk.img", size_mb) as device:
        subprocess.run(
            ["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", device],
            check=True,
            capture_output=True,
        )
        mount = base / "mnt"
        mount.mkdir()
        mounted = subprocess.run(["mount", device, str(mount)], capture_output=True, text=True)
        if mounted.returncode != 0:
            pytest.skip(f"cannot mount a loop device here: {mounted.stderr.strip()}")
        try:
            yield device, mount
        finally:
            subprocess.run(["umount", str(mount)], check=False)


def _by_point(samples: list[dict], workload: str, metric: str) -> dict[str, float]:
    return {
        s["labels"]["flush"]: s["value"]
        for s in samples
        if s["workload"] == workload and s["metric"] == metric and set(s["labels"]) == {"flush"}
    }


def test_with_flush_the_device_writes_in_the_window_account_for_the_data_written(tmp_path):
    # fio's buffered sequential write: the window's end is ctx.measure's, the same for every writing workload
    # (datagen measured the same way by hand: 45.48 MB on the device for a 45.38 MB dataset, 0.03 without)
    home, size = tmp_path / "home", 48 * 2**20
    with mounted_ext4(tmp_path, 400) as (device, mount):
        # flush=true first: the second point's window must not see the first point's write-back
        result = storbench(
            home,
            "run",
            "fio-write",
            "--target",
            str(mount),
            "--repeat",
            "1",
            "--interval",
            "0.1",
            "--set",
            f"size={size}",
            "--set",
            "bs=1m",
            "--set",
            "numjobs=1",
            "--set",
            "runtime_s=0",
            "--set",
            "ramp_time_s=0",
            "--set",
            "direct=false",
            "--sweep",
            "flush=true,false",
            "--json",
        )
        assert result.returncode == 0, result.stderr
        run = Path(json.loads(result.stdout)["path"])
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["config"]["devices"] == [Path(device).name]
    samples = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    written = _by_point(samples, "fio-write", "written_mb")
    # with flush: the device wrote the data (plus the file system's own metadata) inside the window
    assert written["true"] == pytest.approx(size / 1e6, rel=0.10)
    # without: it had not reached the device when the window closed
    assert written["false"] < 0.5 * size / 1e6
    assert manifest["window_rules"]["fio-write [flush=true]"] == {"flush": "syncfs"}
    assert manifest["window_rules"]["fio-write [flush=false]"] == {"flush": "off"}
