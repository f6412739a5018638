"""The busy-machine judgement on the noise sentinel's samples, and its notes in compare and show."""

from storbench.analysis import disturbance
from storbench.analysis.compare import compare_runs
from storbench.report import render
from tests.analysis.factory import make_run

QUIET = {
    "noise_other_cpu_pct": 2.0,
    "noise_steal_pct": 0.0,
    "noise_other_io_mb": 0.5,
    "noise_psi_cpu_pct": 3.0,
    "noise_psi_io_pct": 40.0,
    "noise_psi_mem_pct": 0.0,
    "noise_dirty_mb": 12.0,
}


def run(label, other_cpu=(2.0, 2.0, 2.0), times=(10.0, 10.0, 10.0), **per_metric):
    """A run of groupby × 3 repetitions: completion times and the sentinel's figures per window."""
    values = {("groupby", "completion_time"): list(times)}
    for metric, value in QUIET.items():
        values[("groupby", metric)] = list(per_metric.get(metric, [value] * len(times)))
    values[("groupby", "noise_other_cpu_pct")] = list(other_cpu)
    return make_run(label, values)


def test_quiet_runs_say_nothing():
    a, b = run("fa1"), run("fa2", other_cpu=(5.0, 8.0, 3.0))
    assert disturbance.notes([a, b], ["fa1", "fa2"]) == []
    assert not disturbance.disturbance(b.samples).busy


def test_one_busy_run_is_said_with_its_figures():
    a, b = run("fa1"), run("fa2", other_cpu=(95.0, 10.0, 9.0))
    d = disturbance.disturbance(b.samples)
    assert d.busy and d.mean("noise_other_cpu_pct") == 38.0 and d.peak("noise_other_cpu_pct") == 95.0
    assert disturbance.notes([a, b], ["fa1", "fa2"]) == [
        "fa2's windows: 38% of a core used by other processes (max 95%); fa1's: 2%: a difference between them "
        "may be the machine's, not the storage's"
    ]


def test_steal_and_other_io_make_a_run_busy():
    stolen = run("fa2", noise_steal_pct=[8.0, 6.0, 7.0])
    moved = run("fa3", noise_other_io_mb=[100.0, 60.0, 20.0])  # 10, 6 and 2 MB/s over 10 s windows
    assert disturbance.disturbance(stolen.samples).busy and disturbance.disturbance(moved.samples).busy
    note = disturbance.notes([run("fa1"), stolen], ["fa1", "fa2"])[0]
    assert note.startswith("fa2's windows: 2% of a core used by other processes (max 2%), steal 7% of a core (max 8%)")
    note = disturbance.notes([run("fa1"), moved], ["fa1", "fa3"])[0]
    assert "other processes' storage I/O 6.0 MB/s (max 10.0)" in note


def test_pressure_and_dirty_pages_alone_are_not_busy():
    stalled = run("fa2", noise_psi_io_pct=[90.0, 90.0, 90.0], noise_dirty_mb=[900.0, 900.0, 900.0])
    assert not disturbance.disturbance(stalled.samples).busy
    summary = disturbance.disturbance(stalled.samples).summary()
    assert summary["noise_psi_io_pct"] == {"mean": 90.0, "max": 90.0} and summary["busy"] is False


def test_every_run_busy_is_said_too():
    a, b = run("fa1", other_cpu=(40.0, 50.0, 60.0)), run("fa2", other_cpu=(30.0, 30.0, 30.0))
    assert disturbance.notes([a, b], ["fa1", "fa2"]) == [
        "the machine was busy during every run: fa1's windows: 50% of a core used by other processes (max 60%); "
        "fa2's windows: 30% of a core used by other processes (max 30%): a difference between them may be the "
        "machine's, not the storage's"
    ]


def test_runs_from_before_the_sentinel_are_left_out():
    old = make_run("old", {("groupby", "completion_time"): [10.0, 11.0]})
    assert disturbance.disturbance(old.samples) is None
    assert disturbance.notes([old, run("fa2", other_cpu=(95.0, 95.0, 95.0))], ["old", "fa2"]) == []
    assert disturbance.notes([old], ["old"]) == []


def test_compare_warns_and_show_marks_the_busy_windows():
    a, b = run("fa1"), run("fa2", other_cpu=(95.0, 10.0, 9.0))
    names = [r.name for r in compare_runs([a, b]).runs]
    assert (
        f"{names[1]}'s windows: 38% of a core used by other processes (max 95%); {names[0]}'s: 2%: a "
        f"difference between them may be the machine's, not the storage's"
    ) in compare_runs([a, b]).warnings
    single = compare_runs([b])
    line = (
        "machine was busy during 2 of 3 windows: other processes used up to 95% of a core (groupby rep 1, "
        "groupby rep 2)"
    )
    assert line in single.warnings
    assert "machine was busy during 2 of 3 windows" in render(single, "table")
    assert "machine was busy during 2 of 3 windows" in render(single, "html")
    assert not [w for w in compare_runs([a]).warnings if "busy" in w]


def test_every_run_busy_names_the_most_disturbed_first():
    a, b = run("fa1", other_cpu=(20.0, 30.0, 25.0)), run("fa2", other_cpu=(120.0, 140.0, 130.0))
    note = disturbance.notes([a, b], ["fa1", "fa2"])[0]
    assert note.startswith("the machine was busy during every run: fa2's windows: 130% of a core")
    assert note.index("fa2's windows") < note.index("fa1's windows")


def test_interleaved_runs_say_the_machine_was_shared_not_that_it_explains_the_difference():
    record = {"id": "20261128-120000-xabcdef", "design": "interleaved"}
    a, b = run("fa1"), run("fa2", other_cpu=(95.0, 10.0, 9.0))
    for one in (a, b):
        one.manifest["experiment"] = record
    note = disturbance.notes([a, b], ["fa1", "fa2"])[0]
    assert note.startswith("fa2's windows: 38% of a core")
    assert "interleaved" in note and "may be the machine's" not in note
    apart = disturbance.notes([run("fa1"), run("fa2", other_cpu=(95.0, 10.0, 9.0))], ["fa1", "fa2"])[0]
    assert "may be the machine's, not the storage's" in apart
