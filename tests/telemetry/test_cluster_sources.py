"""Issue 13: telemetry from other nodes through real node_exporters and a real Prometheus.

The direct scrape must give what /proc gives (same counters, iostat's formulas), Prometheus what the
direct scrape gives, a node whose exporter stops leaves a recorded gap and nothing else lost, and bad
nodes are one line before anything is written.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from storbench.telemetry import procfs
from storbench.telemetry.collector import Collector, read_snapshot
from storbench.telemetry.exporter import ExporterReader, default_devices, disk_names
from storbench.telemetry.prometheus import PrometheusApi, PrometheusCollector
from storbench.telemetry.window import window_metrics
from tests.cli.helpers import storbench
from tests.loopdev import loop_device
from tests.telemetry.exporters import needs_exporter, needs_prometheus, private_dir, start_exporter, start_prometheus

pytestmark = [pytest.mark.real, needs_exporter]  # real node_exporters and Prometheus
FIO = shutil.which("fio")


@pytest.fixture(scope="module")
def exporter():
    server = start_exporter("127.0.0.31")
    yield server
    server.stop()


def _root_disk() -> str:
    from storbench.telemetry.devices import devices_for_path

    return devices_for_path(tempfile.gettempdir()).devices[0]


@pytest.fixture
def quiet_disk(tmp_path):
    """A loop device only this test writes to: other work on the machine's disks cannot blur the comparison."""
    with loop_device(tmp_path / "disk.img", 400) as device:
        yield device


