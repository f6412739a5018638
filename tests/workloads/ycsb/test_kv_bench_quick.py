"""benchmarks/kv_vs_ycsb.py in its --quick smoke mode on the session's 1-node Cassandra (--service-home): it logs
in with the service's role, prints its scope line and the five judged verdicts (throughput and in-window CPU per
operation on A and C, ops per client core-second of C as an open loop) over 3 rounds, and drops the keyspace it made."""

import pytest

from storbench.targets import TargetOptions, parse_target
from tests.benchmarks.quick import run_quick

pytestmark = pytest.mark.cassandra


def _keyspaces(home, state) -> set[str]:
    target = parse_target(state["uri"], TargetOptions(home))
    try:
        return {row.keyspace_name for row in target.session().execute("SELECT keyspace_name FROM "
                                                                      "system_schema.keyspaces")}
    finally:
        target.release()


def test_kv_vs_ycsb_quick_on_the_session_node(cassandra1):
    home, state = cassandra1
    before = _keyspaces(home, state)
    verdicts = run_quick("kv_vs_ycsb", "--service-home", str(home))
    judged = {m["name"]: m.group(0) for m in verdicts if "no goal" not in m.group(0)}
    for letter in "AC":
        name = f"workload {letter} (4 threads, 1000 operations)"
        assert "goal ≥ 1.3×" in judged[f"{name} throughput, native / YCSB"]
        assert "goal ≤ 0.5×" in judged[f"{name} client CPU per operation in-window, native / YCSB"]
    paced = judged["workload C open loop at 300 ops/s (4 threads, 300 operations) ops per client core-second "
                   "in-window, native / YCSB"]
    assert "goal ≥ 10×" in paced
    assert len(judged) == 5, judged
    assert _keyspaces(home, state) == before  # the benchmark's keyspace (storbench_kvbenchPID) is dropped
