"""What a run checks before it starts (one InputError line, nothing stored, nothing left on the target),
the manifest a run writes, and the options that change what it measures."""

import os

import pytest

from storbench import __version__
from storbench.errors import InputError, TargetError
from storbench.results.store import ResultStore
from storbench.run.sweep import parse_sweep_option
from storbench.targets import mem
from tests.run.null_run import run_null

MANIFEST_KEYS = {
    "collector_cpu_s",
    "command_line",
    "config",
    "errors",
    "finished",
    "label",
    "machine",
    "paper",
    "parameters",
    "power",
    "power_cpu_s",
    "process",
    "repetitions",
    "run_id",
    "scale",
    "schema_version",
    "sentinel_cpu_s",
    "software",
    "started",
    "status",
    "suite",
    "suite_source",
    "sweep",
    "tool_version",
    "warmup",
    "window_rules",
    "workload_parameters",
    "workload_versions",
}
CONFIG_KEYS = {
    "devices",
    "devices_how",
    "mode",
    "replication",
    "run_root",
    "shuffle_devices",
    "spark_conf",
    "spark_master",
    "target",
    "telemetry_interval_s",
    "volume",
}


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"label": "a b"}, "--label 'a b': use letters, digits, '.', '_' and '-' only"),
        ({"label": ""}, "--label '': use letters, digits, '.', '_' and '-' only"),
        ({"label": "a" * 65}, "--label: 65 characters; at most 64 allowed"),
        ({"repeat": 0}, "--repeat 0: must be at least 1"),
        ({"warmup": -1}, "--warmup -1: must be between 0 and 100"),
        ({"warmup": 101}, "--warmup 101: must be between 0 and 100"),
        ({"interval": 0.0}, "--interval 0.0: must be between 0.05 and 60 seconds"),
        ({"interval": 61.0}, "--interval 61.0: must be between 0.05 and 60 seconds"),
        ({"mode": "fast"}, "--mode 'fast': allowed: default, compat"),
        ({"idle_s": -1.0}, "--idle-s -1.0: must be between 0 and 3600 seconds"),
        (
            {"engine_options": {"spark_master": "bogus://x"}},
            "--spark-master 'bogus://x': allowed: local, local[N], local[*], local[N,M]",
        ),
        ({"suite": "nosuch"}, "unknown suite or workload 'nosuch'"),
        ({"overrides": {"size": "lots"}}, "--set: size='lots' must be an integer"),
        ({"overrides": {"fail": "often"}}, "--set: fail='often' is not allowed; allowed: '' (empty), error, crash"),
        ({"sweep": {"nosuch": ["1"]}}, "--sweep: cannot sweep 'nosuch'; allowed: "),
        (
            {"sweep": {"size": ["1"], "null.x": ["1"]}},
            "--sweep: sweep one key at a time (change one variable, as the papers do); got size, null.x",
        ),
        ({"sweep": {"size": []}}, "--sweep: sweep.size must be a non-empty list of values"),
        # issue 25 case 3: each point gets the checks --set gets; two points of one setting are refused
        (
            {"sweep": {"fail_step": ["", "target-release"]}, "target": None},
            "--sweep point fail_step=target-release: null-write: fail_step=target-release needs a mem://NAME target",
        ),
        (
            {"sweep": {"size": ["1000", "1K"]}},
            "--sweep: sweep size: point 2 (1K) repeats point 1 (1000); each point needs its own value",
        ),
        ({"engine_options": {"null_hosts": "10.0.0.1"}}, "null_hosts '10.0.0.1': expected a list of host names"),
        ({"target": "mem://Bad Name"}, "--target 'mem://Bad Name': expected mem://NAME"),
        (
            {"replication": 2},
            "--replication 2: applies to cassandra:// and hdfs:// targets only; the target is mem://x",
        ),
        ({"nodes": "n.yaml", "node_specs": ["a=http://127.0.0.1:1"]}, "--nodes and --node: give the nodes one way"),
        ({"telemetry": "node_exporter"}, "--telemetry node_exporter: needs the cluster's nodes"),
        (
            {"overrides": {"fail_step": "target-release"}, "target": None},
            "null-write: fail_step=target-release needs a mem://",
        ),
    ],
)
def test_bad_options_are_one_line_and_store_nothing(tmp_path, fields, message):
    options = {"target": "mem://x", **fields}
    with pytest.raises(InputError) as refused:
        run_null(tmp_path, **options)
    assert str(refused.value).startswith(message) and "\n" not in str(refused.value)
    assert not (tmp_path / "home" / "runs").exists() or not list((tmp_path / "home" / "runs").iterdir())
    assert not mem.volume("x").files


def test_a_key_that_neither_an_engine_nor_a_workload_takes_lists_what_can_be_swept(tmp_path):
    with pytest.raises(InputError) as refused:
        run_null(tmp_path, sweep={"nosuch": ["1"]})
    engines, _, params = (
        str(refused.value).removeprefix("--sweep: cannot sweep 'nosuch'; allowed: ").partition(", or a parameter: ")
    )
    assert engines == "a null.* setting"  # the run's engines' keys only (issue 25 case 3)
    assert params == "fail, fail_at, fail_step, flush, note, signal, size, sleep_ms"


