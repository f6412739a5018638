"""The loop: points × prepare steps × warm-ups × repetitions, and what each recorded window leaves."""

import pytest

from storbench import __version__
from tests.run.null_run import run_null

WORKLOADS = ("null-write", "null-read")


def test_each_repetition_runs_every_workload_once_in_suite_order(tmp_path):
    run = run_null(tmp_path, repeat=3)
    assert run.status == "succeeded" and run.errors == []
    assert run.times() == [(w, r, {}) for r in (1, 2, 3) for w in WORKLOADS]
    assert all(s["value"] > 0 for s in run.samples if s["metric"] == "completion_time")
    # the workload's own samples and the telemetry's carry the repetition too
    assert [(s["workload"], s["repetition"]) for s in run.samples if s["metric"] == "null_mbps"] == [
        (w, r) for r in (1, 2, 3) for w in WORKLOADS
    ]
    assert {s["metric"] for s in run.samples} >= {"max_read_mbps", "max_cpu_pct", "null_mbps"}
    # the engine is told before each workload's prepare step and after its window
    assert run.events[:5] == [
        "target claim",
        "engine start",
        "engine begin null-write 1",
        "workload prepare null-write",
        "workload run null-write 1",
    ]
    assert run.events[5] == "engine end null-write 1"
    assert run.manifest["repetitions"] == 3 and run.manifest["software"] == {
        "storbench": __version__,
        "null": __version__,
    }


def test_the_suite_s_repetitions_unless_repeat_says_otherwise(tmp_path):
    assert {r for _, r, _ in run_null(tmp_path).times()} == {1, 2}  # null.yaml: repetitions 2


def test_a_prepare_step_is_repetition_0_and_runs_once_per_point(tmp_path):
    """`storbench run null-read` runs null-write first, untimed (its `after`), then null-read once."""
    run = run_null(tmp_path, suite="null-read", sweep={"size": ["1000", "2000"]})
    assert run.status == "succeeded", run.errors
    assert [(w, r, labels["size"]) for w, r, labels in run.times()] == [
        ("null-write", 0, "1000"),
        ("null-read", 1, "1000"),
        ("null-write", 0, "2000"),
        ("null-read", 1, "2000"),
    ]
    assert run.manifest["suite_source"] == "workload null-read (sizes of suite null)"


def test_a_sweep_runs_the_suite_per_point_and_labels_every_sample(tmp_path):
    run = run_null(tmp_path, repeat=1, sweep={"size": ["1000", "2000"]})
    assert [(w, labels) for w, _, labels in run.times()] == [
        (w, {"size": size}) for size in ("1000", "2000") for w in WORKLOADS
    ]
    assert all(s["labels"].get("size") in ("1000", "2000") for s in run.samples)  # telemetry's and the workload's
    assert run.manifest["sweep"] == [{"size": "1000"}, {"size": "2000"}]
    assert run.manifest["parameters"]["size"] == 65536  # the suite's; each point's value is its label
    assert "engine begin null-read 1 [size=2000]" in run.events
    windows = run.json("windows.json")  # the series' windows, for the report's charts
    assert [(w["workload"], w["size"]) for w in windows] == [(w, size) for size in ("1000", "2000") for w in WORKLOADS]
    assert all(0 <= w["t0"] <= w["t1"] for w in windows)


def test_a_sweep_of_an_engine_s_own_setting_reconfigures_it_before_each_point(tmp_path):
    """null.*: the null engine's; each point reconfigures it first, and its settings are recorded per point."""
    run = run_null(tmp_path, repeat=1, sweep={"null.depth": ["1", "2"]})
    assert run.status == "succeeded", run.errors
    assert [labels for _, _, labels in run.times()] == [{"null.depth": "1"}] * 2 + [{"null.depth": "2"}] * 2
    assert [e for e in run.events if e.startswith(("engine reconfigure", "engine begin"))] == [
        event
        for depth in ("1", "2")
        for event in (
            f"engine reconfigure [null.depth={depth}]",
            f"engine begin null-write 1 [null.depth={depth}]",
            f"engine begin null-read 1 [null.depth={depth}]",
        )
    ]
    assert run.manifest["null_settings_by_point"] == {
        "null.depth=1": {"null.depth": "1"},
        "null.depth=2": {"null.depth": "2"},
    }
    assert "null_settings" not in run.manifest  # none before the first point


