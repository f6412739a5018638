"""IPMI power through one persistent ``ipmitool shell``: the real ipmitool, on its dummy interface, against a BMC
that answers DCMI power readings (tests/ipmi_dummy.py)."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pytest

from storbench.telemetry.power import ALLOWED, PowerSampler, open_power
from storbench.telemetry.power.base import parse_spec
from storbench.telemetry.power.ipmi import IpmiPower
from tests.ipmi_dummy import DummyBmc

pytestmark = [
    pytest.mark.real,  # the real ipmitool
    pytest.mark.skipif(shutil.which("ipmitool") is None, reason="Debian's ipmitool is not installed"),
]
CANARY = "ipmi-canary-5d21"


@pytest.fixture
def bmc(tmp_path, monkeypatch):
    bmc = DummyBmc(watts=231)
    bmc.wrapper(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    yield bmc
    bmc.stop()


def _lan(monkeypatch) -> IpmiPower:
    monkeypatch.setenv("BMC_PW", CANARY)
    return IpmiPower(parse_spec("ipmi:10.0.0.9,user=admin,password_env=BMC_PW", "--power", ALLOWED), timeout=5)


def test_one_session_serves_every_reading_of_a_sampler(bmc, monkeypatch):
    source = _lan(monkeypatch)
    sampler = PowerSampler(source, interval=0.05)
    sampler.start()
    deadline = time.monotonic() + 30
    while bmc.readings < 6 and time.monotonic() < deadline:
        time.sleep(0.05)
    bmc.watts = 250
    seen = bmc.readings
    while bmc.readings < seen + 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    process = source._shell.process
    sampler.stop()
    points = sampler.points()
    assert bmc.readings >= 9 and len(points) == bmc.readings and sampler.gaps() == []
    assert bmc.connections == 1  # one ipmitool for every reading
    assert {p.watts for p in points} == {231.0, 250.0} and points[-1].watts == 250.0  # the change was followed
    assert process.poll() is not None and source._shell is None  # stop() ended the session


def test_the_password_file_is_gone_once_the_session_answered_and_never_in_argv_or_environ(bmc, monkeypatch):
    source = _lan(monkeypatch)
    assert source.read().watts == 231.0
    pid = source._shell.process.pid
    argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    environ = Path(f"/proc/{pid}/environ").read_bytes()
    password_file = Path(argv[argv.index(b"-f") + 1].decode())
    assert argv[-2:] == [b"shell", b""] and CANARY.encode() not in b" ".join(argv) + environ
    assert not password_file.exists() and not password_file.parent.exists()  # removed; the session goes on
    assert source.read().watts == 231.0 and source._shell.process.pid == pid
    source.close()
    assert CANARY not in repr(source.describe())


def test_a_dropped_session_is_a_failed_reading_then_a_new_session(bmc, monkeypatch):
    source = _lan(monkeypatch)
    sampler = PowerSampler(source, interval=60)  # readings only when marked
    sampler.start()
    bmc.drop()  # the BMC ends the session (a reset, a session timeout)
    sampler.mark()
    bmc.watts = 240
    sampler.mark()
    sampler.stop()
    [gap] = sampler.gaps()
    # its next request goes to the closed interface: a write that kills it, or a read that fails (the BMC's thread
    # may be inside recv() when the socket closes)
    assert gap["error"] in (
        "ipmitool ended by SIGPIPE",
        "ipmitool printed no power reading: 'dummy failed on read(): : Connection reset by peer'",
    )
    assert [p.watts for p in sampler.points()] == [231.0, 240.0, 240.0]
    assert bmc.connections == 2


def test_check_reads_once_and_leaves_no_process(bmc, monkeypatch):
    monkeypatch.setenv("STORBENCH_BMC_PASSWORD", CANARY)
    power = open_power(
        "ipmi:10.0.0.9,user=admin", "nodes.yaml: nodes[0].power", 1.0, local=False, has_rapl=False, snapshots=list
    )
    assert power.info == {"source": "ipmi", "scope": "node-psu", "host": "10.0.0.9"}
    assert bmc.readings == 1 and power.sampler.source._shell is None


@pytest.mark.skipif(shutil.which("fio") is None, reason="no fio")
def test_a_run_on_ipmi_reads_through_one_session_and_says_its_scope(bmc, tmp_path, monkeypatch):
    from tests.cli.helpers import storbench

    home, target = tmp_path / "home", tmp_path / "target"
    target.mkdir()
    monkeypatch.setenv("STORBENCH_BMC_PASSWORD", CANARY)
    done = storbench(
        home,
        "run",
        "fio-002",
        "--scale",
        "tiny",
        "--target",
        str(target),
        "--set",
        "runtime_s=2",
        "--set",
        "size=8m",
        "--repeat",
        "1",
        "--interval",
        "0.5",
        "--power",
        "ipmi:10.0.0.9,user=admin",
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    run = next(home.glob("runs/*"))
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["power"]["source"] == "ipmi" and manifest["power"]["gaps"] == []
    samples = [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]
    watts = [s["value"] for s in samples if s["metric"] == "avg_power_w" and not s.get("labels")]
    assert watts and all(w == pytest.approx(231.0) for w in watts)
    assert bmc.connections == 2  # the check's session, then one for every reading of the run
    series = len((run / "power.csv").read_text().splitlines()) - 1  # its rows, the header aside
    assert bmc.readings == series + 1  # every reading of the series, and the check's
    report = (run / "report.md").read_text()
    assert (
        "| Energy [scope: node PSU (IPMI DCMI)] | J |" in report and "| Power scope | node PSU (IPMI DCMI) |" in report
    )
    assert "CPU package only" not in done.stderr + done.stdout
    assert CANARY not in report + json.dumps(manifest) + done.stderr + done.stdout
