"""Which tests share a worker when the suite runs in parallel (``make test``: pytest-xdist, ``--dist loadgroup``).

A session service that is slow to start (a 3-node Cassandra, Ceph, HDFS, the lab's guest) starts in one worker
only: every test that uses it is in that service's group. Every other test is grouped with its module, so a
module's own fixtures (a generated TPC-DS dataset, a Spark cluster) are set up once and its tests run in file
order, as they do serially. Cheap services (SeaweedFS, PostgreSQL, a BMC) may start once per worker.

Without xdist (``make test-fast``, a plain ``pytest``) the groups are ignored.
"""

import pytest

# the group of a test that uses any of these fixtures or markers, the first that matches winning
SERVICE_GROUPS = (
    ("lab", {"lab"}),
    ("cassandra", {"cassandra1", "cassandra3"}),
    ("ceph", {"ceph"}),
    ("hdfs", {"hdfs"}),
)


def group_of(item: pytest.Item) -> str:
    used = set(item.fixturenames) | {mark.name for mark in item.iter_markers()}
    for group, names in SERVICE_GROUPS:
        if used & names:
            return group
    if item.get_closest_marker("own_group"):  # independent slow tests of one module (the benchmark smoke runs)
        return item.nodeid
    return item.nodeid.split("::", 1)[0]  # the module


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    # In a worker xdist sets `dist` to "no" and keeps the choice as `loadgroup`. Its scheduler puts tests whose
    # node ids end in the same "@GROUP" on one worker; xdist 3.8 appends that suffix by assigning the node's
    # `_nodeid`, which pytest 9 no longer reads (the id lives in `_id`), so the suffix is written here.
    if getattr(config.option, "loadgroup", False):
        for item in items:
            _suffix(item, group_of(item))


def _suffix(item: pytest.Item, group: str) -> None:
    grouped = f"{item.nodeid}@{group}"
    if hasattr(item, "_id"):  # pytest >= 9
        from _pytest.nodeid import NodeId

        item._id = NodeId.parse(grouped)
    else:
        item._nodeid = grouped
