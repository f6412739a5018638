"""A run that goes wrong: an interrupt or a signal (status interrupted), a workload's error or crash (failed),
a workload that did not time itself; what was measured before is kept, and cleanup still runs in full."""

import pytest

from storbench.engines import null
from storbench.errors import InputError
from storbench.targets import mem
from tests.run.null_run import after, run_null

INTERRUPTED = "warning: interrupted: what was measured so far is kept"
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


def assert_interrupted_after_repetition_1(run):
    assert run.status == "interrupted" and run.manifest["status"] == "interrupted" and run.manifest["finished"]
    assert run.errors == []
    assert [(w, r) for w, r, _ in run.times()] == [("null-write", 1), ("null-read", 1)]  # kept
    assert {s["repetition"] for s in run.samples} == {1}
    assert after(run.events, "engine cancel") == CLEANUP
    assert not mem.volume("x").files
    assert [line for line in run.stderr.splitlines() if not line.startswith("[")] == [INTERRUPTED]


def test_ctrl_c_in_a_workload_ends_the_run_interrupted_keeping_what_was_measured(tmp_path):
    run = run_null(tmp_path, repeat=3, overrides={"fail": "interrupt", "fail_at": "2"})
    assert_interrupted_after_repetition_1(run)
    assert "workload run null-read 2" not in run.events  # nothing ran after it


@pytest.mark.parametrize("name", ["TERM", "HUP", "INT"])
def test_a_signal_stops_a_run_like_ctrl_c(tmp_path, handlers, name):
    run = run_null(tmp_path, repeat=3, overrides={"fail": "signal", "fail_at": "2", "signal": name})
    assert_interrupted_after_repetition_1(run)


@pytest.mark.parametrize("name", ["TERM", "INT"])
def test_a_second_signal_during_cleanup_does_not_cut_it_short(tmp_path, handlers, name):
    run = run_null(
        tmp_path,
        repeat=3,
        overrides={"fail": "signal", "fail_at": "2", "signal": name, "fail_step": "signal-in-cleanup"},
    )
    assert_interrupted_after_repetition_1(run)


def test_a_signal_during_cleanup_of_a_finished_run_marks_it_interrupted(tmp_path, handlers):
    run = run_null(tmp_path, repeat=1, overrides={"fail_step": "signal-in-cleanup"})
    assert run.status == "interrupted" and run.errors == []
    assert after(run.events, "engine cancel") == CLEANUP
    assert len(run.times()) == 2


def test_a_signal_a_library_turns_into_its_own_error_is_still_an_interrupt(tmp_path, handlers):
    """py4j raises its own error for an interrupt on the way up: the run ends interrupted, not failed."""
    run = run_null(tmp_path, repeat=3, overrides={"fail": "signal-wrapped", "fail_at": "2"})
    assert_interrupted_after_repetition_1(run)


def test_a_signal_in_a_warm_up_is_an_interrupt_too(tmp_path, handlers):
    run = run_null(tmp_path, repeat=1, warmup=1, overrides={"fail": "signal-wrapped", "fail_at": "-1"})
    assert run.status == "interrupted" and run.samples == [] and run.errors == []


def test_a_signal_needs_storbench_s_handlers(tmp_path):
    """Without them (a library caller) SIGTERM would kill the caller: refused before anything starts, and the
    run root claimed for it is gone."""
    with pytest.raises(InputError, match="^null-write: a signal needs storbench's signal handlers"):
        run_null(tmp_path, overrides={"fail": "signal"})
    assert not mem.volume("x").files
    assert null.EVENTS == ["target claim", "target release"]


def test_a_workload_error_fails_the_run_and_keeps_the_samples_it_carries(tmp_path):
    run = run_null(tmp_path, repeat=3, sweep={"size": ["1000"]}, overrides={"fail": "error", "fail_at": "2"})
    assert run.status == "failed" and run.manifest["status"] == "failed"
    assert run.errors == [
        {"workload": "null-write", "repetition": 2, "error": "null-write: failed at repetition 2 (fail=error)"}
    ]
    # repetition 1 whole; of repetition 2 what the error carried, with its repetition and point
    assert [(w, r) for w, r, _ in run.times()] == [("null-write", 1), ("null-read", 1)]
    carried = [s for s in run.samples if s["repetition"] == 2]
    assert [(s["workload"], s["metric"], s["labels"]) for s in carried] == [
        ("null-write", "null_mbps", {"size": "1000"})
    ]
    assert after(run.events, "engine cancel") == CLEANUP
    assert "null-write: null-write: failed at repetition 2 (fail=error)" in run.stderr


def test_a_bare_exception_is_one_line_naming_the_workload(tmp_path):
    run = run_null(tmp_path, repeat=2, overrides={"fail": "crash", "fail_at": "2"})
    assert run.status == "failed"
    assert run.errors == [
        {
            "workload": "null-write",
            "repetition": 2,
            "error": "workload null-write failed: RuntimeError: crashed at repetition 2 (fail=crash)",
        }
    ]
    assert len(run.times()) == 2


