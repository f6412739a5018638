"""``driver=ycsb``: YCSB core 0.17.0 itself (storbench's Java-driver binding, jvm/ycsb) on the session's real
1-node Cassandra (``cassandra1``): its load and workload A parsed into the engine's samples, and the native
engine reading the rows YCSB loaded without an error (the same keys and fields). Parsing YCSB's output
(workload F's nested operations, errors by kind) is checked on a fixed text, without a service."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from storbench.errors import InputError
from storbench.targets import TargetOptions, parse_target
from storbench.workloads.base import get_workload
from storbench.workloads.ycsb import core_driver
from tests.cli.helpers import storbench

RECORDS = 200
OPS = 600
SUITE = f"""name: ycsb-driver-check
repetitions: 1
scales:
  tiny: {{recordcount: {RECORDS}, operationcount: {OPS}, threads: 2}}
prepare:
  - {{workload: ycsb-load, params: {{driver: ycsb}}}}
workloads:
  - {{workload: ycsb-a, params: {{driver: ycsb}}}}
  - ycsb-c
"""


def _values(samples: list[dict], workload: str, metric: str) -> dict[str | None, float]:
    return {
        s["labels"].get("op"): s["value"]
        for s in samples
        if s["workload"] == workload and s["metric"] == metric and not set(s["labels"]) - {"op", "driver"}
    }


@pytest.mark.cassandra
def test_ycsb_core_loads_and_runs_a_and_the_engine_reads_its_rows(cassandra1, tmp_path):
    home, state = cassandra1
    suite = tmp_path / "ycsb-driver-check.yaml"
    suite.write_text(SUITE)
    done = storbench(home, "run", str(suite), "--target", state["uri"], "--scale", "tiny", timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    run_dir = Path(next(x for x in done.stdout.splitlines() if x.startswith("results: ")).split(": ", 1)[1])
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    # both drivers logged in as storbench; its password reached no file of the run, YCSB's kept command line
    # passes it in a properties file (-P), and its raw output (which echoes the command line) is clean too
    password = state["auth"]["password"].encode()
    assert [path for path in run_dir.rglob("*") if path.is_file() and password in path.read_bytes()] == []
    command = next(
        r["command"]
        for r in json.loads((run_dir / "artifacts.json").read_text())["ycsb"]["runs"]
        if r["driver"] == "ycsb"
    )
    assert "-P" in command and not any("cassandra.password" in arg for arg in command)
    assert "cassandra.username=storbench" in command
    ycsb = [s for s in samples if s["labels"].get("driver") == "ycsb"]
    assert {s["workload"] for s in ycsb} == {"ycsb-load", "ycsb-a"}

    assert _values(samples, "ycsb-load", "ycsb_operations") == {None: RECORDS, "INSERT": RECORDS}
    ops = _values(samples, "ycsb-a", "ycsb_operations")
    assert set(ops) == {None, "READ", "UPDATE"} and ops[None] == OPS == ops["READ"] + ops["UPDATE"]
    assert abs(ops["READ"] / OPS - 0.5) <= 0.06, ops  # workloada: 50/50 (binomial sd 2% at 600 ops)
    assert _values(samples, "ycsb-a", "ycsb_throughput_ops_s")[None] > 0
    assert _values(samples, "ycsb-a", "ycsb_errors") == {None: 0, "READ": 0, "UPDATE": 0}
    # YCSB's JVM and the engine sampled from /proc alike: the steady middle, and the whole process beside it (the
    # JVM's start-up, ~1 s of CPU or more, is in the second only)
    middle, whole = (
        _values(samples, "ycsb-a", name)[None]
        for name in ("ycsb_client_cpu_us_per_op", "ycsb_client_cpu_us_per_op_process")
    )
    assert 0 < middle < whole
    assert all(
        _values(samples, "ycsb-c", name)[None] > 0
        for name in ("ycsb_client_cpu_us_per_op", "ycsb_client_cpu_us_per_op_process")
    )
    p95, p99 = _values(samples, "ycsb-a", "ycsb_p95_latency_us"), _values(samples, "ycsb-a", "ycsb_p99_latency_us")
    assert all(0 < p95[op] <= p99[op] for op in (None, "READ", "UPDATE"))

    # the native engine reads the rows YCSB core loaded: the same key names (user + FNV-1a 64) and fields
    native = [s for s in samples if s["workload"] == "ycsb-c" and s["metric"].startswith("ycsb_")]
    assert native and not any("driver" in s["labels"] for s in native)
    assert _values(samples, "ycsb-c", "ycsb_operations") == {None: OPS, "READ": OPS}
    assert _values(samples, "ycsb-c", "ycsb_errors") == {None: 0, "READ": 0}

    runs = json.loads((run_dir / "artifacts.json").read_text())["ycsb"]["runs"]
    raw = {r["workload"]: r.get("raw", "") for r in runs}
    assert "[OVERALL], Throughput(ops/sec), " in raw["ycsb-a"] and "[UPDATE], Return=OK, " in raw["ycsb-a"]
    assert "storbench.ycsb.CqlDb" in " ".join(next(r for r in runs if r["workload"] == "ycsb-a")["command"])

    # YCSB (ycsb-a) and the engine (ycsb-c) under the same rules: state, no warm-up, writes on ack, and a rate
    # and window over the operations only (YCSB's RunTime less its session open; the JVM's start-up outside)
    rules = json.loads((run_dir / "manifest.json").read_text())["window_rules"]
    assert (
        rules["ycsb-a"]
        == rules["ycsb-c"]
        == {
            "state": "continued (memtables as left)",
            "warmup": "none",
            "flush": "on ack (commit log)",
            "timing": "operations",
        }
    )
    total = next(r for r in runs if r["workload"] == "ycsb-a")["result"]["total"]
    assert 0 < total["session_open_ms"] < total["runtime_ms"]
    assert total["measured_s"] == pytest.approx((total["runtime_ms"] - total["session_open_ms"]) / 1000)
    assert _values(samples, "ycsb-a", "ycsb_throughput_ops_s")[None] == pytest.approx(
        total["ycsb_ops_per_s"] * total["runtime_ms"] / (total["runtime_ms"] - total["session_open_ms"])
    )
    assert _values(samples, "ycsb-a", "completion_time")[None] == pytest.approx(total["measured_s"], abs=1e-3)


@pytest.mark.parametrize("fanout", [{"drivers": 2}, {"fanout": "spark"}])
def test_ycsb_driver_refuses_a_fan_out_in_one_line(fanout, tmp_path):
    # refused in check_params(), before anything connects or a keyspace is made: the target is only parsed
    target = parse_target("cassandra://127.0.0.1:9042", TargetOptions(tmp_path))
    workload = get_workload("ycsb-a", "test")
    params = {p.name: p.default for p in workload.params} | {"driver": "ycsb"} | fanout
    with pytest.raises(
        InputError,
        match=r"^ycsb-a: driver=ycsb runs one YCSB client process here; drivers=\d "
        r"fanout=\w+ need driver=native$",
    ):
        workload.check_params(params, target)


F_OUTPUT = """[OVERALL], RunTime(ms), 2000
[OVERALL], Throughput(ops/sec), 500.0
[CLEANUP], Operations, 2
[CLEANUP], AverageLatency(us), 10.0
[READ], Operations, 740
[READ], AverageLatency(us), 900.5
[READ], MinLatency(us), 100
[READ], MaxLatency(us), 9000
[READ], 95thPercentileLatency(us), 2000
[READ], 99thPercentileLatency(us), 4000
[READ], Return=OK, 740
[READ], Return=NOT_FOUND, 10
[READ-FAILED], Operations, 10
[READ-FAILED], AverageLatency(us), 50.0
[READ-MODIFY-WRITE], Operations, 500
[READ-MODIFY-WRITE], AverageLatency(us), 2000.0
[READ-MODIFY-WRITE], MaxLatency(us), 9500
[READ-MODIFY-WRITE], 95thPercentileLatency(us), 4000
[READ-MODIFY-WRITE], 99thPercentileLatency(us), 6000
[UPDATE], Operations, 500
[UPDATE], AverageLatency(us), 1000.0
[UPDATE], MaxLatency(us), 5000
[UPDATE], 95thPercentileLatency(us), 1500
[UPDATE], 99thPercentileLatency(us), 3000
[UPDATE], Return=OK, 500
[STORBENCH-OVERALL], Operations, 1240
[STORBENCH-OVERALL], AverageLatency(us), 1337.0
[STORBENCH-OVERALL], MaxLatency(us), 9500
[STORBENCH-OVERALL], 95thPercentileLatency(us), 3000
[STORBENCH-OVERALL], 99thPercentileLatency(us), 5000
"""


def test_workload_fs_nested_reads_and_updates_are_counted_once():
    result = core_driver.to_result(core_driver.parse(F_OUTPUT), "f", cpu_s=0.99)
    # YCSB's [READ] holds the 500 reads inside READ-MODIFY-WRITE, [UPDATE] only its updates
    assert {op: s["ops"] for op, s in result["ops"].items()} == {"READ": 240, "READ-MODIFY-WRITE": 500}
    assert result["total"]["ops"] == 740 and result["total"]["ops_per_s"] == 500.0
    assert result["errors"] == {"not_found": {"count": 10, "example": "YCSB Return=NOT_FOUND (READ)"}}
    assert result["ops"]["READ"]["errors"] == 10 and result["total"]["errors"] == 10
    assert result["ops"]["READ"]["latency"]["p99_ms"] == 4.0 and result["total"]["latency"]["p95_ms"] == 3.0
    assert result["cpu"]["cpu_us_per_op"] == pytest.approx(0.99e6 / 740)


def test_ycsbs_throughput_is_over_its_operations_without_the_session_open():
    # RunTime 2000 ms of which 400 ms opened the session: 1000 ops ran in 1.6 s, as the engine would time them
    total = {"ops_per_s": 500.0, "runtime_ms": 2000.0, "session_open_ms": 400}
    core_driver.operations_scope(total)
    assert total["measured_s"] == pytest.approx(1.6) and total["ops_per_s"] == pytest.approx(625.0)
    assert total["ycsb_ops_per_s"] == 500.0  # YCSB's own figure kept beside it
    unclocked = {"ops_per_s": 500.0, "runtime_ms": None, "session_open_ms": None}
    core_driver.operations_scope(unclocked)
    assert unclocked["measured_s"] is None and unclocked["ops_per_s"] == 500.0


def test_a_figure_ycsb_did_not_print_is_none_not_zero():
    cut = F_OUTPUT.replace("[OVERALL], Throughput(ops/sec), 500.0\n", "")  # a summary without that line
    total = core_driver.to_result(core_driver.parse(cut), "f", cpu_s=0.0)["total"]
    assert total["ops_per_s"] is None
    scoped = total | {"session_open_ms": 400}  # the clock is there, the rate is not
    core_driver.operations_scope(scoped)
    assert scoped["measured_s"] == pytest.approx(1.6) and scoped["ops_per_s"] is None


def test_a_target_rate_is_ycsbs_target_and_a_closed_loop_has_none():
    params = {p.name: p.default for p in get_workload("ycsb-c", "t").params} | {"operationcount": 100}
    contacts = [("127.0.0.1", 9042)]
    assert "target" not in core_driver.properties("c", params, contacts, "ks", "usertable")
    paced = core_driver.properties("c", params | {"target_ops_s": 499.6}, contacts, "ks", "usertable")
    assert paced["target"] == "500"  # YCSB's -target is an int of operations per second, all threads
