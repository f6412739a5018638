"""Interleaved experiments in process: the null suite on two or three mem:// targets, in milliseconds.

Each configuration is its own run, linked by the manifest's ``experiment`` record; repetition r of every
configuration forms round r, in an order that alternates or is shuffled per round (and is recorded); a
configuration that fails stops the experiment with everything measured kept."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from storbench import api
from storbench.api import RunOptions
from storbench.cli.run_command import labelled_targets
from storbench.engines import null
from storbench.errors import InputError
from storbench.progress import Progress
from storbench.report._format import configuration
from storbench.results.model import Sample
from storbench.results.store import ResultStore
from storbench.run.rounds import AUTO_DEFAULT, Schedule, parse_repeat
from storbench.run.sweep import Point
from tests.run.null_run import INTERVAL


def interleaved(
    tmp_path: Path,
    labels: tuple[str, ...] = ("a", "b"),
    order: str = "alternate",
    per_label: dict[str, dict[str, Any]] | None = None,
    **fields: Any,
):
    """The experiment's outcomes, each run's manifest and samples, and the terminal's text."""
    stream = io.StringIO()
    configurations = [
        RunOptions(
            **{
                "suite": "null",
                "label": label,
                "target": f"mem://{label}",
                "interval": INTERVAL,
                **fields,
                **(per_label or {}).get(label, {}),
            }
        )
        for label in labels
    ]
    outcomes = api.run_interleaved(configurations, ResultStore(tmp_path / "home"), Progress(stream=stream), order)
    runs = []
    for outcome in outcomes:
        manifest = json.loads((outcome.path / "manifest.json").read_text())
        samples = [json.loads(line) for line in (outcome.path / "samples.jsonl").read_text().splitlines()]
        runs.append(SimpleNamespace(outcome=outcome, manifest=manifest, samples=samples))
    return runs, stream.getvalue()


def windows(run) -> list[tuple[str, int]]:
    return [(s["workload"], s["repetition"]) for s in run.samples if s["metric"] == "completion_time"]


def test_each_round_runs_repetition_r_of_every_configuration_in_alternating_order(tmp_path):
    runs, text = interleaved(tmp_path, repeat=4)
    a, b = runs
    ids = [a.outcome.run_id, b.outcome.run_id]
    assert a.manifest["experiment"]["order"] == [ids, ids[::-1], ids, ids[::-1]]
    assert windows(a) == windows(b) == [(w, r) for r in range(1, 5) for w in ("null-write", "null-read")]
    # the terminal says which configuration each step belongs to, in the order they ran
    steps = [line.split()[1] for line in text.splitlines() if "null-write (repetition" in line]
    assert steps == ["[a]", "[b]", "[b]", "[a]", "[a]", "[b]", "[b]", "[a]"]


def test_the_configurations_are_runs_linked_as_one_experiment(tmp_path):
    runs, _ = interleaved(tmp_path, labels=("a", "b", "c"), repeat=2)
    records = [run.manifest["experiment"] for run in runs]
    assert all(record == records[0] for record in records)
    assert records[0]["runs"] == [run.outcome.run_id for run in runs]
    assert records[0]["labels"] == ["a", "b", "c"] and records[0]["design"] == "interleaved"
    assert [run.manifest["label"] for run in runs] == ["a", "b", "c"]
    assert all(run.outcome.status == "succeeded" for run in runs)
    # three configurations rotate: a b c, then b c a
    ids = records[0]["runs"]
    assert records[0]["order"] == [ids, ids[1:] + ids[:1]]


def test_a_shuffled_order_is_recorded_and_reproducible_from_its_seed(tmp_path):
    runs, _ = interleaved(tmp_path, labels=("a", "b", "c"), order="random", repeat=6)
    record = runs[0].manifest["experiment"]
    ids = record["runs"]
    again = Schedule(3, "random", record["seed"])
    assert record["order"] == [[ids[k] for k in again.order(r)] for r in range(1, 7)]
    assert all(sorted(order) == sorted(ids) for order in record["order"])


def test_prepare_steps_and_warm_ups_stay_per_configuration(tmp_path):
    null.EVENTS.clear()
    interleaved(tmp_path, repeat=1, warmup=1)
    runs = [e for e in null.EVENTS if e.startswith("workload run null-write")]
    # each configuration's warm-up (-1) comes before any recorded repetition of either
    assert runs == [
        "workload run null-write -1",
        "workload run null-write -1",
        "workload run null-write 1",
        "workload run null-write 1",
    ]


def test_a_configuration_that_fails_stops_the_experiment_keeping_every_finished_sample(tmp_path):
    runs, text = interleaved(tmp_path, repeat=3, per_label={"b": {"overrides": {"fail": "error", "fail_at": "2"}}})
    a, b = runs
    assert b.outcome.status == "failed" and a.outcome.status == "interrupted"
    assert "stopped with the experiment: configuration b failed" in a.manifest["errors"][0]["error"]
    # round 2 ran b first (b a): b failed in it, so a kept round 1 only; b kept its round 1 and what it measured
    assert windows(a) == [("null-write", 1), ("null-read", 1)]
    assert ("null-write", 1) in windows(b) and ("null-read", 1) in windows(b)
    assert len(a.manifest["experiment"]["order"]) == 1


def test_ctrl_c_in_the_middle_interrupts_every_configuration(tmp_path):
    runs, _ = interleaved(tmp_path, repeat=3, per_label={"a": {"overrides": {"fail": "interrupt", "fail_at": "3"}}})
    assert [run.outcome.status for run in runs] == ["interrupted", "interrupted"]
    assert windows(runs[1])[-1] == ("null-read", 2)  # round 3 began with a, which was interrupted


