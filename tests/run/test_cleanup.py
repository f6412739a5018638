"""Cleanup: its order, each step on its own (one that fails does not skip the others), and the target's data."""

import pytest

from storbench.results.store import RunWriter
from storbench.targets import MARKER, mem
from tests.run.null_run import after, run_null

ORDER = [
    "engine cancel",
    "telemetry stop",
    "telemetry series",
    "workload cleanup null-write",
    "workload cleanup null-read",
    "target release",
    "engine stop",
    "engine collect",
]


def test_cleanup_runs_in_order_after_the_last_window(tmp_path):
    """Engine work cancelled before anything is removed, telemetry stopped before the workloads clean up,
    the target released before the engines stop, and what the stopped engine measured collected last."""
    run = run_null(tmp_path, repeat=1)
    assert after(run.events, "engine cancel") == ORDER
    assert run.json("null-engine.json")["calls"][-3:] == ["cancel", "stop", "collect"]  # the engine's file kept
    assert run.manifest["status"] == "succeeded" and run.manifest["finished"]


def test_cleanup_runs_in_the_same_order_after_a_failure(tmp_path):
    run = run_null(tmp_path, repeat=1, overrides={"fail": "crash"})
    assert run.status == "failed"
    assert after(run.events, "engine cancel") == ORDER


@pytest.mark.parametrize(
    "step, errors",
    [
        (
            "workload-cleanup",
            [
                ("null-write", "cleanup: null-write: cleanup failed (fail_step=workload-cleanup)"),
                ("null-read", "cleanup: null-read: cleanup failed (fail_step=workload-cleanup)"),
            ],
        ),
        ("engine-cancel", [("null", "could not cancel: null engine: cancel failed (armed)")]),
        ("engine-stop", [("null", "could not stop: null engine: stop failed (armed)")]),
        ("engine-collect", [("null-metrics", "null engine: collect failed (armed)")]),
    ],
)
def test_a_failing_cleanup_step_is_an_error_and_the_later_steps_still_run(tmp_path, step, errors):
    run = run_null(tmp_path, repeat=1, overrides={"fail_step": step})
    assert [(e["workload"], e["error"]) for e in run.errors] == errors
    assert run.manifest["errors"] == run.errors
    assert after(run.events, "engine cancel") == ORDER
    assert run.status == "succeeded" and run.manifest["finished"]  # the measurements stand
    assert not mem.volume("x").files  # the run root went all the same
    assert (run.path / "artifacts.json").exists()
    assert all(f"{workload}: {error}" in run.stderr for workload, error in errors)


def test_a_target_that_cannot_release_keeps_the_root_and_says_how_to_remove_it_later(tmp_path):
    run = run_null(tmp_path, repeat=1, overrides={"fail_step": "target-release"})
    (error,) = run.errors
    root = run.manifest["config"]["run_root"]
    assert error == {
        "workload": "cleanup",
        "repetition": 0,
        "error": f"could not remove {root} (later: storbench cleanup {run.manifest['run_id']}): "
        f"target mem://x: the volume does not answer (armed)",
    }
    assert after(run.events, "engine cancel") == ORDER
    assert f"{root.removeprefix('mem://x/')}/{MARKER}" in mem.volume("x").files


def test_a_release_that_fails_after_the_root_went_leaves_no_error_and_no_cleanup_hint(tmp_path, monkeypatch):
    """Issue 25 case 8: a run stopped by `timeout` (SIGTERM to the whole process group) whose engine removed the
    last of the run root while the release did: the release's error names nothing left, so the run says nothing
    of `storbench cleanup`."""
    from storbench.targets.mem import MemTarget

    release_root = MemTarget.release_root

    def raced(self):
        release_root(self)  # everything is gone ...
        raise FileNotFoundError(2, "No such file or directory", "spark-local/blockmgr-1")  # ... and it failed

    monkeypatch.setattr(MemTarget, "release_root", raced)
    run = run_null(tmp_path, repeat=1)
    assert run.status == "succeeded" and run.errors == [] and not mem.volume("x").files
    assert "storbench cleanup" not in run.stderr and "could not remove" not in run.stderr
    assert after(run.events, "engine cancel") == ORDER


def test_a_failed_series_write_still_releases_and_finishes(tmp_path, monkeypatch):
    """A full disk while writing the series: the run root still goes, the run still finishes, the error is kept."""

    def full(self, csv_text, windows):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(RunWriter, "write_series", full)
    run = run_null(tmp_path, repeat=1)
    assert not mem.volume("x").files
    assert run.manifest["status"] == run.status == "succeeded" and run.manifest["finished"]
    assert [e["workload"] for e in run.errors] == ["telemetry"]
    assert "No space left on device" in run.errors[0]["error"]
    assert (run.path / "artifacts.json").exists() and (run.path / "null-engine.json").exists()  # later steps ran


def test_an_engine_that_fails_after_a_window_fails_the_run_and_keeps_no_half_window(tmp_path):
    """An engine's end() that raises (not a workload's error): the run fails with the engine's one line."""
    run = run_null(tmp_path, repeat=2, overrides={"fail_step": "engine-end"})
    assert run.status == "failed" and run.samples == []
    assert run.errors == [
        {"workload": "run", "repetition": 0, "error": "RuntimeError: null engine: end failed (armed)"}
    ]
    assert after(run.events, "engine cancel") == ORDER


def test_a_workload_s_notes_are_kept_in_the_manifest_and_shown(tmp_path):
    run = run_null(tmp_path, repeat=2, overrides={"note": "null: O_DIRECT not available, buffered I/O used"})
    assert run.manifest["notes"] == ["null: O_DIRECT not available, buffered I/O used"]
    assert run.stderr.count("warning: null: O_DIRECT not available, buffered I/O used") == 1


def test_a_target_claimed_once_the_engines_are_up_records_its_root_then(tmp_path):
    """Like hdfs:// (reached through Spark's Hadoop client): claim at attach, after the engines started."""
    run = run_null(tmp_path, target="mem://x?claim=attach", repeat=1)
    assert run.status == "succeeded", run.errors
    assert run.events[:2] == ["engine start", "target claim"]
    assert run.manifest["config"]["run_root"] == f"mem://x/storbench-{run.manifest['run_id']}"
    assert not mem.volume("x").files


def test_a_run_removes_its_root_and_nothing_else_on_the_target(tmp_path):
    volume = mem.volume("x")
    volume.files["users/own.dat"] = b"not storbench's"
    run = run_null(tmp_path, repeat=1)
    assert volume.files == {"users/own.dat": b"not storbench's"}
    assert run.manifest["config"]["run_root"] == f"mem://x/storbench-{run.manifest['run_id']}"
    assert run.events[0] == "target claim" and "target release" in run.events


def test_keep_data_leaves_the_run_root_and_what_the_workloads_wrote(tmp_path):
    run = run_null(tmp_path, repeat=1, keep_data=True, overrides={"size": "1000"})
    root = f"storbench-{run.manifest['run_id']}"
    assert mem.volume("x").files == {
        f"{root}/{MARKER}": f"{run.manifest['run_id']}\n".encode(),
        f"{root}/null/data": bytes(1000),
    }
    assert "target release (keep data)" in run.events
    assert run.status == "succeeded" and run.errors == []


def test_the_default_target_is_a_temporary_directory_removed_afterwards(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # TMPDIR read again
    run = run_null(tmp_path, target=None, repeat=1)
    assert run.status == "succeeded", run.errors
    assert run.manifest["config"]["target"].startswith(f"file://{tmp_path}/tmp/storbench-target-")
    assert list((tmp_path / "tmp").iterdir()) == []
