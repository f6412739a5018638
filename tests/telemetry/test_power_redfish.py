"""Redfish against a real Redfish server (sushy-static) serving our mockup: readings as served, changes
followed, certificates checked by default."""

from __future__ import annotations

import subprocess

import pytest

from storbench.errors import InputError
from storbench.telemetry.power import open_power
from tests.telemetry.redfish_server import bmc, needs_sushy, start_bmc  # noqa: F401  (fixture)

pytestmark = needs_sushy


def _open(spec: str, **kwargs):
    return open_power(spec, "--power", 0.2, local=True, has_rapl=False, snapshots=list, **kwargs)


def test_power_resource_as_served_and_a_change_is_followed(bmc):
    power = _open(f"redfish:{bmc.chassis}")
    assert power.info["reads"] == "Power PowerControl[0].PowerConsumedWatts" and power.scope == "node-psu"
    source = power.sampler.source
    assert source.read().watts == 344.0
    bmc.set_watts(401.5)
    assert source.read().watts == 401.5


def test_the_bmc_url_alone_finds_its_first_chassis(bmc):
    assert _open(f"redfish:{bmc.url}").info["resource"] == "/redfish/v1/Chassis/1/Power"


def test_environment_metrics_of_newer_bmcs(bmc):
    power = _open(f"redfish:{bmc.url}/redfish/v1/Chassis/2")
    assert power.info["reads"] == "EnvironmentMetrics PowerWatts"
    assert power.sampler.source.read().watts == 187.5


def test_power_subsystem_sums_its_supplies_input(bmc):
    power = _open(f"redfish:{bmc.url}/redfish/v1/Chassis/3")
    assert power.info["reads"] == "PowerSubsystem PowerSupplies InputPowerWatts"
    assert power.sampler.source.read().watts == 212.0 + 198.5


def test_a_chassis_without_power_is_one_line(bmc):
    (bmc.root / "Chassis" / "1" / "index.json").write_text('{"Id": "1", "Name": "bare"}')
    with pytest.raises(
        InputError,
        match=r"^--power redfish: .*/Chassis/1 has no EnvironmentMetrics, Power or "
        r"PowerSubsystem$",
    ):
        _open(f"redfish:{bmc.chassis}")


def test_sampler_integrates_served_watts(bmc):
    power = _open(f"redfish:{bmc.chassis}")
    power.start()
    import time

    start = power.sampler.mark()
    time.sleep(0.6)
    bmc.set_watts(200)
    time.sleep(0.6)
    end = power.sampler.mark()
    power.stop()
    window = power.window(start, end)
    watts = {p.watts for p in power.points()}
    assert watts == {344.0, 200.0}
    assert window["max_power_w"] == 344.0 and 200.0 < window["avg_power_w"] < 344.0
    assert window["energy_j"] == pytest.approx(window["avg_power_w"] * (end - start))


@pytest.mark.real
def test_https_certificate_checked_by_default(tmp_path):
    cert, key = tmp_path / "bmc.crt", tmp_path / "bmc.key"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=127.0.0.1",
            "-addext",
            "subjectAltName=IP:127.0.0.1",
            "-keyout",
            str(key),
            "-out",
            str(cert),
        ],
        check=True,
        capture_output=True,
    )
    server = start_bmc(tmp_path, (cert, key))
    try:
        chassis = f"redfish:{server.chassis}"
        with pytest.raises(InputError, match=r"^--power redfish: .*CERTIFICATE_VERIFY_FAILED"):
            _open(chassis)
        assert _open(f"{chassis},ca={cert}").info["certificate_check"] is True
        insecure = _open(chassis, insecure=True)
        assert insecure.info["certificate_check"] is False and insecure.sampler.source.read().watts == 344.0
        assert _open(f"{chassis},insecure").sampler.source.read().watts == 344.0
    finally:
        server.stop()


def test_unreachable_bmc_is_one_line():
    from tests.telemetry.exporters import free_port

    port = free_port("127.0.0.1")
    with pytest.raises(InputError) as error:
        _open(f"redfish:https://127.0.0.1:{port}")
    assert str(error.value) == f"--power redfish: https://127.0.0.1:{port}: Connection refused"
