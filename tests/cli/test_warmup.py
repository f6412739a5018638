"""--warmup N: N unrecorded repetitions before the recorded ones, per sweep point."""

import json
from pathlib import Path

from tests.cli.helpers import storbench


def test_warmup_repetitions_run_per_point_and_store_no_samples(tmp_path):
    home, target = tmp_path / "home", tmp_path / "target"
    target.mkdir()
    result = storbench(home, "run", "fio-write", "--target", str(target), "--warmup", "2", "--repeat", "1",
                       "--set", "size=1m", "--set", "numjobs=1", "--set", "runtime_s=0", "--set", "ramp_time_s=0",
                       "--set", "direct=false", "--set", "flush=false", "--sweep", "bs=64k,128k", "--interval", "0.1")
    assert result.returncode == 0, result.stderr
    for point in ("bs=64k", "bs=128k"):  # shown in progress, twice per sweep point
        for n in (1, 2):
            assert f"fio-write (warm-up {n}/2) [{point}]" in result.stderr
    assert "warm-up 3/2" not in result.stderr
    run = Path(next(line for line in result.stdout.splitlines() if line.startswith("results:")).split()[1])
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["warmup"] == 2 and manifest["repetitions"] == 1
    samples = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    assert {s["repetition"] for s in samples} == {1}
    times = [s for s in samples if s["metric"] == "completion_time"]
    assert sorted(s["labels"]["bs"] for s in times) == ["128k", "64k"]  # one recorded window per point
    kept = json.loads((run / "artifacts.json").read_text())["fio"]["workloads"]["fio-write"]["runs"]
    assert len(kept) == 2  # fio's JSON of the recorded windows only, none of the 4 warm-ups


def test_warmup_must_not_be_negative(tmp_path):
    result = storbench(tmp_path / "home", "run", "fio-write", "--target", str(tmp_path), "--warmup", "-1")
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert lines == ["storbench: error: --warmup -1: must be between 0 and 100"]
