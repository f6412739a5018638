"""Every benchmark runs in ``--quick`` smoke mode in the full lane (``make test``), so none can rot unseen.

Benchmarks that need Ceph or Cassandra get the session's service with ``--service-home`` (their smoke tests
live beside that service's other tests: ``tests/workloads/rados``, ``tests/workloads/ycsb``); the rest start
what they need themselves (SeaweedFS, Spark in ``local[*]``, fio), at tiny sizes.
"""

import pytest

from tests.benchmarks.quick import BENCHMARKS, run_quick

pytestmark = pytest.mark.real

ELSEWHERE = {"rados_overhead", "kv_vs_ycsb"}  # need the session's Ceph / Cassandra
LIBRARIES = {
    "harness",
    "peers",
    "collector_process",  # imported or started by the others, not benchmarks
    "object_clients",
    "scale_results",
    "scale_stores",
    "scale_cluster",
}
OWN = sorted(p.stem for p in BENCHMARKS.glob("*.py") if p.stem not in ELSEWHERE | LIBRARIES)


@pytest.mark.own_group  # each smoke run is independent: the two workers share them out
@pytest.mark.parametrize("name", OWN)
def test_benchmark_runs_quick_and_prints_its_verdicts(name):
    run_quick(name)


def test_every_benchmark_has_a_smoke_test():
    # a new benchmark file is picked up by the glob above; the ones run elsewhere must still exist
    assert all((BENCHMARKS / f"{name}.py").exists() for name in ELSEWHERE)
