"""A real Redfish server for the power tests: sushy-static (PyPI sushy-tools) over a copy of our mockup.

sushy-static re-reads the mockup's files on every request, so a test changes the BMC's reading by
rewriting ``Power/index.json`` (:meth:`Bmc.set_watts`)."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.telemetry.exporters import free_port, stop_process

SUSHY = shutil.which("sushy-static") or str(Path(__import__("sys").executable).with_name("sushy-static"))
MOCKUP = Path(__file__).resolve().parents[1] / "data" / "power" / "redfish-mockup"
needs_sushy = pytest.mark.skipif(
    not Path(SUSHY).exists(), reason="sushy-tools is not installed (pip install -e '.[test]')"
)


@dataclass
class Bmc:
    proc: subprocess.Popen
    root: Path
    url: str  # http(s)://127.0.0.1:PORT

    @property
    def chassis(self) -> str:
        return f"{self.url}/redfish/v1/Chassis/1"

    def set_watts(self, watts: float) -> None:
        path = self.root / "Chassis" / "1" / "Power" / "index.json"
        data = json.loads(path.read_text())
        data["PowerControl"][0]["PowerConsumedWatts"] = watts
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(path)  # atomic: a request never sees half a file

    def stop(self) -> None:
        stop_process(self.proc)


def start_bmc(directory: Path, cert: tuple[Path, Path] | None = None) -> Bmc:
    root = directory / "mockup"
    shutil.copytree(MOCKUP, root)
    port = free_port("127.0.0.1")
    args = [SUSHY, "-i", "127.0.0.1", "-p", str(port), "-m", str(root)]
    if cert:
        args += ["-c", str(cert[0]), "-k", str(cert[1])]
    log = open(directory / "sushy.log", "wb")
    proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    bmc = Bmc(proc, root, f"{'https' if cert else 'http'}://127.0.0.1:{port}")
    import ssl

    context = ssl._create_unverified_context()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"sushy-static exited {proc.returncode}: {(directory / 'sushy.log').read_text()}")
        try:
            with urllib.request.urlopen(f"{bmc.url}/redfish/v1/", timeout=2, context=context):
                return bmc
        except OSError:
            time.sleep(0.2)
    bmc.stop()
    raise RuntimeError("sushy-static did not answer within 30 s")


@pytest.fixture
def bmc(tmp_path):
    server = start_bmc(tmp_path)
    try:
        yield server
    finally:
        server.stop()
