"""Labelled sub-groups of a workload's Spark jobs (TPC-DS: one per query) against the golden event log."""

from pathlib import Path

from storbench.engines.eventlog import parse_event_log, parse_group, roll_up, samples_from, sub_group, sub_labelled

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "spark" / "eventlog-terasort-local.jsonl"


def test_sub_groups_become_labelled_samples_and_count_in_the_parent():
    golden = parse_event_log(GOLDEN.read_text().splitlines())
    q1, q2 = (
        sub_group("tpcds#1", {"query": "q1", "streams": "1"}),
        sub_group("tpcds#1", {"query": "q2", "streams": "1"}),
    )
    assert q1 == "tpcds#1@query=q1,streams=1"
    groups = roll_up({q1: golden["teragen#1"], q2: golden["terasort#1"]})
    assert set(groups) == {q1, q2, "tpcds#1"}
    samples = samples_from(groups, sub_labelled(parse_group))
    tasks = {(s.workload, tuple(sorted(s.labels.items()))): s.value for s in samples if s.metric == "spark_tasks"}
    assert tasks[("tpcds", (("query", "q1"), ("streams", "1")))] == 8
    assert tasks[("tpcds", (("query", "q2"), ("streams", "1")))] == 10
    assert tasks[("tpcds", ())] == 18  # the workload's total over its queries
    assert all(s.repetition == 1 for s in samples)


def test_groups_the_runner_does_not_know_stay_out():
    golden = parse_event_log(GOLDEN.read_text().splitlines())
    lookup = sub_labelled({"tpcds#1": ("tpcds", 1, {"cores": "2"})}.get)
    assert lookup("tpcds#1@query=q3") == ("tpcds", 1, {"cores": "2", "query": "q3"})
    assert lookup("other#1@query=q3") is None
    assert samples_from({"x@query=q1": golden["teragen#1"]}, sub_labelled(lambda name: None)) == []


def _on_two_hosts(lines: list[str]) -> list[str]:
    """The golden log as if its tasks had alternated between two executor hosts of a cluster."""
    import json

    out, count = [], 0
    for line in lines:
        event = json.loads(line) if line.strip() else None
        if event and event.get("Event") == "SparkListenerTaskEnd" and "Task Info" in event:
            event["Task Info"]["Host"] = ("127.0.0.2", "127.0.0.3")[count % 2]
            count += 1
            line = json.dumps(event)
        out.append(line)
    return out


def test_tasks_on_several_hosts_give_per_host_samples_that_add_up():
    groups = roll_up(parse_event_log(_on_two_hosts(GOLDEN.read_text().splitlines())))
    samples = samples_from(groups)
    per_host = [
        s
        for s in samples
        if s.workload == "terasort" and s.metric == "shuffle_write_mb" and "executor_host" in s.labels
    ]
    total = next(
        s.value for s in samples if s.workload == "terasort" and s.metric == "shuffle_write_mb" and not s.labels
    )
    assert {s.labels["executor_host"] for s in per_host} == {"127.0.0.2", "127.0.0.3"}
    assert total > 0 and abs(sum(s.value for s in per_host) - total) < 1e-9


def test_one_host_adds_no_per_host_samples():
    samples = samples_from(roll_up(parse_event_log(GOLDEN.read_text().splitlines())))
    assert not any("executor_host" in s.labels for s in samples)
