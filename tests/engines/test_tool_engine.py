"""engines/tool.py: a tool engine owns its processes (own process group, killed whole at its time limit, on an
interrupt or when the run cancels), finds the registered engine for a workload's check, and takes a stand-in."""

import os
import subprocess
import threading
import time

import pytest

from storbench.engines.base import all_engines
from storbench.engines.fio import FioEngine
from storbench.engines.tool import ToolEngine, run_limited, stand_in
from tests.engines.fake_tool import FakeFio


def _live(match) -> list[int]:
    """Processes (not zombies) whose (pid, process group, argv bytes) ``match``; a killed one may take a moment to
    become a zombie, so this waits up to 10 s for the list to empty."""
    deadline = time.monotonic() + 10
    while True:
        found = []
        for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
            try:
                stat = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
                argv = open(f"/proc/{pid}/cmdline", "rb").read()
            except OSError:
                continue
            if stat[0] != "Z" and match(pid, int(stat[2]), argv):
                found.append(pid)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.02)


class Sleeper(ToolEngine):
    name = "test-sleeper"

    def read_version(self) -> str:
        return "sleeper 1"

    def run(self, spec: float) -> int:
        proc = self.spawn(["sh", "-c", f"sleep {spec} & sleep {spec}; wait"])  # a forked worker, as fio's jobs
        self.started = proc.pid
        return self.wait(proc, timeout=None)


def test_a_timed_out_tool_is_killed_with_its_forked_workers(tmp_path):
    running: set[int] = set()
    with pytest.raises(subprocess.TimeoutExpired):
        run_limited(["sh", "-c", "sleep 31.25 & sleep 31.25"], 0.5, tmp_path, running)
    assert running == set()  # forgotten once killed
    assert _live(lambda pid, group, argv: argv == b"sleep\x0031.25\x00") == []  # the forked one too


def test_cancel_kills_what_a_run_still_runs():
    engine = Sleeper()
    engine.start()
    assert engine.versions() == {"test-sleeper": "sleeper 1"}
    codes: list[int] = []
    worker = threading.Thread(target=lambda: codes.append(engine.run(30)))
    worker.start()
    while not engine.running:
        threading.Event().wait(0.01)
    group = next(iter(engine.running))
    engine.cancel()  # as the run core does when the run is interrupted
    worker.join(timeout=10)
    assert codes == [-9] and engine.running == set()
    assert _live(lambda pid, in_group, argv: in_group == group) == []  # the forked worker too


def test_a_check_gets_the_registered_engine_and_a_run_its_own():
    assert type(FioEngine.of({})) is FioEngine  # before the run's engines exist
    own = FioEngine()
    assert FioEngine.of({"fio": own}) is own
    with stand_in(FakeFio):
        assert type(FioEngine.of({})) is FakeFio and all_engines()["fio"] is FakeFio
    assert all_engines()["fio"] is FioEngine  # back after the block


def test_a_stand_in_must_be_the_engine_it_stands_in_for():
    class NotFio(ToolEngine):
        name = "fio"

    with pytest.raises(AssertionError, match="a stand-in for fio must subclass FioEngine"):
        with stand_in(NotFio):
            pass
    assert all_engines()["fio"] is FioEngine


@pytest.mark.real  # the lane guard counts a process named rados as the real tool (tests/lanes.py)
def test_rados_bench_killed_at_its_limit_keeps_what_it_printed(tmp_path, monkeypatch):
    """A rados on PATH that prints one second and then hangs: killed at the limit, returncode None, its output read."""
    from storbench.engines.rados import BenchSpec, Cluster, RadosEngine

    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "rados").write_text("#!/bin/sh\necho '  sec Cur ops   started'\nsleep 30.5 & sleep 30.5\n")
    (tools / "rados").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:/usr/bin:/bin")
    pids: list[int] = []
    spec = BenchSpec(Cluster("/x/ceph.conf", "p1"), "write", 5, 2, "r1", tmp_path / "out" / "w.txt", 1.0, 4096, 4096)
    spec.started_pid = pids.append
    done = RadosEngine().run(spec)
    assert done.returncode is None and "sec Cur ops" in done.stdout
    assert done.command[:4] == [str(tools / "rados"), "-c", "/x/ceph.conf", "-p"] and "--no-cleanup" in done.command
    assert _live(lambda pid, group, argv: group == pids[0]) == []
