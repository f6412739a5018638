"""``--metrics-port``: a run's live progress and each recorded window's figures in Prometheus's text format,
served while the run lasts (prometheus-client, on a registry of its own: no process or platform metrics).

What a scrape reads (the loop updates :class:`LiveRun`; the server's thread reads it under one lock)::

    storbench_run_info{run_id,suite,label,workload} 1   workload: the one running, or the last one run
    storbench_progress_ratio                            the run's counted steps done / planned (0 to 1)
    storbench_steps_done, storbench_steps_planned
    storbench_repetition, storbench_repetitions         the running repetition (0: a prepare step), the run's
    storbench_elapsed_seconds                           since the run started
    storbench_eta_seconds                               absent while unknown
    storbench_windows_total                             windows recorded so far
    storbench_window_value{workload,metric,unit,labels} each figure of the workload's last recorded window
                                                        (labels: the sample's own as k=v,...; n/a is absent)
    storbench_telemetry_value{metric,unit,node}         the telemetry's last sampling interval (--interval):
                                                        device MB/s and utilisation, CPU, network, power;
                                                        live inside a long window (node "": this machine)

Only these figures leave the process: no target URI, endpoint, setting or command line, and label values
pass through redaction (a secret-looking key's value masked, a URL's user:password@ dropped). The default
address is loopback; the endpoint is read-only, yet any user of the machine can read it, as they can read
``ps``. The server binds before the run does any work (a port in use is one line) and stops when the run
ends, Ctrl-C and SIGTERM included.
"""

from __future__ import annotations

import errno
import ipaddress
import threading
import time
from contextlib import contextmanager
from importlib.resources import files
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from storbench.errors import InputError
from storbench.progress import Progress
from storbench.redaction import redact_settings, redact_url
from storbench.results.model import Sample

DEFAULT_ADDRESS = "127.0.0.1"
PREFIX = "storbench_"
RATE_UNITS = {"mbps": "MB/s", "pct": "%", "w": "W"}  # by the suffix of the telemetry series' column names
Latest = Callable[[], dict[str, dict[str, float | None]]]  # node label -> the last interval's rates


class LiveRun:
    """What the run has done so far, as a scrape shows it."""

    def __init__(self, progress: Progress | None = None):
        self.progress = progress  # its counted steps give the ratio and the ETA
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self._info: dict[str, str] = {}
        self._repetition: int | None = None
        self._repetitions: int | None = None
        self._windows = 0
        self._figures: dict[tuple[str, str, str, str], float] = {}  # (workload, metric, unit, labels) -> value
        self._latest: Latest | None = None

    def watch(self, latest: Latest) -> None:
        """The run's telemetry, read at each scrape (RunTelemetry.latest)."""
        self._latest = latest

    def planned(self, run_id: str, suite: str, label: str, repetitions: int) -> None:
        with self._lock:
            self._info = {"run_id": run_id, "suite": suite, "label": label, "workload": ""}
            self._repetitions = repetitions

    def begin(self, workload: str, repetition: int) -> None:
        """A recorded repetition (0: a prepare step) of ``workload`` starts."""
        with self._lock:
            self._info = {**self._info, "workload": workload}
            self._repetition = repetition

    def window(self, workload: str, samples: Iterable[Sample]) -> None:
        """The figures of ``workload``'s window just recorded replace those of its previous one."""
        figures = {
            (s.workload, s.metric, s.unit, _labels(s.labels)): float(s.value) for s in samples if s.value is not None
        }
        replaced = {workload} | {key[0] for key in figures}
        with self._lock:
            self._figures = {k: v for k, v in self._figures.items() if k[0] not in replaced}
            self._figures.update(figures)
            self._windows += 1

    def families(self) -> list[Any]:
        """The metric families of one scrape."""
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        with self._lock:
            info, repetition, repetitions = dict(self._info), self._repetition, self._repetitions
            windows, figures = self._windows, dict(self._figures)
        plan = self.progress.steps if self.progress is not None else None
        now = time.monotonic()

        def gauge(name: str, text: str, value: float | None) -> list[Any]:
            return [] if value is None else [GaugeMetricFamily(PREFIX + name, text, value=value)]

        found: list[Any] = []
        if info:
            run_info = GaugeMetricFamily(
                PREFIX + "run_info",
                "the run: its id, suite, label and the workload running or last run",
                labels=list(info),
            )
            run_info.add_metric(list(info.values()), 1)
            found.append(run_info)
        found += gauge(
            "progress_ratio",
            "counted steps done / planned",
            plan.done / plan.total if plan is not None and plan.total else None,
        )
        found += gauge("steps_done", "counted steps done", plan.done if plan is not None else None)
        found += gauge("steps_planned", "counted steps planned", plan.total if plan is not None else None)
        found += gauge("repetition", "the running repetition (0: a prepare step)", repetition)
        found += gauge("repetitions", "repetitions per workload and sweep point", repetitions)
        found += gauge("elapsed_seconds", "seconds since the run started", now - self.started)
        found += gauge("eta_seconds", "seconds left, estimated", plan.eta(now) if plan is not None else None)
        found.append(CounterMetricFamily(PREFIX + "windows", "timed windows recorded", value=windows))
        values = GaugeMetricFamily(
            PREFIX + "window_value",
            "each figure of the workload's last recorded window",
            labels=["workload", "metric", "unit", "labels"],
        )
        for key, value in sorted(figures.items()):
            values.add_metric(list(key), value)
        found.append(values)
        rates = GaugeMetricFamily(
            PREFIX + "telemetry_value", "the telemetry's last sampling interval", labels=["metric", "unit", "node"]
        )
        for node, row in sorted(self._rates().items()):
            for metric, value in sorted(row.items()):
                unit = RATE_UNITS.get(metric.rsplit("_", 1)[-1])
                if value is not None and unit is not None:
                    rates.add_metric([metric, unit, node], value)
        found.append(rates)
        return found

    def _rates(self) -> dict[str, dict[str, float | None]]:
        if self._latest is None:
            return {}
        try:
            return self._latest()
        except Exception:  # a scrape must not fail on a telemetry reading; the run records its own gaps
            return {}


