"""The noise sentinel: golden /proc texts, a fake /proc of a few processes, and one real neighbour."""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from storbench.telemetry.proc_tasks import parse_dirty, parse_pid_io, parse_pid_stat, parse_pressure
from storbench.telemetry.sentinel import NAMES, NoiseSentinel, service_pids

PF_KTHREAD = 0x00200000
HZ = 100


def test_stat_line_with_spaces_and_parentheses_in_the_name(data):
    stat = parse_pid_stat((data / "sentinel" / "stat-tricky-comm").read_text())
    assert (stat.pid, stat.ppid, stat.ticks, stat.start) == (4242, 1, 150 + 75 + 30 + 20, 987654)
    assert not stat.kernel_thread


def test_kthreadd_is_a_kernel_thread(data):
    assert parse_pid_stat((data / "sentinel" / "stat-kthreadd").read_text()).kernel_thread


def test_io_is_storage_bytes_not_rchar(data):
    assert parse_pid_io((data / "sentinel" / "io").read_text()) == 4000000 + 2500000
    assert parse_pid_io("rchar: 5\nwchar: 6\n") is None


def test_pressure_some_total(data):
    assert parse_pressure((data / "sentinel" / "pressure-io").read_text()) == 10995708
    assert parse_pressure((data / "sentinel" / "pressure-cpu-5.4").read_text()) == 11481146
    assert parse_pressure("") is None


def test_dirty_and_writeback(data):
    assert parse_dirty((data / "sentinel" / "meminfo").read_text()) == (102400 + 2048) * 1024
    assert parse_dirty("MemTotal: 1 kB\n") is None


class FakeProc:
    """A /proc of a few processes: stat and io per PID, /proc/stat, meminfo and pressure."""

    def __init__(self, root: Path, psi: bool = True):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.psi = psi
        self.system(steal=500, psi=(1_000_000, 0, 0), dirty_kb=102400, writeback_kb=2048)

    def process(
        self,
        pid: int,
        ppid: int,
        utime: int = 0,
        cutime: int = 0,
        start: int = 100,
        flags: int = 0x400100,
        io: int | None = 0,
        name: str = "p",
        cmdline: str = "",
    ) -> None:
        d = self.root / str(pid)
        d.mkdir(exist_ok=True)
        (d / "stat").write_text(
            f"{pid} ({name}) S {ppid} {pid} {pid} 0 -1 {flags} 10 0 0 0 {utime} 0 {cutime} 0 "
            f"20 0 1 0 {start} 1000 100 18446744073709551615 0 0 0 0\n"
        )
        if io is not None:
            (d / "io").write_text(
                f"rchar: 99\nwchar: 99\nsyscr: 1\nsyscw: 1\nread_bytes: {io}\nwrite_bytes: 0\n"
                f"cancelled_write_bytes: 0\n"
            )
        (d / "cmdline").write_text(cmdline.replace(" ", "\0") + "\0")

    def end(self, pid: int) -> None:
        for f in (self.root / str(pid)).iterdir():
            f.unlink()
        (self.root / str(pid)).rmdir()

    def system(self, steal: int, psi: tuple[int, int, int], dirty_kb: int, writeback_kb: int = 0) -> None:
        (self.root / "stat").write_text(
            f"cpu  1000 0 500 8000 20 0 10 {steal} 0 0\ncpu0 1000 0 500 8000 20 0 10 {steal} 0 0\n"
        )
        (self.root / "meminfo").write_text(
            f"MemTotal: 8000000 kB\nMemAvailable: 4000000 kB\nDirty: {dirty_kb} kB\nWriteback: {writeback_kb} kB\n"
        )
        if self.psi:
            (self.root / "pressure").mkdir(exist_ok=True)
            for kind, total in zip(("cpu", "io", "memory"), psi):
                (self.root / "pressure" / kind).write_text(
                    f"some avg10=0.00 avg60=0.00 avg300=0.00 total={total}\n"
                    f"full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
                )


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def machine(tmp_path: Path, psi: bool = True) -> tuple[FakeProc, Path]:
    """init, kthreadd and a kworker, the run (100) with a child, a neighbour (200), a shell (300) with a child
    (301), and a service's daemon (400, recorded in its state file) with a child (401)."""
    proc = FakeProc(tmp_path / "proc", psi)
    proc.process(1, 0, utime=1000, io=None, name="init")  # io unreadable: left out
    proc.process(2, 0, flags=PF_KTHREAD, io=None, name="kthreadd")
    proc.process(50, 2, utime=5000, flags=PF_KTHREAD, io=None, name="kworker/0:1")
    proc.process(100, 1, utime=300, name="storbench")
    proc.process(101, 100, utime=200, io=10_000_000, name="java")
    proc.process(200, 1, utime=100, io=1_000_000, name="stress", cmdline="stress --cpu 1")
    proc.process(300, 1, utime=10, name="bash")
    proc.process(301, 300, utime=50, io=500_000, name="make")
    proc.process(400, 1, utime=1000, name="java", cmdline="java -cp x org.apache.hadoop.MiniDFS")
    proc.process(401, 400, utime=500, name="java")
    services = tmp_path / "home" / "services"
    (services / "hdfs").mkdir(parents=True)
    (services / "hdfs" / "state.json").write_text(
        json.dumps(
            {
                "service": "hdfs",
                "pid": 400,
                "marker": "org.apache.hadoop.MiniDFS",
                "processes": [{"pid": 200, "marker": "DataNode"}],
            }
        )
    )  # a stale entry: PID 200 is someone else now
    return proc, services


