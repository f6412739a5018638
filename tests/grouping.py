"""Which tests share a worker when the suite runs in parallel (``make test``: pytest-xdist, ``--dist loadgroup``),
and in which order the groups are handed out.

A session service that is slow to start (a 3-node Cassandra, Ceph, HDFS, the lab's guest) starts in one worker
only: every test that uses it is in that service's group. Every other test is grouped with its module, so a
module's own fixtures (a generated TPC-DS dataset, a Spark cluster) are set up once and its tests run in file
order, as they do serially. Cheap services (SeaweedFS, PostgreSQL, a BMC) may start once per worker.

xdist hands the groups out in collection order, each to the next worker with little left to do. Collected
alphabetically, the 5-minute TPC-DS module came near the end, so one worker ran it alone while the other sat
idle. The groups are therefore collected longest first (LPT scheduling): the long groups start early and the
many short ones fill in at the end, where the two workers then finish within a few seconds of each other.

A service group's session service (``serve_until_last_user``: every service fixture's tail) stops right after
the last test that uses it, not at the worker's end: its idle daemons (four Cassandra JVMs, Ceph, the lab's QEMU)
no longer take CPU and memory from the other worker for the rest of the run, and its shutdown is off the run's
tail.

Without xdist (``make test-fast``, a plain ``pytest``) the groups and the order are ignored and services stop
at the session's end.
"""

from __future__ import annotations

from typing import Callable, Iterator, Sequence, TypeVar

import pytest

T = TypeVar("T")

# the group of a test that uses any of these fixtures, the first that matches winning. Fixtures, not markers: a lab
# cluster's tests (tests/lab_cluster, marker `lab`) make their own namespaces per module and need not wait for the
# QEMU guest's worker (fixture `lab`); in one group they were a 25-minute tail.
SERVICE_GROUPS = (
    ("lab", {"lab"}),
    ("cassandra", {"cassandra1", "cassandra3"}),
    ("ceph", {"ceph"}),
    ("hdfs", {"hdfs", "yarn"}),  # one group: the YARN tests' dfsio reads and writes the same HDFS
    ("spark-standalone", {"spark_standalone"}),
)

# Seconds the longest groups took in the CI rehearsal (`--durations=0` summed per group, 2 workers on 2 cores).
# Only the order matters, so rough figures do: a group not listed is estimated from its tests (REAL_S for each test that starts a process, FAST_S for the others), and a
# listed group that has grown since counts as its estimate when that is larger.
GROUP_S = {
    "ceph": 450,
    "hdfs": 395,
    "cassandra": 380,
    "tests/workloads/tpcds/test_tpcds.py": 90,  # a quarter of the queries run, all 104 planned
    "lab": 400,  # the QEMU guest's tests
    "tests/lab_cluster/test_cassandra_on_lab.py": 300,  # a 3-node Cassandra in the lab hosts, two cut runs
    "tests/lab_cluster/test_spark_on_lab.py": 350,  # a 3-worker Spark cluster in the hosts, dfsio-write and a shuffle
    "tests/lab_cluster/test_lab_cluster.py": 200,
    "tests/lab_cluster/test_yarn_on_lab.py": 150,
    "tests/lab_cluster/test_hdfs_on_lab.py": 120,
    "spark-standalone": 195,
    "tests/test_secrets_proc.py": 105,
    "tests/services/test_metastore.py": 100,
    "tests/workloads/objects/test_spark_s3a.py": 85,
    "tests/workloads/objects/test_engine.py": 80,
    "tests/workloads/objects/test_objects_cli.py": 80,
    "tests/workloads/tpcds/test_tpcds_layout.py": 75,
    "tests/workloads/fio/test_fio_cli.py": 65,
    "tests/cli/test_end_to_end.py": 45,
    "tests/test_wheel.py": 40,
}
BENCHMARK_S = {
    "tpcds_gen_and_overhead": 30,
    "s3a_vs_native": 25,
    "committers": 22,
    "compat_vs_default": 22,
    "terasort_vs_hadoop": 18,
    "power_sampling_cost": 13,
    "collector_overhead": 12,
    "dfsio_vs_fio": 12,
    "objects_vs_peers": 11,
    "cluster_telemetry_cost": 10,
}  # own_group smoke runs (2 rounds when measured; 1 since), by name
OWN_GROUP_S = 20  # a smoke run not listed
REAL_S, FAST_S = 5.0, 0.05


def fixtures_of(item: pytest.Item) -> set[str]:
    """The fixtures ``item`` uses: its own, and those it takes by a parametrized name (``getfixturevalue``), which
    pytest does not list but which must put it in the service's group and count it as a user."""
    params = getattr(item, "callspec", None)
    named = {value for value in params.params.values() if isinstance(value, str)} if params else set()
    return set(item.fixturenames) | (named & SERVICE_FIXTURES)