def test_a_failure_in_a_warm_up_keeps_nothing_of_it(tmp_path):
    run = run_null(tmp_path, repeat=1, warmup=2, overrides={"fail": "error", "fail_at": "-1"})
    assert run.status == "failed" and run.samples == []
    assert run.errors == [
        {"workload": "null-write", "repetition": 0, "error": "null-write: failed at repetition -1 (fail=error)"}
    ]
    crashed = run_null(tmp_path, repeat=1, warmup=2, overrides={"fail": "crash", "fail_at": "-1"})
    assert crashed.errors[0]["error"] == (
        "workload null-write failed in warm-up 1: RuntimeError: crashed at repetition -1 (fail=crash)"
    )


def test_a_failing_prepare_step_fails_the_run_before_the_repetitions(tmp_path):
    run = run_null(tmp_path, suite="null-read", overrides={"fail": "crash", "fail_at": "0"})
    assert run.status == "failed" and run.times() == []
    assert run.errors[0]["workload"] == "null-write" and run.errors[0]["repetition"] == 0


def test_a_workload_that_does_not_time_its_action_is_refused(tmp_path):
    run = run_null(tmp_path, repeat=2, overrides={"fail": "untimed", "fail_at": "1"})
    assert run.status == "failed" and run.samples == []
    assert run.errors == [
        {
            "workload": "null-write",
            "repetition": 1,
            "error": "workload null-write did not time its action (ctx.measure)",
        }
    ]


def test_a_workload_that_does_not_time_its_action_fails_the_run(tmp_path):
    run = run_null(tmp_path, repeat=2, overrides={"fail": "untimed", "fail_at": "1"})
    assert run.status == "failed" and run.samples == []
    assert [e["error"] for e in run.errors] == ["workload null-write did not time its action (ctx.measure)"]
    assert after(run.events, "engine cancel") == CLEANUP


def test_a_target_error_in_a_workload_names_the_workload_and_repetition(tmp_path):
    """A suite file whose null-read has nothing to read: the target's own error, with no samples to keep."""
    suite = tmp_path / "alone.yaml"
    suite.write_text("name: alone\nworkloads: [null-read]\n")
    run = run_null(tmp_path, suite=str(suite))
    assert run.status == "failed" and run.samples == []
    root = run.manifest["config"]["run_root"]
    assert run.errors == [
        {"workload": "null-read", "repetition": 1, "error": f"target mem://x: {root}/null/data does not exist"}
    ]
    assert run.manifest["suite_source"] == str(suite)


@pytest.mark.parametrize("raised, status", [(KeyboardInterrupt, "interrupted"), (RuntimeError, "failed")])
def test_a_run_stopped_while_it_is_set_up_is_recorded_as_ended_not_running(tmp_path, monkeypatch, raised, status):
    """Ctrl-C or SIGTERM (timeout's) after the run was recorded but before it started: the caller sees the
    interrupt, the record says the run ended (it used to stay "running" for good), the target is clean."""
    import json

    from storbench.results.store import ResultStore
    from storbench.run import session

    def stopped(*args, **kwargs):
        raise raised("stopped during set-up")

    monkeypatch.setattr(session, "run_telemetry", stopped)
    with pytest.raises(raised):
        run_null(tmp_path, repeat=1)
    (manifest,) = [json.loads(p.read_text()) for p in (tmp_path / "home" / "runs").glob("*/manifest.json")]
    assert manifest["status"] == status and manifest["finished"]
    assert manifest["errors"] == (
        [] if status == "interrupted" else [{"workload": "run", "repetition": 0, "error": "stopped during set-up"}]
    )
    assert [r.status for r in ResultStore(tmp_path / "home").list_runs()] == [status]
    assert not mem.volume("x").files


def test_a_signal_while_the_run_is_recorded_is_not_lost_and_the_record_ends(tmp_path, monkeypatch, handlers):
    """SIGTERM between the record's creation and the session holding it: noted, raised right after, and the
    record finished as interrupted."""
    import json
    import os
    import signal

    from storbench.results.store import ResultStore

    create_run = ResultStore.create_run

    def signalled(self, *args, **kwargs):
        writer = create_run(self, *args, **kwargs)
        os.kill(os.getpid(), signal.SIGTERM)
        return writer

    monkeypatch.setattr(ResultStore, "create_run", signalled)
    with pytest.raises(KeyboardInterrupt):
        run_null(tmp_path, repeat=1)
    (manifest,) = [json.loads(p.read_text()) for p in (tmp_path / "home" / "runs").glob("*/manifest.json")]
    assert manifest["status"] == "interrupted" and manifest["finished"]
    assert "engine start" not in null.EVENTS and not mem.volume("x").files
