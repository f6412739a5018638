"""Issue 17: `storbench run WORKLOAD` runs one workload alone, prints a short summary, `show` the full table."""

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.cli.helpers import ANSI, JVM_NOISE, storbench

pytestmark = pytest.mark.real  # the CLI as a child process, on Spark


def _manifest(home: Path) -> dict:
    return json.loads(next(home.glob("runs/*/manifest.json")).read_text())


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed")
def test_a_fio_workload_runs_alone_with_a_short_summary(tmp_path):
    home, target = tmp_path / "home", tmp_path / "target"
    target.mkdir()
    done = storbench(
        home, "run", "fio-randread", "--target", str(target), "--set", "runtime_s=2", "--set", "size=8m", timeout=300
    )
    assert done.returncode == 0, done.stderr
    manifest = _manifest(home)
    assert manifest["suite"] == "fio-randread" and manifest["status"] == "succeeded"
    assert manifest["suite_source"] == "workload fio-randread (sizes of suite fio-basic)"
    assert manifest["repetitions"] == 1
    lines = done.stdout.splitlines()
    # fio's own figures lead (its headline: bandwidth, IOPS ...), time and device telemetry after them, then what
    # held the operation (the machine's CPU or its device, or nothing at capacity: issue 40's N=1)
    header, device, held = [line for line in lines if line.strip().startswith("Operation")]
    assert "fio bandwidth" in header and "Time s" in device and "Read MB/s max" in device
    assert lines.index("Headline figures") < lines.index(header) < lines.index("Time and device telemetry")
    assert "Bound by" in held and lines.index(device) < lines.index(held)
    verdict = next(line for line in lines[lines.index(held) :] if line.strip().startswith("fio-randread"))
    assert re.search(r"fio-randread +(CPU|device|nothing at capacity) ", verdict), verdict
    row = next(line for line in lines if line.strip().startswith("fio-randread"))
    assert row.split()[2] == "MB/s" and row.split()[4] == "IOPS"  # fio's own bandwidth and IOPS
    assert not any("Per-second IOPS" in line for line in lines)  # the detail waits for `show`
    assert len(lines) < 24  # three short tables: the headline, time and devices, what held it
    shown = storbench(home, "show", manifest["run_id"])
    assert shown.returncode == 0 and "Per-second IOPS" in shown.stdout and "Configuration" in shown.stdout


@pytest.mark.spark
def test_a_spark_workload_runs_alone_after_its_data_generator(tmp_path):
    """Also a default run's quiet terminal (issue 17): Spark's and the JVM's lines only in the run's spark.log;
    captured output gets plain progress lines with the run's ETA."""
    home = tmp_path / "home"
    done = storbench(home, "run", "groupby", "--scale", "20K", timeout=600)
    assert done.returncode == 0, done.stderr
    run_dir = next(home.glob("runs/*"))
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    timed = {(s["workload"], s["repetition"]) for s in samples if s["metric"] == "completion_time"}
    assert timed == {("datagen", 0), ("groupby", 1)}  # datagen untimed first (prepare), groupby once
    for pattern in JVM_NOISE:
        assert pattern not in done.stdout and pattern not in done.stderr, pattern
    assert not ANSI.search(done.stdout + done.stderr)  # not a terminal: plain lines
    assert re.search(r"^\[\d\d:\d\d\] datagen: done in .*\[step 1/2, ETA \d\d:\d\d\]$", done.stderr, re.M), done.stderr
    assert "Setting default log level" in (run_dir / "spark.log").read_text()  # Spark's own line went there
    assert not (run_dir / "spark-driver.log").exists()
