"""One real single-node Ceph (mon, mgr, one BlueStore-on-file OSD, RGW) for the ceph tests, started and
stopped through the real CLI (`storbench services up|down ceph`)."""

import json
import subprocess
import time
from pathlib import Path

import pytest

from storbench import api
from storbench.results.store import ResultStore
from tests.cli.helpers import storbench


def ceph_cmd(state, *args: str, timeout: float = 60) -> str:
    done = subprocess.run(
        ["ceph", "-c", state["conf"], "--connect-timeout", "20", *args], capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def rados_cmd(state, pool: str, *args: str, data: bytes | None = None, timeout: float = 60) -> str:
    done = subprocess.run(
        ["rados", "-c", state["conf"], "-p", pool, *args], input=data, capture_output=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.decode()


def wait_clean(state, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = json.loads(ceph_cmd(state, "-s", "-f", "json"))
        pgmap = status["pgmap"]
        clean = sum(s["count"] for s in pgmap.get("pgs_by_state", []) if s["state_name"] == "active+clean")
        if (
            pgmap.get("num_pgs")
            and clean == pgmap["num_pgs"]
            and status["osdmap"].get("num_up_osds") == status["osdmap"].get("num_osds")
        ):
            return
        time.sleep(1)
    raise AssertionError(f"Ceph not clean after {timeout} s: {ceph_cmd(state, '-s')}")


@pytest.fixture(scope="session")
def ceph(request, tmp_path_factory):
    from tests.grouping import stop_after_last_user

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

    stop = stop_after_last_user(request, down_)  # in a parallel run: after its last test (tests/grouping.py)
    try:
        yield home, state, up
    finally:
        stop()


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


def run_dir(outcome) -> Path:
    return Path(outcome["path"])