def test_a_secret_setting_s_points_are_numbered_and_its_values_never_kept(tmp_path):
    run = run_null(tmp_path, repeat=1, sweep={"null.password": ["hunter2", "opensesame"]})
    assert run.status == "succeeded", run.errors
    assert run.manifest["sweep"] == [{"null.password": "***1"}, {"null.password": "***2"}]
    assert run.manifest["null_settings_by_point"] == {
        "null.password=***1": {"null.password": "***"},
        "null.password=***2": {"null.password": "***"},
    }
    assert "engine reconfigure [null.password=***2]" in run.events
    kept = "".join(path.read_text() for path in run.path.iterdir())
    assert "hunter2" not in kept and "opensesame" not in kept


def test_warm_ups_run_per_point_before_the_recorded_repetitions_and_store_nothing(tmp_path):
    """--warmup 2 on a 2-point sweep: 4 warm-ups of each workload, shown, never recorded; what the workload
    keeps (artifacts.json) holds only the recorded windows'."""
    run = run_null(tmp_path, repeat=1, warmup=2, sweep={"size": ["1000", "2000"]})
    assert run.status == "succeeded", run.errors
    for point in ("size=1000", "size=2000"):
        for n in (1, 2):
            for workload in WORKLOADS:
                assert f"{workload} (warm-up {n}/2) [{point}]" in run.stderr
        assert run.events.count(f"engine begin null-write -1 [{point}]") == 2  # the engines' warm-up tag
    assert "warm-up 3/2" not in run.stderr
    assert run.manifest["warmup"] == 2 and run.manifest["repetitions"] == 1
    assert {s["repetition"] for s in run.samples} == {1}
    assert sorted(labels["size"] for w, _, labels in run.times() if w == "null-write") == ["1000", "2000"]
    kept = run.json("artifacts.json")["null"]
    assert kept == [{"workload": w, "repetition": 1} for _ in range(2) for w in WORKLOADS]
    # per point: both warm-ups of every workload, then the recorded repetition
    runs = [e for e in run.events if e.startswith("workload run null-write")]
    assert runs == ["workload run null-write -1"] * 2 + ["workload run null-write 1"] + [
        "workload run null-write -1"
    ] * 2 + ["workload run null-write 1"]


@pytest.mark.parametrize("flush, rule", [("true", "none"), ("false", "off")])
def test_window_rules_are_recorded_per_workload(tmp_path, flush, rule):
    """flush on: the target says how it made the data durable (memory: "none"); off: "off". A read after an
    evict that dropped nothing (memory has no page cache) ran warm."""
    run = run_null(tmp_path, repeat=2, overrides={"flush": flush})
    assert run.manifest["window_rules"] == {"null-write": {"flush": rule}, "null-read": {"cache": "warm"}}


def test_window_rules_of_a_sweep_are_kept_per_point(tmp_path):
    run = run_null(tmp_path, suite="null-write", sweep={"flush": ["true", "false"]})
    assert run.manifest["window_rules"] == {
        "null-write [flush=true]": {"flush": "none"},
        "null-write [flush=false]": {"flush": "off"},
    }


def test_a_file_target_s_flush_is_syncfs(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    run = run_null(tmp_path, suite="null-write", target=str(target))
    assert run.manifest["window_rules"] == {"null-write": {"flush": "syncfs"}}
    assert list(target.iterdir()) == []


def test_the_window_is_the_timed_action_and_nothing_around_it(tmp_path):
    """sleep_ms inside ctx.measure(): each window at least that long; prepare and cleanup stay outside it."""
    run = run_null(tmp_path, repeat=2, overrides={"sleep_ms": "30"})
    times = [s["value"] for s in run.samples if s["metric"] == "completion_time"]
    windows = run.json("windows.json")
    assert len(times) == len(windows) == 4 and all(t >= 0.03 for t in times)  # sleep_ms; no upper bound (speed)
    assert times == pytest.approx([w["t1"] - w["t0"] for w in windows], abs=1e-3)  # each sample is its window
    assert all(a["t1"] <= b["t0"] for a, b in zip(windows, windows[1:]))  # one after the other, in order
