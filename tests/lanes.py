"""The two lanes of the suite (a pytest plugin, loaded by tests/conftest.py).

A test that starts a real process carries the ``real`` marker: a service (HDFS, SeaweedFS, Ceph, Cassandra,
PostgreSQL, node_exporter, a BMC), a JVM (Spark, Hadoop, YCSB), fio, rados, ipmitool, Chromium, cargo, mvn,
loop devices (losetup, mount), or the storbench CLI as a child process. ``make test-fast`` runs
``-m "not real"``; ``make test`` runs everything.

A test gets ``real`` from its file (``pytestmark = pytest.mark.real``) or its own ``@pytest.mark.real``, or
here: from a service marker (spark, s3, ceph, cassandra, postgres), or from a fixture that starts a service
(``REAL_FIXTURES``, directly or through another fixture). ``CHEAP_TOOLS`` may run in the fast lane unmarked.

The guard: in a run that selects no ``real`` test (``-m "not real"``, or any part of the fast lane), an unmarked
test whose set-up or body starts any other program (subprocess.Popen, which run/check_output and asyncio use)
fails before the program starts, with one line naming the test and the program (tests/proc_guard.py).
"""

import pytest

from tests import proc_guard

REAL = "real"
SERVICE_MARKERS = ("spark", "s3", "ceph", "cassandra", "postgres", "lab", "yarn")
# the shared fixtures that start a service (tests/conftest.py, the rados conftest, redfish_server)
REAL_FIXTURES = frozenset(
    {"hdfs", "yarn", "s3", "ceph", "cassandra1", "cassandra3", "postgres", "bmc", "lab", "spark_standalone"}
)
# Debian base-system tools that answer in well under a second and leave nothing running: a shell running a
# short script (setup.sh --check, the power `command:` source), lsblk/blkid reading a device, git, a small dd,
# uname (the standard library asks it for the processor once, for the machine fingerprint).
# Anything that needs mount/losetup, a tool the base set-up does not install, or Python (the CLI) is `real`.
CHEAP_TOOLS = frozenset({"sh", "bash", "git", "lsblk", "blkid", "dd", "uname"})

GUARDING = pytest.StashKey[bool]()


@pytest.hookimpl(tryfirst=True)  # before -m deselects: the markers implied here must count
def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker(REAL) is None and (
            any(item.get_closest_marker(m) for m in SERVICE_MARKERS) or REAL_FIXTURES & set(item.fixturenames)
        ):
            item.add_marker(REAL)


def pytest_collection_finish(session):
    session.config.stash[GUARDING] = bool(session.items) and not any(i.get_closest_marker(REAL) for i in session.items)


def _guard(item):
    """Set-up and call only: a module or session fixture may be torn down after an unmarked test."""
    if not item.config.stash.get(GUARDING, False) or item.get_closest_marker(REAL) is not None:
        return (yield)

    def why(program: str) -> str | None:
        if program in CHEAP_TOOLS:
            return None
        return (
            f"{item.nodeid} starts a real process ({program}) but is not marked `real`: give it "
            "@pytest.mark.real (or its file pytestmark = pytest.mark.real); see tests/lanes.py"
        )

    with proc_guard.refusing(why) as refusal:
        result = yield
    if refusal.violations:  # also when the code under test swallowed the failure, or it came on another thread
        pytest.fail(refusal.violations[0], pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _guard(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _guard(item))
