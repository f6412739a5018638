"""The short summary of a sweep run: one line per operation and sweep point (no "nothing finished")."""

from storbench.analysis.compare import compare_runs
from storbench.report.summary import summary_text
from storbench.results.model import Run, Sample
from tests.analysis.factory import manifest


def test_each_sweep_point_is_a_line_of_its_own():
    samples = [
        Sample("groupby", "completion_time", seconds, "s", rep, labels={"partitions": points})
        for points, seconds in (("4", 5.0), ("8", 3.0))
        for rep in (1, 2)
    ]
    samples.append(Sample("groupby", "max_read_mbps", 100.0, "MB/s", 1, labels={"partitions": "8", "node": "w-1"}))
    run = Run(
        run_id="20250101-120000-sw-abcd",
        label="sw",
        suite="spark-transforms",
        status="succeeded",
        started="2025-01-01T12:00:00Z",
        finished=None,
        samples=samples,
        manifest=manifest("sw", sweep=[{"partitions": "4"}, {"partitions": "8"}]),
    )
    lines = summary_text(compare_runs([run])).splitlines()
    rows = [line.split() for line in lines if line.strip().startswith("groupby")]
    assert [row[:3] for row in rows] == [["groupby", "[partitions=4]", "5.00"], ["groupby", "[partitions=8]", "3.00"]]
    assert "2 operation(s)" in lines[-1]  # the per-node row is left to the full table