def sentinel_for(proc: FakeProc, services: Path | None, clock: Clock) -> NoiseSentinel:
    return NoiseSentinel(proc_root=str(proc.root), roots={100}, services=services, hz=HZ, clock=clock)


def test_service_pids_come_with_their_markers(tmp_path):
    _, services = machine(tmp_path)
    assert sorted(service_pids(services)) == [(200, "DataNode"), (400, "org.apache.hadoop.MiniDFS")]


def test_a_window_counts_only_the_other_processes(tmp_path):
    proc, services = machine(tmp_path)
    clock = Clock()
    sentinel = sentinel_for(proc, services, clock)
    start = sentinel.mark(10.0)
    # two seconds later
    clock.now += 2.0
    proc.process(50, 2, utime=5500, flags=PF_KTHREAD, io=None, name="kworker/0:1")  # kernel: not counted
    proc.process(100, 1, utime=700, name="storbench")  # the run's own, and its tree
    proc.process(101, 100, utime=500, io=60_000_000, name="java")
    proc.process(102, 101, utime=100, io=5_000_000, name="python")  # a new child of the run's
    proc.process(200, 1, utime=200, io=5_000_000, name="stress", cmdline="stress --cpu 1")  # +100 ticks, +4 MB
    proc.end(301)  # reaped by the shell: 50 ticks before, 30 in the window; 0.5 MB before, 0.25 MB in it
    proc.process(300, 1, utime=10, cutime=80, io=750_000, name="bash")
    proc.process(500, 1, utime=40, io=1_000_000, start=900, name="cron")  # appeared: counted from 0
    proc.process(400, 1, utime=2000, name="java", cmdline="java -cp x org.apache.hadoop.MiniDFS")  # service: own
    proc.process(401, 400, utime=700, io=90_000_000, name="java")
    proc.system(steal=520, psi=(1_400_000, 100_000, 0), dirty_kb=0)
    end = sentinel.mark(12.0)
    values = sentinel.window(start, end)
    assert values == {
        "noise_other_cpu_pct": 85.0,  # 100 + 30 + 40 ticks: 1.7 CPU-s over 2 s
        "noise_steal_pct": 10.0,  # 20 ticks over 2 s
        "noise_other_io_mb": 5.25,  # 4 + 0.25 + 1
        "noise_psi_cpu_pct": 20.0,
        "noise_psi_io_pct": 5.0,
        "noise_psi_mem_pct": 0.0,
        "noise_dirty_mb": round((102400 + 2048) * 1024 / 1e6, 3),  # at the start
    }


