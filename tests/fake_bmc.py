"""A tiny Redfish BMC over plain HTTP, in a thread of the test process: routes of JSON documents or redirects,
every request's path and Authorization header recorded. For what sushy-static cannot do (redirect, link to
another host) and the secrets canary tests; a BMC is not a storage service, so a stand-in is fine here."""

from __future__ import annotations

import base64
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def chassis_routes(watts: float = 250.0, power_link: str = "/redfish/v1/Chassis/1/Power") -> dict[str, Any]:
    return {
        "/redfish/v1/Chassis": {"Members": [{"@odata.id": "/redfish/v1/Chassis/1"}]},
        "/redfish/v1/Chassis/1": {"Power": {"@odata.id": power_link}},
        "/redfish/v1/Chassis/1/Power": {"PowerControl": [{"PowerConsumedWatts": watts}]},
    }


@dataclass
class FakeBmc:
    host: str = "127.0.0.1"
    routes: dict[str, Any] = field(default_factory=chassis_routes)  # path -> JSON, or ("redirect", URL)
    auth: str | None = None  # the Authorization a request must carry (401 otherwise)
    seen: list[tuple[str, str | None]] = field(default_factory=list)  # (path, Authorization)

    def __post_init__(self) -> None:
        bmc = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                header = self.headers.get("Authorization")
                bmc.seen.append((self.path, header))
                route = bmc.routes.get(self.path)
                if bmc.auth and header != bmc.auth:
                    self.send_response(401)
                    self.end_headers()
                elif isinstance(route, tuple):
                    self.send_response(302)
                    self.send_header("Location", route[1])
                    self.end_headers()
                elif route is None:
                    self.send_response(404)
                    self.end_headers()
                else:
                    body = json.dumps(route).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer((self.host, 0), Handler)
        self.url = f"http://{self.host}:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> "FakeBmc":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
