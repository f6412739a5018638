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
    return item.nodeid.split("::", 1)[0]  # the module


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the marker
def pytest_collection_modifyitems(config, items):
    if config.pluginmanager.hasplugin("xdist") and config.getoption("dist", "no") == "loadgroup":
        for item in items:
            item.add_marker(pytest.mark.xdist_group(group_of(item)))
