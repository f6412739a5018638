"""A Prometheus source's window edges (issue 40): a mark falls between two scrapes, and the window counts its own
seconds, the counters interpolated there, not the scrapes outside it (which added up to two intervals)."""

import time

import pytest

from storbench.telemetry import Snapshot, window_metrics
from storbench.telemetry.procfs import CpuCounters, DiskCounters, NetCounters
from storbench.telemetry.prometheus import SCRAPED_AT, PrometheusCollector
from storbench.telemetry.snapshot import interpolate

WRITE_BPS = 10e6
SCRAPE_S = 0.1


class StepsOfSteadyScrapes:
    """Prometheus's query_range over a node scraped every SCRAPE_S s while it writes WRITE_BPS: a step's value is
    the last scrape at or before it, stamped with the node's clock (here the same as Prometheus's)."""

    def __init__(self, first: float, count: int):
        self.scrapes = [first + k * SCRAPE_S for k in range(count)]
        self.base_url = "http://prometheus.invalid"

    def latest_scrape(self, instance: str) -> float:
        return max(s for s in self.scrapes if s <= time.time())

    def counters(self, instance: str, start: float, end: float, step: float) -> dict[float, dict[str, list]]:
        by_time = {}
        at = start
        while at <= end:
            done = [s for s in self.scrapes if s <= min(at, time.time())]  # what it holds by now
            if done:
                by_time[at] = self._sample(done[-1])
            at += step
        return by_time

    def _sample(self, scraped: float) -> dict[str, list]:
        written = WRITE_BPS * (scraped - self.scrapes[0])
        disk = {"device": "sda"}
        return {
            "node_disk_reads_completed_total": [(disk, 0.0)],
            "node_disk_written_bytes_total": [(disk, written)],
            "node_disk_writes_completed_total": [(disk, written / 4096)],
            "node_time_seconds": [({}, scraped)],
            SCRAPED_AT: [({}, scraped)],
        }


def test_a_window_between_scrapes_counts_its_own_seconds():
    api = StepsOfSteadyScrapes(time.time() - 1.0 + SCRAPE_S / 3, count=40)  # scrapes until 3 s from now
    source = PrometheusCollector(api, "node:9100", ["sda"], interval=SCRAPE_S, wait_s=2)
    source.start()
    start = source.mark()
    time.sleep(0.35)
    end = source.mark()
    source.stop()
    points = source.points()
    scrapes = [p.time for p in points if p.time not in (start, end)]
    assert any(a < start < b for a, b in zip(scrapes, scrapes[1:]))  # the marks fell between scrapes
    assert start in [p.time for p in points] and end in [p.time for p in points]
    metrics = window_metrics(points, start, end, SCRAPE_S)
    assert metrics["written_mb"] == pytest.approx(WRITE_BPS / 1e6 * (end - start), rel=0.01)


def test_interpolation_moves_each_counter_evenly_and_keeps_what_only_one_side_has():
    disk = DiskCounters(10, 0, 100, 5, 20, 0, 200, 8, 1, 50, 60, discards=None)
    later = DiskCounters(30, 0, 300, 15, 60, 0, 600, 24, 3, 150, 180, discards=None)
    a = Snapshot(10.0, {"sda": disk, "sdb": disk}, CpuCounters(*[100] * 8), {"eth0": NetCounters(0, 1000)}, (8, 4), 0)
    b = Snapshot(12.0, {"sda": later}, CpuCounters(*[300] * 8), {"eth0": NetCounters(400, 3000)}, (8, 2), 2_000_000)
    middle = interpolate(a, b, 11.5)
    assert middle.time == 11.5
    assert set(middle.disks) == {"sda"}  # sdb is not in the later scrape
    assert middle.disks["sda"].write_sectors == 500 and middle.disks["sda"].discards is None
    assert middle.cpu == CpuCounters(*[250] * 8)
    assert middle.net == {"eth0": NetCounters(300, 2500)}
    assert middle.energy_uj == 1_500_000 and middle.memory == (8, 2)
