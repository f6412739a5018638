"""Sweeps: parsing, points, and real Spark runs: a cores sweep restarts Spark per point and its event log's
metrics land on their point; a shuffle directory on another device is measured apart.

What the run core does with a sweep (every sample labelled, the manifest's sweep, window rules and warm-ups
per point) is tested in process on the null engine: tests/run/test_loop.py."""

import json

import pytest

from storbench.errors import InputError
from storbench.suites import load_suite
from storbench.run.sweep import Point, parse_sweep_option, sweep_points
from tests.cli.helpers import storbench


def declared():
    return load_suite("terasort").declared_params()


def test_no_sweep_is_one_unlabelled_point():
    assert sweep_points(None, declared(), {"spark_master": "local[*]"}, "x") == [Point()]


def test_cores_on_local_and_cluster_masters():
    local = sweep_points({"cores": ["1", "2"]}, declared(), {"spark_master": "local[*]"}, "x")
    assert [(p.labels, p.engine_options) for p in local] == [
        ({"cores": "1"}, {"spark_master": "local[1]"}),
        ({"cores": "2"}, {"spark_master": "local[2]"}),
    ]
    cluster = sweep_points({"cores": [8]}, declared(), {"spark_master": "spark://10.0.0.1:7077"}, "x")
    assert cluster[0].engine_options == {"spark_conf": {"spark.cores.max": "8"}}


def test_parameter_sweep_coerces_sizes():
    points = sweep_points({"size_bytes": ["1G", "2G"]}, declared(), {"spark_master": "local[*]"}, "x")
    assert [p.params["size_bytes"] for p in points] == [10**9, 2 * 10**9]
    assert points[1].labels == {"size_bytes": "2G"}


@pytest.mark.parametrize(
    "sweep,message",
    [
        ({"cores": ["0"]}, "sweep cores value '0' must be a positive integer"),
        ({"nosuch": [1]}, "cannot sweep 'nosuch'; allowed: "),  # every engine's keys: tests/run/test_options.py
        ({"cores": [1], "size_bytes": [1]}, "sweep one key at a time"),
        ({"size_bytes": ["lots"]}, "size_bytes='lots' must be an integer"),
    ],
)
def test_bad_sweeps_name_what_is_allowed(sweep, message):
    with pytest.raises(InputError, match=message.replace("*", r"\*").replace("(", r"\(")):
        sweep_points(sweep, declared(), {"spark_master": "local[*]"}, "--sweep")


def test_option_parsing():
    assert parse_sweep_option("cores=1, 2") == {"cores": ["1", "2"]}
    with pytest.raises(InputError, match="expected KEY=V1,V2"):
        parse_sweep_option("cores")


@pytest.mark.spark
def test_a_cores_sweep_restarts_spark_and_its_event_log_metrics_land_on_each_point(tmp_path):
    result = storbench(tmp_path / "home", "run", "groupby", "--scale", "20000", "--sweep", "cores=1,2", "--json")
    assert result.returncode == 0, result.stderr
    run_dir = tmp_path / "home" / "runs" / json.loads(result.stdout)["run_id"]
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    spark = {(s["workload"], s["labels"].get("cores")) for s in samples if s["metric"] == "spark_task_time_s"}
    assert spark == {(w, c) for w in ("datagen", "groupby") for c in ("1", "2")}  # the event log's, per point
    by_point = json.loads((run_dir / "manifest.json").read_text())["spark_settings_by_point"]
    assert set(by_point) == {"cores=1", "cores=2"}  # a session of its own per point


@pytest.mark.spark
def test_shuffle_directory_on_another_device_is_measured_apart(tmp_path):
    import subprocess

    from tests.loopdev import loop_device

    mount = tmp_path / "shuffle"
    mount.mkdir()
    with loop_device(tmp_path / "shuffle.img", 256, mkfs=True) as device:
        subprocess.run(["mount", device, str(mount)], check=True)
        try:
            result = storbench(
                tmp_path / "home",
                "run",
                "spark-transforms",
                "--scale",
                "20000",
                "--repeat",
                "1",
                "--target",
                str(tmp_path / "target"),
                "--spark-conf",
                f"spark.local.dir={mount}",
                "--json",
            )
        finally:
            subprocess.run(["umount", str(mount)], check=True)
    assert result.returncode == 0, result.stderr
    run_dir = tmp_path / "home" / "runs" / json.loads(result.stdout)["run_id"]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["config"]["shuffle_devices"] == [device.removeprefix("/dev/")]
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    shuffle = [s for s in samples if s["labels"].get("devices") == "shuffle" and s["workload"] == "repartition"]
    assert {s["metric"] for s in shuffle} >= {"max_util_pct", "written_mb"}
