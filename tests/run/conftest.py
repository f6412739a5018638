"""The run core's fixtures: no subprocess starts here; the null engine's events and the mem:// volumes start
empty; telemetry's stop and series write are recorded among the events (tests/run/null_run.py runs the suite)."""

from __future__ import annotations

import platform
import signal

import pytest

from storbench import interrupts
from storbench.engines import null
from storbench.targets import mem
from storbench.telemetry.run import HostTelemetry
from tests import proc_guard
from tests.run.exporter import NodeExporter


@pytest.fixture(autouse=True)
def no_subprocess():
    """The fast lane's promise: nothing here starts a process. (The standard library's ``uname -p``, which
    platform.platform() in the machine's fingerprint runs once per interpreter and caches, runs first.)"""
    platform.platform()
    with proc_guard.refusing(lambda program: f"a run-core test started a process: {program}"):
        yield


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    """Empty volumes and events; telemetry's stop and series write recorded beside the plugins' calls."""
    null.EVENTS.clear()
    mem.VOLUMES.clear()
    stop, series = HostTelemetry.stop, HostTelemetry.write_series

    def recorded_stop(self):
        null.record("telemetry stop")
        stop(self)

    def recorded_series(self, writer, windows):
        null.record("telemetry series")
        series(self, writer, windows)

    monkeypatch.setattr(HostTelemetry, "stop", recorded_stop)
    monkeypatch.setattr(HostTelemetry, "write_series", recorded_series)
    yield
    mem.VOLUMES.clear()


@pytest.fixture
def exporter():
    """An in-process node_exporter (tests/run/exporter.py): add nodes, read their URLs."""
    server = NodeExporter().start()
    yield server
    server.stop()


@pytest.fixture
def handlers():
    """storbench's signal handlers, as the CLI installs them, and the test runner's restored after."""
    saved = {sig: signal.getsignal(sig) for sig in interrupts.SIGNALS}
    interrupts.install()
    try:
        yield
    finally:
        interrupts.exiting()
        for sig, handler in saved.items():
            signal.signal(sig, handler)