def test_without_services_the_daemon_is_a_neighbour(tmp_path):
    proc, _ = machine(tmp_path)
    clock = Clock()
    sentinel = sentinel_for(proc, None, clock)
    start = sentinel.mark()
    clock.now += 1.0
    proc.process(400, 1, utime=1100, name="java", cmdline="java -cp x org.apache.hadoop.MiniDFS")
    proc.process(401, 400, utime=550, name="java")
    assert sentinel.window(start, sentinel.mark())["noise_other_cpu_pct"] == 150.0


def test_a_service_daemon_reaped_by_init_is_not_noise(tmp_path):
    proc, services = machine(tmp_path)
    clock = Clock()
    sentinel = sentinel_for(proc, services, clock)
    start = sentinel.mark()
    clock.now += 1.0
    proc.end(401)
    proc.end(400)  # the service stops; init reaps its daemon and gains its 1000 ticks as cutime
    proc.process(1, 0, utime=1000, cutime=1000, io=None, name="init")
    assert sentinel.window(start, sentinel.mark())["noise_other_cpu_pct"] == 0.0


def test_no_pressure_files_no_psi(tmp_path):
    proc, services = machine(tmp_path, psi=False)
    clock = Clock()
    sentinel = sentinel_for(proc, services, clock)
    start = sentinel.mark()
    clock.now += 1.0
    values = sentinel.window(start, sentinel.mark())
    assert values["noise_psi_cpu_pct"] is values["noise_psi_io_pct"] is values["noise_psi_mem_pct"] is None
    assert values["noise_other_cpu_pct"] == 0.0 and values["noise_steal_pct"] == 0.0


def test_a_narrowed_window_keeps_its_marks_and_an_unmarked_one_has_no_figures(tmp_path):
    proc, services = machine(tmp_path)
    clock = Clock()
    sentinel = sentinel_for(proc, services, clock)
    sentinel.mark(10.0)
    clock.now += 4.0
    proc.process(200, 1, utime=300, io=1_000_000, name="stress", cmdline="stress --cpu 1")
    sentinel.mark(14.0)
    assert sentinel.window(13.0, 14.0)["noise_other_cpu_pct"] == 50.0  # the tool's last second: marks 10 and 14
    assert sentinel.window(5.0, 14.0) == dict.fromkeys(NAMES)  # no mark at or before 5
    assert sentinel.window(10.0, 15.0) == dict.fromkeys(NAMES)


def test_a_window_opening_right_after_the_last_one_starts_from_its_reading(tmp_path):
    proc, services = machine(tmp_path)
    clock = Clock()
    sentinel = sentinel_for(proc, services, clock)
    first = sentinel.read()
    clock.now += 0.1
    assert sentinel.read(reuse=0.25) is first
    clock.now += 0.2
    assert sentinel.read(reuse=0.25) is not first and sentinel.readings == 2


def test_an_idle_process_is_not_parsed_or_its_io_read_again(tmp_path):
    proc, services = machine(tmp_path)
    clock = Clock()
    sentinel = sentinel_for(proc, services, clock)
    start = sentinel.mark()
    (proc.root / "200" / "io").write_text("read_bytes: 9000000\nwrite_bytes: 0\n")  # its stat is the same
    clock.now += 1.0
    assert sentinel.window(start, sentinel.mark())["noise_other_io_mb"] == 0.0  # said with its next change
    proc.process(200, 1, utime=101, io=9_000_000, name="stress", cmdline="stress --cpu 1")
    clock.now += 1.0
    sentinel.mark()
    clock.now += 1.0
    assert sentinel.window(start, sentinel.mark())["noise_other_io_mb"] == 8.0


def test_host_telemetry_appends_the_noise_samples(tmp_path):
    from storbench.telemetry import Collector
    from storbench.telemetry.run import HostTelemetry

    proc, services = machine(tmp_path)
    clock = Clock()
    sentinel = sentinel_for(proc, services, clock)
    telemetry = HostTelemetry(Collector([], interval=1.0, proc_root=str(proc.root)), [], [], 1.0, sentinel=sentinel)

    class Window:
        pass

    window = Window()
    window.start = telemetry.mark()
    clock.now += 1.0
    proc.process(200, 1, utime=150, io=1_000_000, name="stress", cmdline="stress --cpu 1")
    window.end = telemetry.mark()
    noise = {s.metric: s for s in telemetry.samples("groupby", window, 2) if s.metric.startswith("noise_")}
    assert list(noise) == list(NAMES)
    assert noise["noise_other_cpu_pct"].value == 50.0 and noise["noise_other_cpu_pct"].unit == "%"
    assert noise["noise_other_io_mb"].unit == "MB" and noise["noise_other_cpu_pct"].labels == {}
    telemetry.stop()


