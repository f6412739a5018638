"""benchmarks/kv_vs_ycsb.py in its --quick smoke mode on the session's 1-node Cassandra (--service-home): it logs
in with the service's role, prints its scope line and the five judged verdicts (throughput and CPU per operation over
the steady middle on A and C, ops per client core-second of C as an open loop), each CPU figure's whole-process row
beside it unjudged, and drops the keyspace it made."""

import pytest

from storbench.targets import TargetOptions, parse_target
from tests.benchmarks.quick import run_quick

pytestmark = pytest.mark.cassandra


def _keyspaces(home, state) -> set[str]:
    target = parse_target(state["uri"], TargetOptions(home))
    try:
        return {
            row.keyspace_name for row in target.session().execute("SELECT keyspace_name FROM system_schema.keyspaces")
        }
    finally:
        target.release()


def test_kv_vs_ycsb_quick_on_the_session_node(cassandra1):
    home, state = cassandra1
    before = _keyspaces(home, state)
    verdicts = run_quick("kv_vs_ycsb", "--service-home", str(home))
    judged = {m["name"]: m.group(0) for m in verdicts if "no goal" not in m.group(0)}
    reported = {m["name"] for m in verdicts if "no goal" in m.group(0)}
    for letter in "AC":
        name = f"workload {letter} (4 threads, 1000 operations)"
        assert "goal ≥ 1.3×" in judged[f"{name} throughput, native / YCSB"]
        cpu = f"{name} client CPU per operation"
        assert "goal ≤ 0.5×" in judged[f"{cpu} over the steady middle (/proc), native / YCSB"]
        assert f"{cpu} of the whole process (/proc, start-up and exit in), native / YCSB" in reported
    paced = "workload C open loop at 300 ops/s (4 threads, 300 operations) ops per client core-second"
    assert "goal ≥ 10×" in judged[f"{paced} over the steady middle (/proc), native / YCSB"]
    assert f"{paced} of the whole process (/proc), native / YCSB" in reported
    assert len(judged) == 5, judged
    assert _keyspaces(home, state) == before  # the benchmark's keyspace (storbench_kvbenchPID) is dropped
