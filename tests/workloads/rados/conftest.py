"""One real single-node Ceph (mon, mgr, one BlueStore-on-file OSD, RGW) for the ceph tests, started and
stopped through the real CLI (`storbench services up|down ceph`)."""

import time

import pytest

from storbench import api
from storbench.results.store import ResultStore
from tests.cli.helpers import storbench
from tests.workloads.rados.ceph_tools import ceph_cmd, wait_clean


@pytest.fixture(scope="session")
def ceph(request, tmp_path_factory):
    from tests.grouping import serve_until_last_user

    home = tmp_path_factory.mktemp("ceph-home")
    up = storbench(home, "services", "up", "ceph", "--rgw", timeout=300)
    if up.returncode != 0:
        storbench(home, "services", "down", "ceph", timeout=120)
        raise AssertionError(f"services up ceph failed: {up.stderr}")
    state = api.service_status("ceph", ResultStore(home))

    def down_():
        down = storbench(home, "services", "down", "ceph", timeout=300)
        assert down.returncode == 0 and "stopped" in down.stdout, down.stderr
        assert api.service_status("ceph", ResultStore(home)) is None

    yield from serve_until_last_user(request, (home, state, up), down_)  # tests/grouping.py


@pytest.fixture
def pool(ceph):
    """A fresh pool of its own for one test (deleted after), so tests never see each other's objects."""
    home, state, _ = ceph
    name = f"t{time.monotonic_ns() % 10**9}"
    ceph_cmd(state, "osd", "pool", "create", name, "8", "8")
    ceph_cmd(state, "osd", "pool", "application", "enable", name, "rados")
    wait_clean(state)
    yield name
    # the cluster refuses pool deletion (mon_allow_pool_delete = false in its conf): allowed for this one delete
    ceph_cmd(state, "tell", "mon.a", "config", "set", "mon_allow_pool_delete", "true")
    try:
        ceph_cmd(state, "osd", "pool", "delete", name, name, "--yes-i-really-really-mean-it")
    finally:
        ceph_cmd(state, "tell", "mon.a", "config", "set", "mon_allow_pool_delete", "false")
