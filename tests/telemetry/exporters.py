"""Real node_exporters and a real Prometheus for the telemetry source tests, on loopback, free ports."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from storbench.services.ports import free_port

EXPORTER = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
PROMETHEUS = shutil.which("prometheus")
needs_exporter = pytest.mark.skipif(
    EXPORTER is None, reason="Debian's prometheus-node-exporter is not installed (scripts/setup.sh --test installs it)"
)
needs_prometheus = pytest.mark.skipif(
    PROMETHEUS is None or EXPORTER is None, reason="Debian's prometheus is not installed (scripts/setup.sh --test)"
)


def _wait_http(url: str, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: the server exited ({proc.returncode})")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url}: no answer within {timeout} s")


@dataclass
class Server:
    proc: subprocess.Popen
    url: str
    address: str
    port: int

    def stop(self) -> None:
        stop_process(self.proc)


def stop_process(proc: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL after 10 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def start_exporter(address: str) -> Server:
    port = free_port(address)
    proc = subprocess.Popen(
        [EXPORTER, f"--web.listen-address={address}:{port}", r"--collector.diskstats.device-exclude=^(ram|fd)\d+$"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    server = Server(proc, f"http://{address}:{port}/metrics", address, port)
    try:
        _wait_http(server.url, proc, 20)
    except RuntimeError:
        server.stop()
        raise
    return server


def start_prometheus(targets: list[str], workdir: Path) -> Server:
    """A Prometheus scraping ``targets`` (host:port) every second, its data in ``workdir``."""
    port = free_port("127.0.0.1")
    config = workdir / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n"
        "  - job_name: node\n    static_configs:\n      - targets: [" + ", ".join(f"'{t}'" for t in targets) + "]\n"
    )
    proc = subprocess.Popen(
        [
            PROMETHEUS,
            f"--config.file={config}",
            f"--storage.tsdb.path={workdir / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=(workdir / "prometheus.log").open("w"),
    )
    server = Server(proc, f"http://127.0.0.1:{port}", "127.0.0.1", port)
    try:
        _wait_http(f"{server.url}/-/ready", proc, 60)
    except RuntimeError:
        server.stop()
        raise
    return server


def private_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="storbench-test-prom-"))
