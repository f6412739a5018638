"""What the session does around the loop: the ETA from earlier runs, errors recorded on a full disk, the engines'
logs after a failure, an exit that is no error, a target that claims no root, and RAPL read by the collector."""

import json
import time

import pytest

from storbench.engines import null
from storbench.progress import Progress
from storbench.results.store import ResultStore, RunWriter
from storbench.targets import mem
from storbench.telemetry.procfs import EnergyMeter
from tests.run.null_run import after, run_null

CLEANUP = [
    "engine cancel",
    "telemetry stop",
    "telemetry series",
    "workload cleanup null-write",
    "workload cleanup null-read",
    "target release",
    "engine stop",
    "engine collect",
]


def test_the_eta_comes_from_the_last_like_run_and_an_unreadable_store_only_loses_it(tmp_path, monkeypatch):
    expected = []
    plan = Progress.plan

    def recorded(self, total_steps, expected_s=None):
        expected.append(expected_s)
        plan(self, total_steps, expected_s)

    monkeypatch.setattr(Progress, "plan", recorded)
    run_null(tmp_path, repeat=1)
    run_null(tmp_path, repeat=1)

    def unreadable(self, *args, **kwargs):
        raise OSError("index.sqlite: database disk image is malformed")

    monkeypatch.setattr(ResultStore, "list_runs", unreadable)
    run = run_null(tmp_path, repeat=1)
    assert run.status == "succeeded" and run.errors == []
    assert expected[0] is None and expected[1] >= 1.0 and expected[2] is None


def test_an_error_recorded_on_a_full_disk_is_still_shown_and_kept_by_the_next_write(tmp_path, monkeypatch):
    update = RunWriter.update_manifest
    refused = []

    def full_once(self, **fields):
        if "errors" in fields and not refused:
            refused.append(fields["errors"])
            self.manifest.update(fields)  # as update_manifest does before it writes
            raise OSError(28, "No space left on device")
        update(self, **fields)

    monkeypatch.setattr(RunWriter, "update_manifest", full_once)
    run = run_null(tmp_path, repeat=2, overrides={"fail": "error", "fail_at": "2"})
    error = {"workload": "null-write", "repetition": 2, "error": "null-write: failed at repetition 2 (fail=error)"}
    assert refused == [[error]]  # the write that failed
    assert run.status == "failed" and run.manifest["errors"] == [error]  # finish's write carried it
    assert "warning: null-write: null-write: failed at repetition 2 (fail=error)" in run.stderr
    assert after(run.events, "engine cancel") == CLEANUP


def test_a_failed_run_shows_the_last_lines_of_each_engine_s_log(tmp_path):
    run = run_null(tmp_path, repeat=1, overrides={"fail": "crash"})
    assert run.status == "failed"
    assert run.stderr.endswith(
        f"warning: the last relevant lines of {run.path / 'null-engine.json'}:\n  cancel\n  stop\n  collect\n"
    )
    assert "the last relevant lines" not in run_null(tmp_path, repeat=1).stderr  # only a failed run's


def test_an_exit_from_a_workload_still_cleans_up_and_goes_on_up(tmp_path):
    """SystemExit is neither an error of the run nor an interrupt: the cleanup runs, the run stays failed and
    the exit reaches the caller."""
    with pytest.raises(SystemExit) as exited:
        run_null(tmp_path, repeat=2, overrides={"fail": "exit", "fail_at": "2"})
    assert exited.value.code == 3
    (run_dir,) = (tmp_path / "home" / "runs").iterdir()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "failed" and manifest["errors"] == [] and manifest["finished"]
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    assert [(s["workload"], s["repetition"]) for s in samples if s["metric"] == "completion_time"] == [
        ("null-write", 1),
        ("null-read", 1),
    ]  # what was measured before the exit is kept
    assert after(null.EVENTS, "engine cancel") == CLEANUP and not mem.volume("x").files


def test_a_target_that_claims_no_root_leaves_the_run_root_unrecorded(tmp_path):
    """As a raw device, used whole: nothing claimed before or after the engines start; the workloads' data
    URIs then name no place on the volume, and the target says so."""
    run = run_null(tmp_path, target="mem://x?claim=none", repeat=1)
    assert run.status == "failed" and run.manifest["config"]["run_root"] is None
    assert "target claim" not in run.events and "target release" in run.events
    assert run.errors == [
        {
            "workload": "null-write",
            "repetition": 1,
            "error": "refusing to delete /null/data: it is not below this run's root (this run's root: none claimed)",
        }
    ]


def test_rapl_power_is_read_from_the_collector_s_own_snapshots(tmp_path, monkeypatch):
    """Where RAPL is readable (here: a package drawing 50 W), the collector's snapshots carry the energy and the
    power source reads those, not readings of its own."""
    started = time.monotonic()
    monkeypatch.setattr(EnergyMeter, "available", property(lambda self: True))
    monkeypatch.setattr(EnergyMeter, "read", lambda self: round((time.monotonic() - started) * 50e6))
    run = run_null(tmp_path, repeat=1, overrides={"sleep_ms": "200"})
    assert run.status == "succeeded", run.errors
    assert run.manifest["power"]["source"] == "rapl" and run.manifest["power"]["from"] == "collector"
    watts = [s["value"] for s in run.samples if s["metric"] == "avg_power_w"]
    assert len(watts) == 2 and all(40 < w < 60 for w in watts)
    # no --power: the first line about power says what RAPL covers, before any figure of it
    said = [line for line in run.stderr.splitlines() if " W avg" in line or "power" in line.lower()]
    assert said[0].endswith("] power: CPU package only (RAPL): no drives, no DRAM; --power to choose another source"), (
        said
    )


def test_rapl_chosen_with_power_gets_no_default_line(tmp_path, monkeypatch):
    monkeypatch.setattr(EnergyMeter, "available", property(lambda self: True))
    monkeypatch.setattr(EnergyMeter, "read", lambda self: 0)
    run = run_null(tmp_path, repeat=1, power="rapl")
    assert run.status == "succeeded", run.errors
    assert run.manifest["power"]["scope"] == "cpu-package" and "CPU package only" not in run.stderr
