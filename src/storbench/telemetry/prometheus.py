"""A node's counters from a Prometheus that already scrapes its node_exporter: no agent to deploy.

Instead of scraping, storbench asks Prometheus's HTTP API for the node's raw counters with
``query_range`` (step = the telemetry interval) over the run so far, and rebuilds the same
Snapshots the direct scrape gives; the window arithmetic is shared. A step's value is the
node's last scrape at or before that instant. A window's edges (marks) fall between scrapes: the
counters there are interpolated between the two scrapes around them, so a window counts its own
seconds, not up to an interval more at each end.
Before a window's metrics are computed it waits (a bounded time) for Prometheus to hold a
scrape past the window's end.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from bisect import bisect_left
from collections import defaultdict
from typing import Any

from storbench.telemetry.snapshot import Snapshot, interpolate
from storbench.telemetry.exporter import ExporterError, snapshot_from_samples
from storbench.telemetry.window import rate_rows

SERIES = (
    "node_disk_(reads_completed|reads_merged|read_bytes|read_time_seconds|writes_completed|writes_merged|"
    "written_bytes|write_time_seconds|io_time_seconds|io_time_weighted_seconds)_total|node_disk_io_now|"
    "node_cpu_seconds_total|node_network_(receive|transmit)_bytes_total|"
    "node_memory_Mem(Total|Available)_bytes|node_rapl_package_joules_total|node_time_seconds"
)
SCRAPED_AT = "scraped_at"  # a step's sample's scrape time (Prometheus's clock), beside the node's counters
MAX_POINTS = 10_000  # Prometheus refuses more than 11,000 points per series in one query_range


class PrometheusApi:
    def __init__(self, base_url: str, timeout: float = 15.0):
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    def get(self, path: str, **params: Any) -> Any:
        url = f"{self.base_url}{path}?{urllib.parse.urlencode(params)}"
        try:
            with urllib.request.urlopen(url, timeout=self.timeout) as response:
                body = json.load(response)
        except (OSError, ValueError) as exc:
            raise ExporterError(f"Prometheus {self.base_url}: {getattr(exc, 'reason', None) or exc}") from None
        if body.get("status") != "success":
            raise ExporterError(f"Prometheus {self.base_url}: {body.get('error', 'query failed')}")
        return body["data"]

    def latest_scrape(self, instance: str) -> float | None:
        """Wall time of the instance's newest sample, None if Prometheus has none."""
        data = self.get("/api/v1/query", query=f'timestamp(up{{instance="{instance}"}})')
        values = [float(item["value"][1]) for item in data.get("result", [])]
        return max(values) if values else None

    def counters(self, instance: str, start: float, end: float, step: float) -> dict[float, dict[str, list]]:
        """Per step time: the node's counters, in the shape exporter.parse_exposition returns."""
        by_time: dict[float, dict[str, list]] = defaultdict(lambda: defaultdict(list))
        chunk = step * MAX_POINTS
        t = start
        while t <= end:
            data = self.get(
                "/api/v1/query_range",
                query=f'{{__name__=~"{SERIES}",instance="{instance}"}}',
                start=f"{t:.3f}",
                end=f"{min(end, t + chunk):.3f}",
                step=f"{step:g}",
            )
            for series in data.get("result", []):
                labels = dict(series["metric"])
                name = labels.pop("__name__")
                for stamp, value in series["values"]:
                    by_time[float(stamp)][name].append((labels, float(value)))
            scraped = self.get(
                "/api/v1/query_range",
                query=f'timestamp(node_time_seconds{{instance="{instance}"}})',
                start=f"{t:.3f}",
                end=f"{min(end, t + chunk):.3f}",
                step=f"{step:g}",
            )
            for series in scraped.get("result", []):
                for stamp, value in series["values"]:
                    by_time[float(stamp)][SCRAPED_AT].append(({}, float(value)))
            t += chunk + step
        return by_time


