"""Services own only what they made (issue 12 item 6): an interrupted `up` leaves nothing running, `up`
wipes only a marked service directory, and `down s3` of a ceph-rgw s3 leaves the ceph service alone."""

import os
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest

from storbench import api
from storbench.errors import InputError
from storbench.services import ceph, process, s3


@pytest.mark.real
def test_interrupted_up_stops_the_server_and_leaves_no_state(store):
    seen = {}

    def interrupted(endpoint, access_key, secret_key, procs, log, what):
        proc = procs[-1]
        seen["state"] = process.read_state(store.home / "services" / "s3")  # written before the wait
        deadline = time.monotonic() + 10
        while not process.alive(proc.pid, seen["state"]["marker"]) and time.monotonic() < deadline:
            time.sleep(0.05)  # Ctrl-C once weed is really running
        seen["pid"], seen["cmdline"] = proc.pid, process.cmdline(proc.pid)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        s3.up(store.home / "services" / "s3", start=partial(s3.start_server, wait=interrupted))
    assert seen["state"]["pid"] == seen["pid"] and "weed" in seen["cmdline"]
    assert not Path(f"/proc/{seen['pid']}").exists()  # stopped and reaped
    assert not (store.home / "services" / "s3" / process.STATE).exists()
    assert api.service_status("s3", store) is None


@pytest.mark.real
def test_a_start_that_never_answers_is_stopped_and_started_once_more(store):
    real_wait, first = s3.wait_ready, {}

    def silent_once(endpoint, access_key, secret_key, procs, log, what):
        if first:
            return real_wait(endpoint, access_key, secret_key, procs, log, what)
        first["pids"] = [proc.pid for proc in procs]
        real_wait(endpoint, "not-the-key", secret_key, procs, log, what, timeout_s=1.0)  # answers: access denied

    state = s3.up(store.home / "services" / "s3", start=partial(s3.start_server, wait=silent_once))
    try:
        assert len(first["pids"]) == 4 and not any(Path(f"/proc/{pid}").exists() for pid in first["pids"])
        assert state["pid"] not in first["pids"]
        # the summary says why: the first start's last try (which probe step, what it got)
        assert (
            "started a second time; the first start: seaweedfs (S3) was not ready after 1 s (last try: "
            "create bucket: " in state["summary"]
        )
        assert "not-the-key" not in state["summary"] and state["secret_key"] not in state["summary"]
        assert api.service_status("s3", store)["pid"] == state["pid"]
    finally:
        api.service_down("s3", store)


def test_a_start_that_exits_is_not_started_again(store):
    calls = []

    def exits(workdir, server, retried=""):
        calls.append(retried)
        raise s3.EngineError("seaweedfs (S3) exited with code 1 before it was ready")

    with pytest.raises(s3.EngineError, match="exited with code 1"):
        s3.up(store.home / "services" / "s3", start=exits)
    assert calls == [""]


def test_up_refuses_an_unmarked_service_dir(store):
    workdir = store.home / "services" / "s3"
    workdir.mkdir(parents=True)
    (workdir / "canary").write_text("mine")
    with pytest.raises(InputError) as info:
        api.service_up("s3", store)
    assert str(workdir) in str(info.value) and "\n" not in str(info.value)
    assert (workdir / "canary").read_text() == "mine"


@pytest.mark.real
def test_up_refuses_an_unmarked_service_dir_in_one_line_from_the_cli(store):
    workdir = store.home / "services" / "hdfs"
    workdir.mkdir(parents=True)
    (workdir / "canary").write_text("mine")
    done = subprocess.run(
        [sys.executable, "-m", "storbench", "--results", str(store.home), "services", "up", "hdfs"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and str(workdir) in done.stderr
    assert (workdir / "canary").read_text() == "mine"


def test_osd_dir_of_another_home_is_refused(tmp_path):
    other = tmp_path / "other" / "services" / "ceph"
    osd_root = tmp_path / "disk" / "storbench-ceph-osd"
    (osd_root / "osd0").mkdir(parents=True)
    (osd_root / ceph.OWNED).write_text(f"{other}\n")  # made by storbench, but for another home
    mine = tmp_path / "mine" / "services" / "ceph"
    with pytest.raises(InputError, match="not created by storbench for"):  # refused before any Ceph binary is needed
        ceph.up(mine, osd_dir=str(tmp_path / "disk"), find_binaries=lambda rgw: {})
    assert (osd_root / "osd0").is_dir() and not mine.exists()


def test_down_s3_on_ceph_rgw_leaves_ceph_running(tmp_path, monkeypatch):
    home = tmp_path / "home"
    ceph_dir, s3_dir = home / "services" / "ceph", home / "services" / "s3"
    for workdir, service in ((ceph_dir, "ceph"), (s3_dir, "s3")):
        process.fresh_dir(workdir, service)
    mon = {"kind": "mon", "pid": 4242, "marker": "-c conf "}  # stopping any of ceph's daemons goes through stop_pid
    process.write_state(ceph_dir, {"service": "ceph", "pid": 4242, "marker": "-c conf ", "daemons": [mon]})
    process.write_state(
        s3_dir,
        {
            "service": "s3",
            "server": "ceph-rgw",
            "uses": "ceph",
            "pid": 4242,
            "marker": "-c conf ",
            "ceph_workdir": str(ceph_dir),
        },
    )
    calls = []
    monkeypatch.setattr(ceph, "down", lambda workdir: calls.append(("down", workdir)))
    monkeypatch.setattr(process, "stop_pid", lambda *a, **k: calls.append(("stop_pid", a)))
    monkeypatch.setattr(ceph, "status", lambda workdir: {"pid": 4242})
    assert s3.down(s3_dir)
    assert calls == []
    assert not s3_dir.exists() and (ceph_dir / process.STATE).exists()


def test_a_service_directory_from_before_the_markers_is_still_ours(tmp_path):
    """Upgrading keeps working: a directory whose state.json (written by an older storbench) names the service."""
    from storbench.services import process

    old = tmp_path / "services" / "hdfs"
    old.mkdir(parents=True)
    (old / "state.json").write_text('{"service": "hdfs", "pid": 1}')
    assert process.owned(old, "hdfs") and not process.owned(old, "s3")
    (old / "state.json").write_text("not json")
    assert not process.owned(old, "hdfs")


def _state(tmp_path):
    return {
        "service": "test",
        "workdir": str(tmp_path),
        "summary": "starting",
        "processes": [
            {"kind": "database", "pid": 101, "marker": "db"},
            {"kind": "server", "pid": 102, "marker": "srv"},
        ],
    }


def test_a_start_interrupted_midway_stops_what_started_and_forgets_it(tmp_path):
    state, stopped = _state(tmp_path), []
    with pytest.raises(KeyboardInterrupt):
        with process.all_or_nothing(tmp_path, state, lambda s: stopped.extend(e["pid"] for e in s["processes"])):
            assert process.read_state(tmp_path)["processes"] == state["processes"]  # `down` could stop them now
            raise KeyboardInterrupt
    assert stopped == [101, 102] and not (tmp_path / process.STATE).exists()
    assert "pid" not in state and "startup_s" not in state


def test_a_completed_start_names_its_main_process_and_its_start_up_time(tmp_path):
    state = _state(tmp_path)
    with process.all_or_nothing(tmp_path, state, lambda s: pytest.fail("a completed start stops nothing"), main=-1):
        time.sleep(0.05)
    assert (state["pid"], state["marker"]) == (102, "srv") and state["startup_s"] >= 0.05
