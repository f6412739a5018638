"""Power during real runs: Redfish read during a tiny spark-transforms run, a BMC that stops answering
mid-run, the BMC password kept out of everything the run leaves, and bad input refused before the run."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from tests.cli.helpers import storbench
from tests.telemetry.redfish_server import needs_sushy, start_bmc

pytestmark = [pytest.mark.real, needs_sushy]  # the CLI as a child process, a real BMC
CANARY = "canary-Pw-7f3e91"  # the BMC password: must appear nowhere the run writes


def _run_dir(home: Path) -> Path:
    [run] = list((home / "runs").iterdir())
    return run


def _samples(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]


def _value(samples: list[dict], workload: str, metric: str, labels: dict | None = None) -> float | None:
    [value] = [
        s["value"]
        for s in samples
        if s["workload"] == workload and s["metric"] == metric and s.get("labels", {}) == (labels or {})
    ]
    return value


def _changing(bmc, values: list[float], period: float, stop: threading.Event) -> threading.Thread:
    def loop() -> None:
        k = 0
        while not stop.wait(period):
            k += 1
            bmc.set_watts(values[k % len(values)])

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    return thread


def _everything_written(home: Path) -> str:
    parts = []
    for path in home.rglob("*"):
        if path.is_file():
            parts.append(path.read_bytes().decode("latin-1"))
    db = home / "results.db"
    if db.exists():
        with sqlite3.connect(db) as conn:
            for (name,) in conn.execute("select name from sqlite_master where type='table'"):
                parts.append(repr(conn.execute(f"select * from {name}").fetchall()))
    return "\n".join(parts)


@pytest.mark.spark
def test_redfish_during_spark_transforms(tmp_path, monkeypatch):
    bmc = start_bmc(tmp_path)
    stop = threading.Event()
    served = [300.0, 420.0, 360.0]
    bmc.set_watts(served[0])
    home = tmp_path / "home"
    monkeypatch.setenv("STORBENCH_BMC_PASSWORD", CANARY)
    try:
        _changing(bmc, served, 0.7, stop)
        result = storbench(
            home,
            "run",
            "spark-transforms",
            "--scale",
            "200K",
            "--repeat",
            "1",
            "--idle-s",
            "2",
            "--power",
            f"redfish:{bmc.chassis},user=admin",
            "--power-insecure",
            timeout=900,
        )
    finally:
        stop.set()
        bmc.stop()
    assert result.returncode == 0, result.stderr
    run = _run_dir(home)
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["power"]["source"] == "redfish" and manifest["power"]["scope"] == "node-psu"
    assert manifest["power"]["gaps"] == [] and min(served) <= manifest["power"]["idle_w"] <= max(served)
    samples = _samples(run)
    seen = {float(line.split(",")[1]) for line in (run / "power.csv").read_text().splitlines()[1:]}
    assert seen == set(served)  # every reading is a value the BMC served, and its changes were followed
    for workload in ("groupby", "repartition", "join"):
        seconds = _value(samples, workload, "completion_time")
        energy, watts = _value(samples, workload, "energy_j"), _value(samples, workload, "avg_power_w")
        assert energy > 0 and min(served) <= watts <= max(served)
        assert energy == pytest.approx(watts * seconds, rel=1e-9)  # the same window as the time
        assert _value(samples, workload, "max_power_w") in served
        assert _value(samples, workload, "ops_per_watt") == pytest.approx(200_000 / seconds / watts, rel=1e-9)
        assert _value(samples, workload, "power_above_idle_w") == pytest.approx(watts - manifest["power"]["idle_w"])
    assert CANARY not in _everything_written(home) + result.stderr + result.stdout


def test_bmc_that_stops_answering_leaves_a_gap_and_the_run_goes_on(tmp_path, monkeypatch):
    bmc = start_bmc(tmp_path)
    home = tmp_path / "home"
    monkeypatch.setenv("STORBENCH_BMC_PASSWORD", CANARY)

    def kill_when_running() -> None:  # once the first fio workload is under way (its series has rows)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            series = list(home.glob("runs/*/power.csv")) or list(home.glob("runs/*/telemetry.csv"))
            if series and len(series[0].read_text().splitlines()) > 2:
                break
            time.sleep(0.2)
        time.sleep(1.0)
        bmc.stop()

    killer = threading.Thread(target=kill_when_running, daemon=True)
    killer.start()
    try:
        result = storbench(
            home,
            "run",
            "fio-002",
            "--scale",
            "tiny",
            "--set",
            "runtime_s=3",
            "--repeat",
            "1",
            "--power",
            f"redfish:{bmc.chassis},user=admin",
            "--power-insecure",
            "--interval",
            "0.5",
            timeout=300,
        )
    finally:
        killer.join(5)
        bmc.stop()
    assert result.returncode == 0, result.stderr
    run = _run_dir(home)
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "succeeded"
    gaps = manifest["power"]["gaps"]
    # the BMC stops between two reads (refused) or during one (it closes the connection it was answering on)
    lost = ("Connection refused", "Remote end closed connection", "Connection reset")
    assert len(gaps) == 1 and gaps[0]["to_s"] > gaps[0]["from_s"]
    assert any(kind in gaps[0]["error"] for kind in lost), gaps[0]["error"]
    energies = [s["value"] for s in _samples(run) if s["metric"] == "energy_j" and not s.get("labels")]
    assert energies[-1] is None  # the last window has no readings after it: n/a, never extrapolated
    report = (run / "report.md").read_text()
    assert "power (default): no reading from" in report
    assert "| Energy [scope: node PSU (Redfish)] | J |" in report and "| Power scope | node PSU (Redfish) |" in report
    assert CANARY not in _everything_written(home) + result.stderr + result.stdout


@pytest.mark.parametrize(
    "power, message",
    [
        ("wattmeter:usb0", "--power: unknown power source 'wattmeter'; allowed: rapl, ipmi, redfish, command"),
        (
            "redfish:https://127.0.0.1:{port}/redfish/v1/Chassis/1",
            "--power redfish: https://127.0.0.1:{port}: Connection refused",
        ),
        ("command:echo no-watts-here", "--power command: echo printed no number of watts: 'no-watts-here'"),
    ],
)
def test_bad_power_input_is_one_line_before_the_run(tmp_path, power, message):
    from tests.telemetry.exporters import free_port

    port = free_port("127.0.0.1")
    home = tmp_path / "home"
    result = storbench(home, "run", "fio-002", "--scale", "tiny", "--power", power.format(port=port), timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"storbench: error: {message.format(port=port)}"]
    assert not (home / "runs").exists() or not list((home / "runs").iterdir())
