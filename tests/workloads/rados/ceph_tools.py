"""The ceph and rados command-line tools against a test cluster's conf (the ``ceph`` fixture's state), each
call asserting success; ``wait_clean`` until every placement group is active+clean and every OSD up."""

import json
import subprocess
import time


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


def one(samples, workload, metric):
    found = [s for s in samples if s["workload"] == workload and s["metric"] == metric]
    assert len(found) == 1, (workload, metric, found)
    return found[0]


def objects(state, pool) -> set[str]:
    return set(rados_cmd(state, pool, "ls").split())
