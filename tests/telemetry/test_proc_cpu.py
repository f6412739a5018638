"""telemetry/proc_cpu.py: a client's CPU sampled from /proc and scoped to the steady middle of its operations.
The middle and the interpolation are computed from given points; the sampler watches a real child process."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from storbench.telemetry.proc_cpu import CpuTrace, CpuWatch, at, middle_cpu, middle_window, process_cpu_s

# a slow start (nothing done for 2 s: a JVM starting, a session opening), then 100 ops/s, then a slow tail
PROGRESS = [(0.0, 0.0), (1.0, 0.0), (2.0, 0.0), (3.0, 100.0), (4.0, 200.0), (5.0, 300.0), (6.0, 400.0), (9.0, 400.0)]


def test_the_middle_is_the_second_and_third_quarter_of_the_operations_not_of_the_time():
    # 400 ops: the 100th done at t=3, the 300th at t=5; the idle start and tail are outside
    assert middle_window(PROGRESS) == (3.0, 5.0, 200.0)
    assert middle_window(PROGRESS, share=1.0) == (2.0, 6.0, 400.0)
    start, end, ops = middle_window([(10.0, 0.0), (11.0, 1000.0)])  # one bucket: linear inside it
    assert (start, end, ops) == (10.25, 10.75, 500.0)
    assert middle_window([(0.0, 0.0)]) is None and middle_window([(0.0, 5.0), (1.0, 5.0)]) is None
    with pytest.raises(ValueError):
        middle_window(PROGRESS, share=0)


def test_cpu_over_the_middle_leaves_out_the_start_up_and_the_exit():
    # 3 s of CPU before the first op (start-up), 10 ms per op after, 1 s at exit
    cpu = CpuTrace(1, [(0.0, 0.0), (2.0, 3.0), (3.0, 4.0), (4.0, 5.0), (5.0, 6.0), (6.0, 7.0), (9.0, 8.0)], 8.0)
    got = middle_cpu(PROGRESS, [cpu])
    assert got["cpu_s"] == pytest.approx(2.0) and got["cpu_us_per_op"] == pytest.approx(10_000.0)
    assert (got["from_unix_s"], got["to_unix_s"], got["ops"]) == (3.0, 5.0, 200.0)
    assert process_cpu_s([cpu]) * 1e6 / 400 == pytest.approx(20_000.0)  # the whole process: twice as much
    # several processes add up; one not sampled over the middle: no figure rather than a partial one
    assert middle_cpu(PROGRESS, [cpu, cpu])["cpu_us_per_op"] == pytest.approx(20_000.0)
    assert middle_cpu(PROGRESS, [cpu, CpuTrace(2, [(0.0, 0.0), (4.0, 1.0)])]) is None
    assert process_cpu_s([cpu, CpuTrace(2, [(0.0, 0.0)])]) is None  # never read at its exit
    assert at(cpu.points, 2.5) == pytest.approx(3.5) and at(cpu.points, 9.5) is None


BURN = """
import threading
def burn():
    x = 0
    for i in range(3_000_000):
        x += i
threads = [threading.Thread(target=burn) for _ in range(3)]
[t.start() for t in threads]
[t.join() for t in threads]
"""


@pytest.mark.real  # a real child process (no service)
def test_a_watched_child_is_sampled_while_it_runs_and_read_whole_at_its_exit_before_it_is_reaped():
    watch = CpuWatch(interval=0.05)
    proc = subprocess.Popen([sys.executable, "-c", BURN])
    assert watch.watch([proc.pid], timeout=600)
    _, status, usage = os.wait4(proc.pid, 0)  # still there to reap: the watch did not reap it
    proc.returncode = os.waitstatus_to_exitcode(status)
    (trace,) = watch.traces
    rusage = usage.ru_utime + usage.ru_stime
    assert trace.exit_cpu_s == pytest.approx(rusage, abs=0.02)  # the zombie's /proc/PID/stat: ticks of 10 ms
    values = [cpu for _, cpu in trace.points]
    assert values == sorted(values) and values[-1] == pytest.approx(rusage, abs=0.02)
    assert [t for t, _ in trace.points] == sorted(t for t, _ in trace.points)


@pytest.mark.real
def test_a_watch_past_its_timeout_says_so_and_leaves_the_child_to_the_caller():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        watch = CpuWatch(interval=0.05)
        assert watch.watch([proc.pid], timeout=0) is False
        assert watch.traces[0].exit_cpu_s is None and proc.poll() is None
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.real
def test_a_zombies_ticks_never_read_less_than_its_threads_were_seen_to_run(monkeypatch):
    """/proc/PID/stat counts sampled 10 ms ticks: a short run's can read 0 (a quick native YCSB run's did, and its
    CPU per operation was then missing). The whole process is never less than its threads' schedstat showed."""
    from storbench.telemetry import proc_cpu

    monkeypatch.setattr(proc_cpu, "exit_cpu_s", lambda pid, proc_root="/proc", hz=None: 0.0)
    watch = CpuWatch(interval=0.05)
    proc = subprocess.Popen([sys.executable, "-c", BURN])
    assert watch.watch([proc.pid], timeout=600)
    proc.wait()
    (trace,) = watch.traces
    seen = max(cpu for _, cpu in trace.points[:-1])
    assert seen > 0 and trace.exit_cpu_s == seen and trace.points[-1][1] == seen
