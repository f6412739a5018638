"""The whole path a user takes, through the real CLI and a real local PySpark.

Two labelled runs of spark-transforms at a tiny row count, then `runs` and `compare`
in every format. Slow (two Spark sessions), so it is marked ``spark``.
"""

import csv
import io
import json

import pytest

from tests.analysis.direction import time_words_agree
from tests.cli.helpers import storbench

pytestmark = pytest.mark.spark
OPERATIONS = ("groupby", "repartition", "join")


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("e2e")
    home = base / "home"
    outcomes = {}
    for label in ("ssd-a", "ssd-b"):
        target = base / f"target-{label}"
        target.mkdir()
        result = storbench(
            home,
            "run",
            "spark-transforms",
            "--label",
            label,
            "--target",
            f"file://{target}",
            "--scale",
            "20000",
            "--repeat",
            "3",
            "--interval",
            "0.2",
            "--json",
        )
        assert result.returncode == 0, result.stderr
        outcomes[label] = (json.loads(result.stdout), target)
    return home, outcomes


def test_runs_are_stored_and_leave_no_data_behind(two_runs):
    home, outcomes = two_runs
    for label, (outcome, target) in outcomes.items():
        assert outcome["status"] == "succeeded"
        assert list(target.iterdir()) == [], "the run-owned directory must be removed"
        manifest = json.loads((home / "runs" / outcome["run_id"] / "manifest.json").read_text())
        assert manifest["label"] == label and manifest["repetitions"] == 3
        assert manifest["software"]["spark"].startswith("4.")
        assert "spark.driver.memory" in manifest["spark_settings"]
        assert manifest["parameters"]["rows"] == 20000
        samples = [
            json.loads(line) for line in (home / "runs" / outcome["run_id"] / "samples.jsonl").read_text().splitlines()
        ]
        times = [s for s in samples if s["metric"] == "completion_time"]
        # datagen once, three operations × three repetitions
        assert sorted((s["workload"], s["repetition"]) for s in times) == sorted(
            [("datagen", 0)] + [(op, r) for op in OPERATIONS for r in (1, 2, 3)]
        )
        assert all(s["value"] > 0 for s in times)
        assert (home / "runs" / outcome["run_id"] / "telemetry.csv").read_text().count("\n") > 3


def test_runs_lists_both(two_runs):
    home, outcomes = two_runs
    result = storbench(home, "runs")
    assert result.returncode == 0
    for outcome, _ in outcomes.values():
        assert outcome["run_id"] in result.stdout


def test_compare_in_every_format(two_runs, tmp_path):
    home, outcomes = two_runs
    table = storbench(home, "compare", "ssd-a", "ssd-b")
    assert table.returncode == 0, table.stderr
    for op in OPERATIONS:
        assert op in table.stdout
    assert "Time to complete" in table.stdout

    as_json = json.loads(storbench(home, "compare", "ssd-a", "ssd-b", "--format", "json").stdout)
    # each operation's time: the words say the direction its measured change has, and the table says them
    times = [
        row["deltas"][1]
        for row in as_json["rows"]
        if row["metric"] == "completion_time"
        and row["phase"] == "timed"
        and row["workload"] in OPERATIONS
        and not row["labels"]
    ]
    assert len(times) == len(OPERATIONS), as_json["rows"]
    assert all(time_words_agree(d) and d["words"] in table.stdout for d in times), times
    assert [r["label"] for r in as_json["runs"]] == ["ssd-a", "ssd-b"]

    rows = list(csv.DictReader(io.StringIO(storbench(home, "compare", "ssd-a", "ssd-b", "--format", "csv").stdout)))
    assert {row["workload"] for row in rows} >= set(OPERATIONS)

    markdown = storbench(home, "compare", "ssd-a", "ssd-b", "--format", "md").stdout
    assert "| " in markdown and "groupby" in markdown

    report = tmp_path / "report.html"
    html = storbench(home, "compare", "ssd-a", "ssd-b", "--html", str(report))
    assert html.returncode == 0
    text = report.read_text()
    assert "<svg" in text and "ssd-b" in text and "http://" not in text.replace("http://www.w3.org", "")