def _labels(labels: dict[str, str]) -> str:
    """A sample's own labels (node, interface, a sweep point's setting...) as one label value, redacted."""
    shown = redact_settings({key: redact_url(str(value)) for key, value in labels.items()})
    return ",".join(f"{key}={value}" for key, value in sorted(shown.items()))


class _Scrape:
    def __init__(self, live: LiveRun):
        self.live = live

    def collect(self) -> list[Any]:
        return self.live.families()


def registry(live: LiveRun) -> Any:
    from prometheus_client import CollectorRegistry

    found = CollectorRegistry(auto_describe=False)
    found.register(_Scrape(live))  # type: ignore[arg-type]
    return found


def exposition(live: LiveRun) -> str:
    """One scrape's text (what the endpoint serves)."""
    from prometheus_client import generate_latest

    return generate_latest(registry(live)).decode()


def check_endpoint(port: int | None, address: str | None) -> tuple[str, int] | None:
    """(address, port) to serve on, None without --metrics-port; bad input is one line."""
    if port is None:
        if address is not None:
            raise InputError(f"--metrics-address {address}: serves nothing without --metrics-port PORT")
        return None
    if not 1 <= port <= 65535:
        raise InputError(f"--metrics-port {port}: must be between 1 and 65535")
    address = address if address is not None else DEFAULT_ADDRESS
    try:
        ipaddress.ip_address(address)
    except ValueError:
        raise InputError(f"--metrics-address {address!r}: not an IP address (e.g. 127.0.0.1, ::1, 0.0.0.0)") from None
    return address, port


@contextmanager
def serve(live: LiveRun, port: int | None, address: str | None, progress: Progress) -> Iterator[None]:
    """Serves ``live`` on --metrics-port for the time of the block (nothing without the option)."""
    endpoint = check_endpoint(port, address)
    if endpoint is None:
        yield
        return
    from prometheus_client import start_http_server

    host, number = endpoint
    try:
        server, thread = start_http_server(number, host, registry=registry(live))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise InputError(
                f"--metrics-port {number}: {host}:{number} is already in use; choose a free port"
            ) from None
        raise InputError(f"--metrics-address {host}: cannot serve on {host}:{number} ({exc.strerror or exc})") from None
    shown = f"[{host}]" if ":" in host else host
    elsewhere = "" if ipaddress.ip_address(host).is_loopback else " (reachable from other hosts)"
    progress.info(f"metrics: http://{shown}:{number}/metrics, the run's progress in Prometheus's format{elsewhere}")
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def grafana_dashboard() -> Path:
    """The Grafana dashboard shipped with the package, over the metrics above."""
    return Path(str(files("storbench") / "grafana" / "storbench.json"))