def test_bad_input_is_one_line_and_writes_nothing(tmp_path):
    home = tmp_path / "home"
    with pytest.raises(InputError, match="two configurations share it"):
        api.run_interleaved(
            [
                RunOptions(suite="null", label="a", target="mem://x"),
                RunOptions(suite="null", label="a", target="mem://y"),
            ],
            ResultStore(home),
        )
    with pytest.raises(InputError, match="--order 'sideways'"):
        api.run_interleaved(
            [
                RunOptions(suite="null", label="a", target="mem://x"),
                RunOptions(suite="null", label="b", target="mem://y"),
            ],
            ResultStore(home),
            order="sideways",
        )
    assert not (home / "runs").exists() or not any((home / "runs").iterdir())


def test_spark_is_one_such_engine():
    from storbench.engines.spark import SparkEngine

    assert SparkEngine.one_per_process


def test_repeat_auto_stops_once_the_rule_says_enough_and_records_why(tmp_path, monkeypatch):
    import storbench.analysis.precision as precision

    asked = []

    def after_four(repetition, point, recorded):
        asked.append(repetition)
        return "narrow enough" if repetition >= 4 else None

    monkeypatch.setattr(precision, "enough", after_four)
    runs, text = interleaved(tmp_path, repeat_auto=(3, 8))
    assert asked == [3, 4]  # never before the minimum
    for run in runs:
        assert run.manifest["repetitions"] == 4
        assert run.manifest["repeat_auto"] == {
            "min": 3,
            "max": 8,
            "stopped": {"": "after 4 repetitions: narrow enough"},
        }
        assert windows(run)[-1] == ("null-read", 4)
    assert "--repeat auto: stopped after 4 repetitions: narrow enough" in text


def test_repeat_auto_goes_on_to_the_maximum_when_the_interval_stays_wide(tmp_path, monkeypatch):
    import storbench.analysis.precision as precision

    monkeypatch.setattr(precision, "enough", lambda repetition, point, recorded: None)
    runs, _ = interleaved(tmp_path, labels=("a",) * 1 + ("b",), repeat_auto=(2, 3))
    assert all(run.manifest["repetitions"] == 3 and run.manifest["repeat_auto"]["stopped"] is None for run in runs)


def _recorded(values: dict[int, list[float]], metric: str = "completion_time"):
    """recorded[(k, workload, point)][rep] from per-configuration values by repetition."""
    return {
        (k, "null-write", ""): {rep: [Sample("null-write", metric, v, "s", rep)] for rep, v in enumerate(series, 1)}
        for k, series in values.items()
    }


def test_the_precision_rule_wants_a_narrow_interval_of_the_headline():
    from storbench.analysis.precision import enough

    point = Point()
    assert enough(3, point, _recorded({0: [10.0, 10.1, 9.9]})) is not None  # ±1%: enough
    assert enough(3, point, _recorded({0: [10.0, 14.0, 7.0]})) is None  # ±50%: go on
    # interleaved: the paired ratio is what counts, so a drift both sides share does not widen it
    drift = [10.0, 13.0, 8.0]
    assert enough(3, point, _recorded({0: drift, 1: [v * 1.05 for v in drift]})) is not None
    assert enough(3, point, _recorded({0: drift, 1: [10.5, 9.0, 12.0]})) is None


@pytest.mark.parametrize(
    "text, expected", [("5", (5, None)), ("auto", (None, AUTO_DEFAULT)), ("3..20", (None, (3, 20)))]
)
def test_repeat_takes_a_number_auto_or_bounds(text, expected):
    assert parse_repeat(text) == expected


@pytest.mark.parametrize("text", ["many", "1..5", "5..3", "3..x"])
def test_a_bad_repeat_is_one_line(text):
    with pytest.raises(InputError, match=f"--repeat {text}"):
        parse_repeat(text)


def test_labels_pair_with_targets_or_are_numbered():
    given = lambda labels, targets: labelled_targets(SimpleNamespace(label=labels, target=targets))  # noqa: E731
    assert given(["a", "b"], ["/x", "/y"]) == [("a", "/x"), ("b", "/y")]
    assert given([], ["/x", "/y"]) == [("default-1", "/x"), ("default-2", "/y")]
    assert given(["ssd"], ["/x", "/y"]) == [("ssd-1", "/x"), ("ssd-2", "/y")]
    assert given([], []) == [("default", None)]
    with pytest.raises(InputError, match="one each, in the same order"):
        given(["a", "b", "c"], ["/x", "/y"])


def test_compare_of_an_experiment_s_runs_names_the_design_and_pairs_them(tmp_path):
    runs, _ = interleaved(tmp_path, repeat=3)
    comparison = api.compare([run.outcome.run_id for run in runs], ResultStore(tmp_path / "home"))
    design = {name: values for name, values, _ in configuration(comparison)}["Design"]
    assert design[0] == design[1] and design[0].startswith("interleaved: a, b (experiment ")
    assert design[0].endswith("alternate order, 3 rounds)")
    # times are never 0, so every round gives a pair: the paired test (a zero elsewhere falls back to Welch)
    times = [row.deltas[1] for row in comparison.rows if row.metric == "completion_time" and row.phase == "timed"]
    assert len(times) == 2 and all(delta.test == "paired" for delta in times)
    assert not any("not interleaved" in note for note in comparison.warnings)