def _steady_write(device: str, seconds: int) -> subprocess.Popen:
    """fio writing steadily (rate-limited, direct) so two readers of the same device see the same MB/s."""
    return subprocess.Popen(
        [
            FIO,
            "--name=steady",
            f"--filename={device}",
            "--rw=write",
            "--bs=1m",
            "--size=256m",
            "--direct=1",
            "--rate=40m",
            "--time_based",
            f"--runtime={seconds}",
            "--output-format=json",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def test_the_exporter_snapshot_holds_the_same_counters_as_proc(exporter):
    reader = ExporterReader(exporter.url)
    disk = _root_disk()
    remote = reader.read(frozenset([disk]))
    local = read_snapshot(frozenset([disk]), procfs.CounterFiles("/proc"))
    a, b = remote.disks[disk], local.disks[disk]
    # read microseconds apart on a machine doing other work: equal, or a few I/Os apart
    assert abs(a.writes - b.writes) < 200 and abs(a.write_sectors - b.write_sectors) < 200_000
    assert abs(a.io_ticks - b.io_ticks) < 1000 and abs(a.read_ms - b.read_ms) < 1000
    assert remote.memory[0] == local.memory[0]
    assert abs(remote.cpu.total - local.cpu.total) < 500
    assert disk in default_devices(disk_names(reader.samples()))
    assert not any(name.startswith("loop") for name in default_devices(disk_names(reader.samples())))


@pytest.mark.skipif(FIO is None, reason="fio is not installed")
def test_direct_scrape_agrees_with_proc_on_a_steady_write(exporter, quiet_disk):
    disk = quiet_disk.removeprefix("/dev/")
    local = Collector([disk], interval=0.5)
    remote = Collector([disk], interval=0.5, reader=ExporterReader(exporter.url).read)
    local.start(), remote.start()
    fio = _steady_write(quiet_disk, 5)
    start_local, start_remote = local.mark(), remote.mark()
    fio.wait(60)
    end_local, end_remote = local.mark(), remote.mark()
    local.stop(), remote.stop()
    by_proc = window_metrics(local.points(), start_local, end_local, 0.5)
    by_exporter = window_metrics(remote.points(), start_remote, end_remote, 0.5)
    assert by_proc["written_mb"] > 100
    assert by_exporter["written_mb"] == pytest.approx(by_proc["written_mb"], rel=0.02)
    assert by_exporter["avg_write_latency_ms"] == pytest.approx(by_proc["avg_write_latency_ms"], rel=0.05)


@needs_prometheus
@pytest.mark.skipif(FIO is None, reason="fio is not installed")
def test_prometheus_gives_what_the_direct_scrape_gives(exporter, quiet_disk):
    """The same metrics through a real Prometheus scraping the exporter, within 2% on a steady fio write."""
    workdir = private_dir()
    prometheus = start_prometheus([f"{exporter.address}:{exporter.port}"], workdir)
    try:
        api = PrometheusApi(prometheus.url)
        instance = f"{exporter.address}:{exporter.port}"
        deadline = time.monotonic() + 30
        while api.latest_scrape(instance) is None and time.monotonic() < deadline:
            time.sleep(0.5)
        disk = quiet_disk.removeprefix("/dev/")
        direct = Collector([disk], interval=1.0, reader=ExporterReader(exporter.url).read)
        queried = PrometheusCollector(api, instance, [disk], interval=1.0)
        direct.start(), queried.start()
        time.sleep(2)
        fio = _steady_write(quiet_disk, 8)
        time.sleep(2)  # measure the steady middle: both sources see the same seconds
        start, prometheus_start = direct.mark(), queried.mark()
        time.sleep(4)
        end, prometheus_end = direct.mark(), queried.mark()
        fio.wait(60)
        direct.stop(), queried.stop()
        by_scrape = window_metrics(direct.points(), start, end, 1.0)
        by_prometheus = window_metrics(queried.points(), prometheus_start, prometheus_end, 1.0)
        assert by_scrape["written_mb"] / (end - start) > 20  # the steady write was under way
        # Each source's mean write rate over its own window: the direct scrape's edges are scrapes at the marks,
        # Prometheus's fall between its scrapes and are interpolated there, so both count the window's own
        # seconds (widened to the scrapes outside, its written_mb was up to two intervals more: issue 40)
        assert by_prometheus["written_mb"] / (prometheus_end - prometheus_start) == pytest.approx(
            by_scrape["written_mb"] / (end - start), rel=0.02
        )
        assert by_prometheus["max_write_mbps"] == pytest.approx(by_scrape["max_write_mbps"], rel=0.10)
        # Prometheus's steps are whole seconds on its own scrape grid: compare the rates, not the edges
        spans = [p.time for p in queried.points() if start - 1 <= p.time <= end + 1]
        assert len(spans) >= 4 and queried.gaps() == []
    finally:
        prometheus.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def _run(home: Path, target: Path, *nodes: str, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    args = [arg for spec in nodes for arg in ("--node", spec)]
    return storbench(
        home,
        "run",
        "fio-002",
        "--scale",
        "tiny",
        "--target",
        str(target),
        "--interval",
        "0.5",
        "--set",
        "runtime_s=4",
        "--set",
        "size=16m",
        *args,
        *extra,
        timeout=300,
    )


@pytest.mark.skipif(FIO is None, reason="fio is not installed")
def test_a_node_whose_exporter_stops_mid_run_leaves_a_gap_and_nothing_else_lost(exporter, tmp_path):
    doomed = start_exporter("127.0.0.32")
    home, target = tmp_path / "home", tmp_path / "target"
    target.mkdir()
    disk = _root_disk()
    under_way = threading.Event()  # set when the test is over, to stop the killer

    def kill_once_its_series_has_rows() -> None:  # not by the clock: a loaded machine starts the CLI slowly
        while not under_way.wait(0.2):
            series = list(home.glob("runs/*/telemetry-worker-2.csv"))
            if series and len(series[0].read_text().splitlines()) > 2:
                doomed.proc.kill()
                return

    killer = threading.Thread(target=kill_once_its_series_has_rows, daemon=True)
    killer.start()
    try:
        done = _run(
            home,
            target,
            f"steady={exporter.url},devices={disk},role=worker",
            f"doomed={doomed.url},devices={disk},role=worker",
        )
    finally:
        under_way.set()
        killer.join(5)
        doomed.stop()
    assert done.returncode == 0, done.stderr
    run_dir = next(home.glob("runs/*"))
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "succeeded"
    gaps = manifest["telemetry_gaps"]
    assert gaps and {gap["node"] for gap in gaps} == {"worker-2"}
    # a gap may be a single failed scrape (from_s == to_s) when the exporter dies just before the window ends
    assert gaps[0]["to_s"] >= gaps[0]["from_s"] and "127.0.0.32" in gaps[0]["error"]
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    steady = [s for s in samples if s["labels"].get("node") == "worker-1" and s["metric"] == "written_mb"]
    assert {s["workload"] for s in steady} == {"fio-write", "fio-read"}
    assert steady[0]["value"] > 10  # the live node's write was measured in full
    assert (run_dir / "telemetry-worker-1.csv").stat().st_size > (run_dir / "telemetry-worker-2.csv").stat().st_size


@pytest.mark.parametrize(
    "nodes_yaml,message",
    [
        (
            "nodes:\n  - name: a\n    exporter: {url}\n    colour: red\n",
            "{file}: nodes[0].colour: unknown key; allowed:",
        ),
        (
            "nodes:\n  - name: a\n    exporter: {url}\n  - name: a\n    exporter: {url}\n",
            "{file}: nodes[1].name: duplicate node 'a' (also nodes[0])",
        ),
        (
            "nodes:\n  - name: a\n    exporter: {url}\n    devices: [nosuchdisk9]\n",
            "{file}: nodes[0].devices: node a has no device 'nosuchdisk9' (its exporter lists:",
        ),
        (
            "nodes:\n  - name: a\n    exporter: http://127.0.0.33:9/metrics\n",
            "{file}: nodes[0].exporter: cannot read node a's telemetry: http://127.0.0.33:9/metrics:",
        ),
        (
            "nodes:\n  - name: a\n    exporter: ftp://x/metrics\n",
            "{file}: nodes[0].exporter: 'ftp://x/metrics' is not an",
        ),
        ("nodes:\n  - name: a\n    role: janitor\n", "{file}: nodes[0].role: unknown role 'janitor'; allowed:"),
        ("nodes: []\n", "{file}: nodes: expected a non-empty list of nodes"),
    ],
)
def test_bad_nodes_are_one_line_naming_the_file_and_key_before_anything_is_written(
    exporter, tmp_path, nodes_yaml, message
):
    home, target = tmp_path / "home", tmp_path / "target"
    target.mkdir()
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(nodes_yaml.format(url=exporter.url))
    done = storbench(
        home, "run", "fio-002", "--scale", "tiny", "--target", str(target), "--nodes", str(nodes), timeout=120
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message.format(file=nodes) in lines[0], done.stderr
    assert not list(home.glob("runs/*")) and os.listdir(target) == []


def test_an_unreachable_node_on_the_command_line_is_one_line(tmp_path):
    home = tmp_path / "home"
    done = storbench(
        home,
        "run",
        "fio-002",
        "--scale",
        "tiny",
        "--target",
        str(tmp_path),
        "--node",
        "far=http://127.0.0.34:9/metrics",
        timeout=120,
    )
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "--node: nodes[0].exporter: cannot read node far's telemetry" in done.stderr
    assert not list(home.glob("runs/*"))