def test_a_key_of_an_engine_the_run_does_not_use_is_refused(tmp_path):
    with pytest.raises(InputError) as refused:
        run_null(tmp_path, sweep={"cores": ["1", "2"]})
    assert str(refused.value).startswith(
        "--sweep: cannot sweep 'cores' (cores is the spark engine's, which this "
        "run does not use); allowed: a null.* setting, or a parameter: fail,"
    )


def test_a_sweep_option_is_one_key_and_its_values():
    assert parse_sweep_option(" null.x = 1, 2") == {"null.x": ["1", "2"]}
    for text, n in (("size=1,,2", 2), ("size=1,2,", 3), ("size=,1", 1)):  # issue 25 case 3: not dropped
        with pytest.raises(InputError, match=f"^--sweep '{text}': value {n} is empty; give every point a value$"):
            parse_sweep_option(text)
    for text in ("cores", "=1,2", "size=", "size= , "):
        with pytest.raises(InputError) as refused:
            parse_sweep_option(text)
        assert str(refused.value) == f"--sweep {text!r}: expected KEY=V1,V2,... e.g. cores=1,2 or size_bytes=1G,2G"


def test_a_target_too_small_is_refused_before_the_claim(tmp_path):
    with pytest.raises(TargetError, match=r"^target mem://x: needs about 2\.15 GB for this run .* only 1\.07 GB"):
        run_null(tmp_path, overrides={"size": str(2 << 30)})
    assert not mem.volume("x").files


def test_the_manifest_records_the_run(tmp_path):
    run = run_null(
        tmp_path, label="smoke", repeat=1, command_line=["storbench", "run", "null"], overrides={"size": "1000"}
    )
    manifest = run.manifest
    assert set(manifest) == MANIFEST_KEYS and set(manifest["config"]) == CONFIG_KEYS
    assert manifest["run_id"] == run.path.name and manifest["run_id"].split("-")[2] == "smoke"
    assert (manifest["label"], manifest["suite"], manifest["scale"], manifest["status"]) == (
        "smoke",
        "null",
        "tiny",
        "succeeded",
    )
    assert manifest["tool_version"] == __version__ and manifest["command_line"] == ["storbench", "run", "null"]
    assert manifest["parameters"]["size"] == 1000 and manifest["workload_parameters"]["null-read"]["size"] == 1000
    assert manifest["workload_versions"] == {"null-write": "1", "null-read": "1"}
    assert manifest["config"]["target"] == "mem://x" and manifest["config"]["volume"] == "x"
    assert manifest["config"]["devices"] == [] and manifest["config"]["devices_how"] == "in memory"
    assert manifest["config"]["telemetry_interval_s"] == 0.05 and manifest["errors"] == []
    assert manifest["started"] <= manifest["finished"]
    assert manifest["process"]["pid"] == os.getpid() and manifest["process"]["start_ticks"] > 0  # for liveness
    stored = ResultStore(tmp_path / "home").list_runs("smoke")  # indexed for `storbench runs` and compare
    assert [r.run_id for r in stored] == [manifest["run_id"]]


def test_the_terminal_names_the_run_and_each_step(tmp_path):
    run = run_null(tmp_path, repeat=2, sweep={"size": ["1000", "2000"]})
    lines = [line.split("] ", 1)[1].split(": done")[0] for line in run.stderr.splitlines()]
    assert lines[0] == (
        f"run {run.manifest['run_id']}: suite null, scale tiny, 2 repetition(s), target mem://x, devices none"
    )
    assert lines[1:] == [
        f"{w} (repetition {r}/2) [size={size}]"
        for size in ("1000", "2000")
        for r in (1, 2)
        for w in ("null-write", "null-read")
    ]


def test_a_numeric_scale_sets_the_scale_parameter(tmp_path):
    run = run_null(tmp_path, scale="5k", repeat=1)
    assert run.manifest["scale"] == "5000" and run.manifest["parameters"]["size"] == 5000


def test_an_idle_baseline_runs_before_the_first_workload(tmp_path):
    run = run_null(tmp_path, repeat=1, idle_s=0.05)
    assert run.status == "succeeded"
    lines = [line.split("] ", 1)[1] for line in run.stderr.splitlines()]
    assert lines[1].startswith("idle baseline (0.05 s): done in") and lines[1].endswith("power not measured")
    assert lines[2].startswith("null-write (repetition 1/1): done in")


def test_a_cluster_master_warns_that_only_this_machine_is_measured(tmp_path):
    run = run_null(tmp_path, repeat=1, engine_options={"spark_master": "spark://10.0.0.1:7077"})
    assert (
        "warning: telemetry measures only this machine (the driver), not the nodes of spark://10.0.0.1:7077"
        in run.stderr
    )
    assert run.manifest["config"]["spark_master"] == "spark://10.0.0.1:7077"


def test_compat_mode_is_recorded(tmp_path):
    assert run_null(tmp_path, repeat=1, mode="compat").manifest["config"]["mode"] == "compat"