def group_of(item: pytest.Item) -> str:
    used = fixtures_of(item)
    for group, names in SERVICE_GROUPS:
        if used & names:
            return group
    if item.get_closest_marker("own_group"):  # independent slow tests of one module (the benchmark smoke runs)
        return item.nodeid
    return item.nodeid.split("::", 1)[0]  # the module


def estimate_s(item: pytest.Item) -> float:
    """A rough cost of one test: does it start a process (the `real` marker or what implies it, tests/lanes.py)?"""
    from tests.lanes import REAL, REAL_FIXTURES, SERVICE_MARKERS

    real = any(item.get_closest_marker(m) for m in (REAL, *SERVICE_MARKERS)) or REAL_FIXTURES & set(item.fixturenames)
    if item.get_closest_marker("own_group"):
        params = getattr(item, "callspec", None)
        name = str(params.params.get("name", "")) if params else ""
        return BENCHMARK_S.get(name, OWN_GROUP_S)
    return REAL_S if real else FAST_S


def longest_first(items: Sequence, group: Callable[[object], str], cost: Callable[[object], float]) -> list:
    """``items`` with their groups ordered by total cost, longest first (GROUP_S or the sum of ``cost``, whichever
    is larger); a group's items keep their order, and groups of equal cost their collection order."""
    totals: dict[str, float] = {}
    for item in items:
        totals[group(item)] = totals.get(group(item), 0.0) + cost(item)
    rank = {g: (-max(total, GROUP_S.get(g, 0.0)), n) for n, (g, total) in enumerate(totals.items())}
    return sorted(items, key=lambda item: rank[group(item)])


def last_users(items: Sequence, group: Callable[[object], str], uses: Callable[[object], set]) -> dict[str, object]:
    """Service fixture name → the last of ``items`` that uses it, for a fixture whose users are all in one group
    (so they run on one worker, in this order, and nothing after that test needs it)."""
    users: dict[str, list] = {}
    for item in items:
        for name in uses(item) & SERVICE_FIXTURES:
            users.setdefault(name, []).append(item)
    return {name: found[-1] for name, found in users.items() if len({group(i) for i in found}) == 1}


SERVICE_FIXTURES = frozenset().union(*(names for _, names in SERVICE_GROUPS))
LAST_USERS = pytest.StashKey[dict]()  # service fixture name → its last user (a parallel run's collection)
STOPS = pytest.StashKey[dict]()  # service fixture name → its stop, once, while it is up


def stop_after_last_user(request: pytest.FixtureRequest, stop: Callable[[], None]) -> Callable[[], None]:
    """``stop`` run once: after the last test that uses this session service in a parallel run (pytest_runtest_
    teardown below), or when the fixture's own ``finally`` calls the returned function (the session's end)."""
    stops = request.config.stash.setdefault(STOPS, {})
    done = []

    def once() -> None:
        stops.pop(request.fixturename, None)
        if not done:
            done.append(True)
            stop()

    stops[request.fixturename] = once
    return once


def serve_until_last_user(request: pytest.FixtureRequest, value: T, down: Callable[[], None]) -> Iterator[T]:
    """The tail every session service fixture shares (``yield from`` it): ``value`` (what its tests get) yielded,
    then ``down`` run once, after the service's last user in a parallel run, else at the session's end."""
    stop = stop_after_last_user(request, down)
    try:
        yield value
    finally:
        stop()


@pytest.hookimpl(wrapper=True, trylast=True)
def pytest_runtest_teardown(item, nextitem) -> Iterator[None]:
    result = yield  # the test's own fixtures (a module's, using the service) are torn down by now
    stops = item.config.stash.get(STOPS, {})
    for name, last in item.config.stash.get(LAST_USERS, {}).items():
        if last is item and name in stops:
            stops[name]()  # its checks fail as this test's teardown error, as they would at the session's end
    return result


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    # In a worker xdist sets `dist` to "no" and keeps the choice as `loadgroup`. Its own hook, which runs after
    # this one, puts tests with the same `xdist_group` mark on one worker. Every worker collects and orders
    # alike (the order is a pure function of the collection), as xdist requires.
    if getattr(config.option, "loadgroup", False):
        groups = {id(item): group_of(item) for item in items}
        items[:] = longest_first(items, lambda item: groups[id(item)], estimate_s)
        config.stash[LAST_USERS] = last_users(items, lambda item: groups[id(item)], fixtures_of)
        for item in items:
            item.add_marker(pytest.mark.xdist_group(groups[id(item)]))
