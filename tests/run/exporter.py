"""An in-process node_exporter for the run core's cluster paths: a thread serving, on 127.0.0.1, the
Prometheus text of the counters storbench reads (telemetry/exporter.py), rising with time.

Each node is a path of its own (``url("n1")``: ``http://127.0.0.1:PORT/n1/metrics``) with one disk, ``sda``,
moving ``mbps`` MB/s each way; ``/api/v1/query`` answers as a Prometheus holding no series. The real
node_exporter's tests are in tests/telemetry; this one only lets the run core measure "nodes" in process.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CPUS = 2
DISK_FIELDS = {  # per second of the node's clock, at 1 MB/s (scaled by each node's mbps)
    "node_disk_reads_completed_total": 10,
    "node_disk_reads_merged_total": 1,
    "node_disk_read_bytes_total": 1e6,
    "node_disk_read_time_seconds_total": 0.02,
    "node_disk_writes_completed_total": 10,
    "node_disk_writes_merged_total": 1,
    "node_disk_written_bytes_total": 1e6,
    "node_disk_write_time_seconds_total": 0.03,
    "node_disk_io_time_seconds_total": 0.05,
    "node_disk_io_time_weighted_seconds_total": 0.05,
}
CPU_SHARE = {"user": 0.3, "system": 0.1, "idle": 0.6}  # of each CPU's seconds
PRESSURE = {"cpu": 0.1, "io": 0.2, "memory": 0.0}  # seconds some task stalled, per second


class NodeExporter:
    def __init__(self) -> None:
        self.nodes: dict[str, float] = {}  # path name → MB/s its disk moves each way
        self.scrapes: dict[str, int] = {}
        self.started = time.monotonic()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                path = self.path.split("?", 1)[0]
                name = path.removesuffix("/metrics").strip("/")
                if path == "/api/v1/query":
                    self._send(json.dumps({"status": "success", "data": {"resultType": "vector", "result": []}}))
                elif path.endswith("/metrics") and name in owner.nodes:
                    owner.scrapes[name] = owner.scrapes.get(name, 0) + 1
                    self._send(owner.exposition(name))
                else:
                    self.send_error(404)

            def _send(self, text: str) -> None:
                body = text.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, name="test-node-exporter", daemon=True
        )

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def add(self, name: str, mbps: float = 1.0) -> str:
        """A node served at its own path; returns its exporter URL."""
        self.nodes[name] = mbps
        return self.url(name)

    def url(self, name: str) -> str:
        return f"{self.base}/{name}/metrics"

    def exposition(self, name: str) -> str:
        t, scale = time.monotonic() - self.started + 1.0, self.nodes[name]
        lines = [f'{metric}{{device="sda"}} {per_s * scale * t:.6f}' for metric, per_s in DISK_FIELDS.items()]
        lines.append('node_disk_io_now{device="sda"} 1')
        lines += [
            f'node_cpu_seconds_total{{cpu="{cpu}",mode="{mode}"}} {share * t:.6f}'
            for cpu in range(CPUS)
            for mode, share in CPU_SHARE.items()
        ]
        lines += [f'node_network_{way}_bytes_total{{device="eth0"}} {1e5 * t:.1f}' for way in ("receive", "transmit")]
        lines += [f"node_pressure_{kind}_waiting_seconds_total {share * t:.6f}" for kind, share in PRESSURE.items()]
        lines += ["node_memory_Dirty_bytes 5000000", "node_memory_Writeback_bytes 1000000"]
        lines += [
            "node_memory_MemTotal_bytes 8589934592",
            "node_memory_MemAvailable_bytes 4294967296",
            f'node_uname_info{{machine="x86_64",nodename="{name}.test",release="6.1.0-test",sysname="Linux"}} 1',
        ]
        return "\n".join(lines) + "\n"

    def start(self) -> "NodeExporter":
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()
