"""Spark event-log metrics against a stored real event log (a local terasort run, trimmed)."""

import json
from pathlib import Path

from storbench.engines.eventlog import job_group, parse_event_log, read_event_logs, samples_from, stage_table

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "spark" / "eventlog-terasort-local.jsonl"


def test_golden_log_totals_per_workload():
    groups = parse_event_log(GOLDEN.read_text().splitlines())
    assert set(groups) == {"teragen#1", "terasort#1", "teravalidate#1"}
    sort = groups["terasort#1"]
    assert sort.total("shuffle_write_bytes") == 4_623_606
    assert sort.total("task_time_ms") == 1845
    assert sort.total("tasks") == 10
    assert groups["teragen#1"].total("tasks") == 8
    assert groups["teravalidate#1"].total("shuffle_write_bytes") == 3_360_690


def test_samples_carry_workload_and_repetition():
    samples = samples_from(parse_event_log(GOLDEN.read_text().splitlines()))
    by_key = {(s.workload, s.metric, s.repetition): s for s in samples}
    assert by_key[("terasort", "shuffle_write_mb", 1)].value == 4.623606
    assert by_key[("terasort", "shuffle_read_blocked_s", 1)].unit == "s"
    assert by_key[("teragen", "spark_task_time_s", 1)].value == 2.888
    # a workload name with the separator in it still splits at the last one
    assert (
        samples_from({job_group("a#b", 2): parse_event_log(GOLDEN.read_text().splitlines())["teragen#1"]})[0].workload
        == "a#b"
    )


def test_untagged_jobs_are_left_out_and_stage_rows_listed():
    lines = GOLDEN.read_text().splitlines()
    untagged = [
        json.dumps({"Event": "SparkListenerJobStart", "Job ID": 99, "Stage IDs": [999], "Properties": {}}),
        json.dumps({"Event": "SparkListenerTaskEnd", "Stage ID": 999, "Task Metrics": {"Executor Run Time": 5000}}),
    ]
    groups = parse_event_log(lines + untagged)
    assert sum(g.total("task_time_ms") for g in groups.values()) == 2888 + 1845 + 2939
    rows = stage_table(groups)
    assert {row["group"] for row in rows} == set(groups) and all(row["tasks"] > 0 for row in rows)


def test_reads_spark4_directory_layout_and_refuses_compressed(tmp_path):
    layout = tmp_path / "eventlog_v2_local-1" / "events_1_local-1"
    layout.parent.mkdir()
    layout.write_text(GOLDEN.read_text())
    (tmp_path / "eventlog_v2_local-1" / "appstatus_local-1").write_text("")
    assert set(read_event_logs(tmp_path)) == {"teragen#1", "terasort#1", "teravalidate#1"}
    (tmp_path / "eventlog_v2_local-1" / "events_2_local-1.zstd").write_bytes(b"\x28\xb5\x2f\xfd")
    try:
        read_event_logs(tmp_path)
    except ValueError as exc:
        assert "spark.eventLog.compress=false" in str(exc)
    else:
        raise AssertionError("a compressed event log must be refused with the fix in the message")