EXPOSITION = """# HELP node_pressure_io_waiting_seconds_total Total time in seconds that processes have waited due to IO
# TYPE node_pressure_io_waiting_seconds_total counter
node_pressure_io_waiting_seconds_total {io}
node_pressure_cpu_waiting_seconds_total {cpu}
node_pressure_memory_waiting_seconds_total 1.5
node_pressure_io_stalled_seconds_total 99
node_memory_Dirty_bytes 5.24288e+07
node_memory_Writeback_bytes 1.048576e+06
node_cpu_seconds_total{{cpu="0",mode="idle"}} 1000
node_cpu_seconds_total{{cpu="0",mode="steal"}} {steal}
node_cpu_seconds_total{{cpu="1",mode="steal"}} {steal}
"""


def test_a_node_exporter_node_shows_steal_pressure_and_dirty_memory_not_processes():
    from storbench.telemetry.exporter import parse_exposition, snapshot_from_samples
    from storbench.telemetry.sentinel import node_window

    def snap(taken, **values):
        return snapshot_from_samples(parse_exposition(EXPOSITION.format(**values)), frozenset(), taken)

    first = snap(10.0, io=100.0, cpu=20.0, steal=5.0)
    assert first.noise == {
        "psi_cpu_us": 20_000_000,
        "psi_io_us": 100_000_000,
        "psi_memory_us": 1_500_000,
        "dirty_bytes": 52428800 + 1048576,
    }
    points = [first, snap(11.0, io=100.5, cpu=20.0, steal=5.1), snap(12.0, io=101.0, cpu=20.25, steal=5.2)]
    assert node_window(points, 10.0, 12.0) == {
        "noise_other_cpu_pct": None,
        "noise_other_io_mb": None,  # node_exporter shows no processes
        "noise_steal_pct": 20.0,  # 0.2 s on each of two CPUs over 2 s: 0.4 CPU-s, 20% of a core
        "noise_psi_cpu_pct": 12.5,
        "noise_psi_io_pct": 50.0,
        "noise_psi_mem_pct": 0.0,
        "noise_dirty_mb": 53.477,
    }
    assert node_window(points, 10.5, 11.5)["noise_psi_io_pct"] == 50.0  # the marks around a narrowed window
    assert node_window(points[:1], 10.0, 12.0) == dict.fromkeys(NAMES)


def test_a_node_exporter_without_pressure_has_none():
    from storbench.telemetry.exporter import parse_exposition, snapshot_from_samples

    samples = parse_exposition('node_cpu_seconds_total{cpu="0",mode="idle"} 1000\n')
    assert snapshot_from_samples(samples, frozenset(), 1.0).noise is None


@pytest.mark.real
def test_a_real_neighbour_burning_cpu_shows():
    """A child burning 1 CPU-second is the run's own for a sentinel whose tree holds this process, and noise for
    one whose tree holds nothing; the machine's other load is the same for both."""
    burn = [sys.executable, "-c", "import time\nwhile time.process_time() < 1.0: pass"]
    ours = NoiseSentinel()
    elsewhere = NoiseSentinel(roots=())
    starts = ours.mark(), elsewhere.mark()
    began = time.monotonic()
    subprocess.run(burn, check=True)
    seconds = time.monotonic() - began
    ends = ours.mark(), elsewhere.mark()
    seen_by_ours = ours.window(starts[0], ends[0])["noise_other_cpu_pct"]
    seen_elsewhere = elsewhere.window(starts[1], ends[1])["noise_other_cpu_pct"]
    burned_pct = 100 * 1.0 / seconds  # the child's CPU in % of a core over the window
    assert seen_elsewhere - seen_by_ours > 0.6 * burned_pct
    ours.close()
    elsewhere.close()