class PrometheusCollector:
    """The Collector interface (start/stop/mark/points/rates/gaps) over a Prometheus query."""

    def __init__(
        self, api: PrometheusApi, instance: str, devices: list[str], interval: float = 1.0, wait_s: float | None = None
    ):
        self.api, self.instance, self.devices, self.interval = api, instance, list(devices), interval
        self._wait_s = wait_s if wait_s is not None else max(10.0, 5 * interval)
        self._wall_minus_mono = time.time() - time.monotonic()
        self._start: float | None = None
        self._end: float | None = None
        self._points: list[Snapshot] = []  # the scrapes
        self._marks: list[float] = []
        self._fetched_to = 0.0
        self._gaps: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._cpu_seconds = 0.0
        self._node_to_wall: float | None = None  # Prometheus's clock minus the node's (node_time_seconds)

    @property
    def cpu_seconds(self) -> float:
        return self._cpu_seconds

    def start(self) -> None:
        self._start = time.monotonic()

    def stop(self) -> None:
        self._end = time.monotonic()

    def mark(self) -> float:
        now = time.monotonic()
        with self._lock:
            self._marks.append(now)
        return now

    def gaps(self) -> list[dict[str, Any]]:
        return list(self._gaps)

    def points(self) -> list[Snapshot]:
        """Snapshots from the start to now (or stop), fetched once per call for what is new."""
        used = time.thread_time()
        with self._lock:
            try:
                self._refresh()
            except ExporterError as exc:
                self._record_gap(str(exc))
            points = self._with_marks()
            self._cpu_seconds += time.thread_time() - used
            return points

    def _with_marks(self) -> list[Snapshot]:
        """The scrapes, and a snapshot at each mark between two of them (interpolated), in time order."""
        scrapes = self._points
        times = [p.time for p in scrapes]
        marks = []
        for when in self._marks:
            after = bisect_left(times, when)
            if 0 < after < len(scrapes) and times[after] != when:
                marks.append(interpolate(scrapes[after - 1], scrapes[after], when))
        return sorted([*scrapes, *marks], key=lambda p: p.time)

    def rates(self) -> list[dict[str, Any]]:
        return rate_rows(self.points(), self.interval)

    def _refresh(self) -> None:
        if self._start is None:
            return
        until = self._end if self._end is not None else time.monotonic()
        wall_until = until + self._wall_minus_mono
        deadline = time.monotonic() + self._wait_s
        while (latest := self.api.latest_scrape(self.instance)) is None or latest < wall_until:
            if time.monotonic() > deadline:
                if latest is None:
                    raise ExporterError(f"Prometheus {self.api.base_url} has no samples of {self.instance}")
                break  # use what Prometheus holds; the window widens to it
            time.sleep(min(0.25, self.interval / 4))
        begin = self._fetched_to + self.interval if self._fetched_to else self._first_step(latest)
        # to two steps past the end: the step on the first scrape after it (an end mark is interpolated up to it)
        by_time = self.api.counters(self.instance, begin, wall_until + 2 * self.interval, self.interval)
        wanted = frozenset(self.devices)
        for stamp in sorted(by_time):
            # a step on the newest scrape is taken (the first scrape after a window's end mark is the newest one
            # when the wait above ends; left out, the end fell back to the scrape before it: 10% short of 10 s);
            # a later step only repeats it
            if stamp > (latest or wall_until) + self.interval:
                break
            when = self._collected_at(by_time[stamp], stamp)
            if not self._points or when > self._points[-1].time:  # two steps on one scrape: one point
                self._points.append(snapshot_from_samples(by_time[stamp], wanted, when))
            self._fetched_to = stamp

    def _collected_at(self, samples: dict[str, list], step: float) -> float:
        """When the node read the counters of ``step``'s sample, on this machine's monotonic clock: by the node's
        own clock (node_time_seconds), offset once to Prometheus's scrape time. A step's time alone is up to an
        interval after the scrape, and a scrape's start is not when the node collected: on a loaded machine
        that moved a 1 s rate by 5-10%. The offset is taken again when the node's clock steps (over 1 s)."""
        node, scraped = samples.get("node_time_seconds"), samples.get(SCRAPED_AT)
        if not node or not scraped:
            return step - self._wall_minus_mono  # an exporter without the time collector
        node_time, scraped_at = node[0][1], scraped[0][1]
        if self._node_to_wall is None or abs(node_time + self._node_to_wall - scraped_at) > 1.0:
            self._node_to_wall = scraped_at - node_time
        return node_time + self._node_to_wall - self._wall_minus_mono

    def _first_step(self, latest: float | None) -> float:
        """The first step time: half an interval after a scrape, so jitter never puts two steps on one scrape."""
        first = self._start + self._wall_minus_mono - self.interval  # one step before: the start is covered
        if latest is None:
            return first
        phase = (latest + self.interval / 2) % self.interval
        return first - (first % self.interval) + phase

    def _record_gap(self, error: str) -> None:
        now = time.monotonic()
        self._gaps.append({"from": self._points[-1].time if self._points else now, "to": now, "error": error})
